package object

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReservedPrefix starts the storage keys where dosim keeps its own records
// of an object: package agent's scheduled and queued tasks, dead letters
// and task counter (rule A6), and the SQL database's snapshot. They appear
// in List and Snapshot; do not write them.
const ReservedPrefix = "__dosim/"

// checkKeys checks a multi-key call's keys: each a valid key, and, in a
// key-value-backed object, at most MaxKeysPerCall of them (a
// SQLite-backed object's get takes any number: real workerd 1.20261117.1
// under localDisk storage returns 129 entries).
func (s *Storage) checkKeys(op string, keys []string) error {
	if s.kv {
		if err := checkCount(op, len(keys)); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if err := s.checkKey(op, k); err != nil {
			return err
		}
	}
	return nil
}

// checkCount refuses more than MaxKeysPerCall keys in one call, with the
// platform's message.
func checkCount(op string, n int) error {
	if n > MaxKeysPerCall {
		msg := fmt.Sprintf("Maximum number of key value pairs is %d. %d pairs were provided.", MaxKeysPerCall, n)
		return fmt.Errorf("%w: %s: %s", ErrStorage, op, msg)
	}
	return nil
}

// GetMany returns the entries stored under keys, by key; a key that is not
// stored has no entry. Decode an entry's value as List's entries are
// decoded. A key-value-backed object's GetMany takes at most
// MaxKeysPerCall keys (rule L8); with a bad key or too many keys, GetMany
// returns an error and no entries.
func (s *Storage) GetMany(ctx context.Context, keys []string) (map[string]Entry, error) {
	if err := s.live("GetMany"); err != nil {
		return nil, err
	}
	if err := s.checkKeys("GetMany", keys); err != nil {
		return nil, err
	}
	out := make(map[string]Entry, len(keys))
	for _, k := range keys {
		if v, ok := s.lookup(k); ok {
			out[k] = Entry{Key: k, value: v}
		}
	}
	return out, nil
}

// PutMany stores a copy of each value under its key, all of them or, when
// one key or value is refused (as Put refuses it), none of them (rule L8).
// It takes any number of entries: the platform limits get() to
// MaxKeysPerCall keys, not put() (real workerd 1.20261117.1). Entries are checked in
// key order, so the error names the first bad key by key order.
// AllowUnconfirmed among opts applies to every entry (rule L7).
func (s *Storage) PutMany(ctx context.Context, entries map[string]any, opts ...WriteOption) error {
	if err := s.live("PutMany"); err != nil {
		return err
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	copies := make([]any, len(keys))
	for i, k := range keys {
		if err := s.checkKey("PutMany", k); err != nil {
			return err
		}
		cp, err := s.copyIn("PutMany", k, entries[k])
		if err != nil {
			return err
		}
		copies[i] = cp
	}
	allow := allows(opts)
	for i, k := range keys {
		s.setAs(k, copies[i], allow)
	}
	return nil
}

// DeleteMany removes keys and returns how many of them were stored (a key
// named twice counts once). With a bad key it removes none (rule L8). It
// takes any number of keys, as the platform's delete() does (real workerd
// 1.20261117.1). AllowUnconfirmed among opts applies to
// every key (rule L7).
func (s *Storage) DeleteMany(ctx context.Context, keys []string, opts ...WriteOption) (int, error) {
	if err := s.live("DeleteMany"); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := s.checkKey("DeleteMany", k); err != nil {
			return 0, err
		}
	}
	n, allow := 0, allows(opts)
	for _, k := range keys {
		if _, ok := s.lookup(k); ok {
			n++
			s.delAs(k, allow)
		}
	}
	return n, nil
}

// DeleteAll removes every key except the runtime's own, those under
// ReservedPrefix: as on the platform, where deleteAll leaves the alarm
// alone, the object's scheduled and queued tasks and dead letters stay
// (cancel them to remove them) and so does its alarm (rule L8). It also
// empties the SQL database, if the object has one: every table, index,
// view and trigger is dropped, as the platform's deleteAll does; the keys
// and the SQL go together or, if dropping fails, neither goes. Inside a
// transaction both go when the transaction commits (so SQL written
// through State.SQL inside the transaction's function, which is not part
// of the transaction, goes too). Under the output gate (rule L7) it is
// confirmed, or lost, with the turn's other writes.
func (s *Storage) DeleteAll(ctx context.Context) error {
	if err := s.live("DeleteAll"); err != nil {
		return err
	}
	if s.txn != nil {
		s.dropSQL = true
		s.txn.alarm = &alarmOp{} // deleteAll deletes the alarm too (rule L8)
	} else {
		s.gen++
		if s.sql != nil {
			if err := s.sql.dropAll(); err != nil {
				return err
			}
		}
		if s.host != nil {
			s.host.SetAlarm(time.Time{}, false) // deleteAll deletes the alarm too (rule L8)
		}
	}
	if s.txn == nil && s.j != nil {
		for k := range s.data {
			if !strings.HasPrefix(k, ReservedPrefix) {
				s.del(k) // journaled one by one, so that a failed write restores them
			}
		}
		return nil
	}
	if s.txn == nil {
		kept := map[string]any{}
		for k, v := range s.data {
			if strings.HasPrefix(k, ReservedPrefix) {
				kept[k] = v
			}
		}
		s.data = kept
		s.idx = nil // rebuilt by the next List
		return nil
	}
	for k := range s.flatten() {
		if !strings.HasPrefix(k, ReservedPrefix) {
			s.writes[k] = nil
		}
	}
	return nil
}
