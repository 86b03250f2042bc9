package object

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// State is what the runtime gives an object instance: its id, its durable
// storage and the virtual clock. It is passed to the namespace's
// constructor; keep it in a field.
type State struct {
	id      ID
	storage *Storage
	host    Host
	// reset, once set, is why this State's instance is stale: the object
	// was reset or evicted and a new instance (with a new State) serves it.
	// Its Storage then refuses every operation (rule L4).
	reset error
}

// ErrInstanceReset is wrapped by the error a stale instance gets from its
// storage: the object was reset while a request still ran on the instance
// (rule L4), so the instance may no longer read or write; a new instance
// serves the object. The error also wraps ErrStorage.
var ErrInstanceReset = errors.New("this object instance was reset")

// ID returns the object's id.
func (s *State) ID() ID { return s.id }

// Storage returns the object's durable storage. It survives a reset of the
// instance (in-memory fields do not). Once the instance is stale (the
// object was reset while it still ran, rule L4) it returns a handle whose
// every operation fails with an error wrapping ErrInstanceReset and
// ErrStorage, and writes nothing: call Storage() at each use rather than
// keeping its result in a field, so that the check applies.
func (s *State) Storage() *Storage {
	if s.reset != nil {
		return &Storage{revoked: s.reset}
	}
	return s.storage
}

// SQL returns the object's SQL database, created on first use (rule Q1):
// see SQL. Like Storage, it survives resets and eviction; once the
// instance is stale (rule L4) it returns a handle whose every operation
// fails with an error wrapping ErrInstanceReset and ErrSQL. A
// key-value-backed object (KeyValueBacked, runtime.KeyValueBacked) has no
// SQL: every operation of the handle fails with an error wrapping
// ErrNotSQLiteBacked and ErrSQL, as ctx.storage.sql throws on the
// platform.
func (s *State) SQL() *SQL {
	if s.reset != nil {
		return &SQL{revoked: s.reset}
	}
	if s.storage.kv {
		return &SQL{revoked: ErrNotSQLiteBacked}
	}
	return s.storage.sqlDB(s.host)
}

// Sleep waits d of virtual time. While it sleeps, other requests queued for
// this object may run (rule O3). It returns the context's error if ctx is
// cancelled first.
func (s *State) Sleep(ctx context.Context, d time.Duration) error { return s.host.Sleep(ctx, d) }

// BlockConcurrencyWhile runs fn with the object's input gate closed until
// fn returns (rule L6): no other request, alarm or task of the object
// runs meanwhile, even while fn sleeps or awaits a call (the other events
// queue at the gate). It returns fn's error. An error or a panic from fn
// resets the object, as the platform does when blockConcurrencyWhile's
// callback throws: the instance is dropped, the request running it fails
// with the reset error (DurableObjectReset, not retried) whose message is
// fn's error's, as the platform passes the callback's error on; queued
// ones fail with the same error (flagged reset, not retried: their methods
// never run, as on the platform, real workerd 1.20261117.1), and the
// trace names the reason
// "block-concurrency-failed". A panic comes back as an error. fn may run
// for 30 s of virtual time: past that the platform cancels it and resets
// the object, and so does dosim (its waits end with an error; the
// caller's error, flagged DurableObjectReset and Overloaded, says "A
// call to blockConcurrencyWhile() in a Durable Object waited for too
// long. The call was canceled and the Durable Object was reset.", real
// workerd 1.20261117.1).
func (s *State) BlockConcurrencyWhile(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("BlockConcurrencyWhile: fn panicked: %v", p)
		}
		if err != nil && s.reset == nil {
			s.host.ResetAfterBlock(err)
		}
	}()
	return s.host.BlockConcurrency(ctx, fn)
}

// Abort resets the object, as the platform's ctx.abort(reason) does
// (rule L3): the instance is dropped (its in-memory fields are lost, the
// next request builds a new one; storage, the alarm and tasks stay), the
// writes not yet confirmed durable are lost (rule L7: dosim keeps them
// only while a fault plan can fail a write; otherwise every write is
// durable when made), and the request running on the instance fails at
// once: its caller gets a *stub.Error flagged DurableObjectReset, neither
// Remote nor Retryable, whose message is reason, or the platform's
// "Application called abort() to reset Durable Object." when reason is
// empty. The trace names the reset's reason "abort".
//
// The platform's abort throws; Abort returns, but the instance is stale
// from then on (rule L4): Storage and SQL refuse every operation, with an
// error wrapping ErrInstanceReset, and what the method returns reaches
// nobody. Return at once. On an instance already stale Abort does
// nothing.
func (s *State) Abort(reason string) {
	if s.reset != nil {
		return
	}
	s.host.Abort(reason)
}

// Now returns the virtual wall clock.
func (s *State) Now() time.Time { return s.host.Now() }

// Effect records a side effect that leaves the object (an email sent, a card
// charged) in the runtime's trace, so that a method that does it twice is
// visible even when its storage looks the same. The payload is copied.
func (s *State) Effect(ctx context.Context, kind string, payload any) error {
	return s.host.Effect(ctx, kind, payload)
}
