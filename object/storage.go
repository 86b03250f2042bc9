package object

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/turn"
)

// ErrStorage is wrapped by every error Storage returns for bad input.
var ErrStorage = errors.New("storage")

// ErrNotPlainData is wrapped by the error for a value that cannot be
// copied where values are copied (rules O4, O5): into storage, into a
// call's arguments or result, an effect's payload, a task's payload. Plain
// data is bools, numbers, strings, time.Time, and slices, arrays, maps,
// structs, pointers and interfaces made of them, with no cycle and nested
// at most clone.MaxDepth deep. Not plain data: funcs, channels, unsafe
// pointers, operating-system handles (*os.File, network connections, which
// implement syscall.Conn), a value that contains itself. The error names
// the path to the value: "value.Items[3].Next is value.Items[3] again".
var ErrNotPlainData = clone.ErrNotCopyable

// Storage is an object's durable, transactional key-value store (rule O4).
// Values are copied in and out: changing a value after Put, or the value
// Get filled in, never changes what is stored. Operations never yield: no
// other request of the object runs during one.
//
// Keys are at most MaxKeyBytes long (the empty key is a key) and values
// at most MaxValueBytes serialised, as MaxValueBytes defines a Go value's
// serialised size; errors are worded as the platform words them. GetMany, PutMany and DeleteMany name up to MaxKeysPerCall
// keys and each is atomic; List pages in O(Limit + log n) (rule L8).
//
// The ctx parameters are accepted for symmetry with the real runtime's
// asynchronous API; Storage itself never blocks.
type Storage struct {
	data map[string]any
	// idx orders data's keys for List. It is built by the first List and
	// kept up to date from then on, so storage that is never listed pays
	// nothing for it. Only the outermost storage (not a transaction) has one.
	idx *keyIndex
	// *txn is set in a transaction, which has neither data nor idx. (One
	// pointer for both keeps an idle object's storage small.)
	*txn
	// revoked, when set, refuses every operation: the handle of a stale
	// instance (rule L4, see State.Storage).
	revoked error
	// j keeps the writes not yet confirmed durable (rule L7), only when the
	// runtime can make a write fail; nil otherwise, and in a transaction.
	j *journal
	// sql is the object's SQL database (sql.go); nil until State.SQL.
	sql *SQL
	// onWrite, when set, is told of every write at the top level
	// (NotifyWrites).
	onWrite func()
	// gen counts the changes of what the storage holds, at the top level:
	// every write, a DeleteAll, a Restore, writes taken back
	// (Hosting.Generation); connReads the SQL statements run that may read
	// the connection's own counts (Hosting.ConnectionReads).
	gen, connReads uint64
	// host keeps the object's alarm, which is storage's (storage_alarm.go);
	// nil for a storage of no object and in a transaction.
	host Host
	// kv is set for a key-value-backed object's storage (Backend), and in
	// its transactions.
	kv bool
}

// NotifyWrites makes the storage call fn before each write it takes at
// its top level: a Put, Delete or the commit of a Transaction (not each
// write inside one), and an SQL statement that writes. The runtime uses
// it to notice writes made outside the object's own turns (a test
// writing storage between calls), which a replay of those turns cannot
// account for. A nil fn stops it.
func (s *Storage) NotifyWrites(fn func()) { s.onWrite = fn }

// txn is a transaction's state: the storage it commits to, its pending
// writes (a nil entry deletes the key), whether it has finished, and
// whether it empties the SQL database (DeleteAll).
type txn struct {
	parent *Storage
	writes map[string]*any
	done   bool
	// dropSQL is set by DeleteAll: the commit empties the SQL database.
	dropSQL bool
	// alarm is the transaction's pending change of the alarm (SetAlarm,
	// DeleteAlarm, DeleteAll), nil for none.
	alarm *alarmOp
}

// NewStorage returns an empty storage, for tests of an object's code
// without a runtime. The runtime makes one per object.
func NewStorage() *Storage { return &Storage{data: map[string]any{}} }

// shortKey quotes key for an error message, cut after 40 bytes.
func shortKey(key string) string {
	if len(key) <= 40 {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q...", key[:40])
}

// set writes key = v at this level: into the transaction's pending
// writes, or into the data and its index.
func (s *Storage) set(key string, v any) { s.setAs(key, v, false) }

// setAs is set for a write that allows unconfirmed (rule L7) or not.
func (s *Storage) setAs(key string, v any, allow bool) {
	if s.txn != nil {
		w := v // only a transaction's write needs v on the heap
		s.writes[key] = &w
		return
	}
	if s.j != nil {
		s.j.note(s, key, allow)
	}
	s.gen++
	if s.onWrite != nil {
		s.onWrite()
	}
	if s.idx != nil {
		if _, ok := s.data[key]; !ok {
			s.idx.insert(key)
		}
	}
	s.data[key] = v
}

// del deletes key at this level, as set writes it.
func (s *Storage) del(key string) { s.delAs(key, false) }

// delAs is del for a write that allows unconfirmed (rule L7) or not.
func (s *Storage) delAs(key string, allow bool) {
	if s.txn != nil {
		s.writes[key] = nil
		return
	}
	if s.j != nil {
		s.j.note(s, key, allow)
	}
	s.gen++
	if s.onWrite != nil {
		s.onWrite()
	}
	if s.idx != nil {
		if _, ok := s.data[key]; ok {
			s.idx.remove(key)
		}
	}
	delete(s.data, key)
}

// copyValue copies value for storing under key.
func copyValue(op, key string, value any) (any, error) {
	cp, _, err := clone.Copy(value, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %w", ErrStorage, op, key, whyNotData(value, err))
	}
	return cp, nil
}

func (s *Storage) live(op string) error {
	if s.revoked != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, op, s.revoked)
	}
	if s.txn != nil && s.done {
		return fmt.Errorf("%w: %s: transaction already finished", ErrStorage, op)
	}
	return nil
}

// lookup finds the stored value for key through the transaction chain.
func (s *Storage) lookup(key string) (any, bool) {
	st := s
	for ; st.txn != nil; st = st.parent {
		if w, ok := st.writes[key]; ok {
			if w == nil {
				return nil, false
			}
			return *w, true
		}
	}
	v, ok := st.data[key]
	return v, ok
}

// Get copies the value stored under key into dst, a non-nil pointer, and
// reports whether the key was present. The value keeps its Go type: an int
// put is an int got; compatible types convert (an int into an *int64).
func (s *Storage) Get(ctx context.Context, key string, dst any) (bool, error) {
	if err := s.live("Get"); err != nil {
		return false, err
	}
	if err := s.checkKey("Get", key); err != nil {
		return false, err
	}
	v, ok := s.lookup(key)
	if !ok {
		return false, nil
	}
	if err := clone.Into(dst, v); err != nil {
		return true, fmt.Errorf("%w: Get %q: %w", ErrStorage, key, err)
	}
	return true, nil
}

// GetAs returns the value stored under key as a T and reports whether the
// key was present: Get without the pointer. A value of T's own immutable
// type (an int put, an int got; a string; a time) comes back as it is,
// with no allocation; any other is copied and converted as Get converts.
func GetAs[T any](ctx context.Context, s *Storage, key string) (T, bool, error) {
	var zero T
	if err := s.live("Get"); err != nil {
		return zero, false, err
	}
	if err := s.checkKey("Get", key); err != nil {
		return zero, false, err
	}
	v, ok := s.lookup(key)
	if !ok {
		return zero, false, nil
	}
	if t, same := v.(T); same && clone.Immutable(v) {
		return t, true, nil
	}
	var out T
	if err := clone.Into(&out, v); err != nil {
		return zero, true, fmt.Errorf("%w: Get %q: %w", ErrStorage, key, err)
	}
	return out, true, nil
}

// Put stores a copy of value under key. Only plain data can be stored:
// a func, channel or reader anywhere inside value is an error, and so is
// a key over MaxKeyBytes or a value over MaxValueBytes serialised.
// AllowUnconfirmed among opts lets the turn's reply go before the write
// is durable (rule L7).
func (s *Storage) Put(ctx context.Context, key string, value any, opts ...WriteOption) error {
	if err := s.live("Put"); err != nil {
		return err
	}
	if err := s.checkKey("Put", key); err != nil {
		return err
	}
	cp, err := s.copyIn("Put", key, value)
	if err != nil {
		return err
	}
	s.setAs(key, cp, allows(opts))
	return nil
}

// Delete removes key and reports whether it was present. AllowUnconfirmed
// among opts lets the turn's reply go before the delete is durable (rule L7).
func (s *Storage) Delete(ctx context.Context, key string, opts ...WriteOption) (bool, error) {
	if err := s.live("Delete"); err != nil {
		return false, err
	}
	if err := s.checkKey("Delete", key); err != nil {
		return false, err
	}
	_, ok := s.lookup(key)
	s.delAs(key, allows(opts))
	return ok, nil
}

// ListOptions selects and orders the entries List returns. Zero fields
// select everything: an empty End, Start or StartAfter is no bound, and a
// zero Limit is no limit. Start and StartAfter are not both set (the
// platform refuses it), and a negative Limit is refused as the platform
// refuses a non-positive one (ParseListOptions, for options written as
// the platform's, refuses 0 too).
type ListOptions struct {
	Prefix     string // only keys starting with Prefix
	Start      string // only keys >= Start
	StartAfter string // only keys > StartAfter (when not empty)
	End        string // only keys < End (when not empty)
	Reverse    bool   // descending key order
	Limit      int    // at most Limit entries (0: no limit)
}

// Entry is one key and its stored value, as List returns them.
type Entry struct {
	Key   string
	value any
}

// Decode copies the entry's value into dst, as Storage.Get does.
func (e Entry) Decode(dst any) error { return clone.Into(dst, e.value) }

// Value returns a copy of the entry's value in its stored Go type.
func (e Entry) Value() any {
	v, _, _ := clone.Copy(e.value, nil)
	return v
}

// List returns the entries selected by opts, ordered by key bytes; a
// Start after End selects nothing, as on the platform. It
// seeks to the first entry and reads only the entries it returns: a page
// costs O(Limit + log n) for n stored keys (rule L8), plus, inside a
// transaction, sorting the transaction's own pending writes.
func (s *Storage) List(ctx context.Context, opts ListOptions) ([]Entry, error) {
	if err := s.live("List"); err != nil {
		return nil, err
	}
	if opts.Start != "" && opts.StartAfter != "" {
		return nil, fmt.Errorf("%w: List: %s", ErrStorage, msgStartAndStartAfter)
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("%w: List: %s", ErrStorage, msgLimit)
	}
	return s.list(opts), nil
}

// flatten returns the visible key-value view through the transaction chain.
func (s *Storage) flatten() map[string]any {
	if s.txn == nil {
		return s.data
	}
	view := maps.Clone(s.parent.flatten())
	for k, w := range s.writes {
		if w == nil {
			delete(view, k)
		} else {
			view[k] = *w
		}
	}
	return view
}

// Transaction runs fn with a transactional view of the storage: its writes
// are applied all together if fn returns nil, and none of them if fn
// returns an error or panics. The error fn returned is returned.
//
// A transaction is one storage operation: the object's input gate stays
// closed until fn returns (rule L6), even while fn sleeps or awaits a
// call, so no other request of the object runs in the middle of it and
// none sees or overwrites its view. Its writes are confirmed (rule L7)
// as ordinary writes when it commits.
func (s *Storage) Transaction(ctx context.Context, fn func(ctx context.Context, tx *Storage) error) error {
	if err := s.live("Transaction"); err != nil {
		return err
	}
	tx := &Storage{txn: &txn{parent: s, writes: map[string]*any{}}, kv: s.kv}
	defer func() { tx.done = true }()
	if err := turn.HoldGate(ctx, func() error { return fn(ctx, tx) }); err != nil {
		return err
	}
	switch {
	case !tx.dropSQL:
	case s.txn != nil:
		s.dropSQL = true
	case s.sql != nil:
		s.gen++
		if err := s.sql.dropAll(); err != nil {
			return err
		}
	}
	for k, w := range tx.writes {
		switch {
		case s.txn != nil:
			s.writes[k] = w
		case w == nil:
			s.del(k)
		default:
			s.set(k, *w)
		}
	}
	s.commitAlarm(tx.alarm)
	return nil
}

// Snapshot returns a copy of every stored key and value, for assertions in
// tests and for the idempotency verifier.
func (s *Storage) Snapshot() map[string]any {
	out := s.snapshotKV()
	s.snapshotSQL(out, false, false)
	return out
}

// snapshotKV copies every stored key and value.
func (s *Storage) snapshotKV() map[string]any {
	view := s.flatten()
	out := make(map[string]any, len(view))
	for k, v := range view {
		out[k], _, _ = clone.Copy(v, nil)
	}
	return out
}

// Restore replaces the whole content with a copy of snap.
func (s *Storage) Restore(snap map[string]any) error {
	if s.txn != nil {
		return fmt.Errorf("%w: Restore: not allowed inside a transaction", ErrStorage)
	}
	s.gen++
	if err := s.restoreSQL(snap); err != nil {
		return err
	}
	data := make(map[string]any, len(snap))
	for k, v := range snap {
		if isSQLKey(k) {
			continue
		}
		cp, _, err := clone.Copy(v, nil)
		if err != nil {
			return fmt.Errorf("%w: Restore %q: %w", ErrStorage, k, err)
		}
		data[k] = cp
	}
	s.data = data
	s.idx = nil // rebuilt by the next List
	if s.j != nil {
		s.j.pending = s.j.pending[:0] // restored content is durable as it is
	}
	return nil
}

// Len returns the number of stored keys.
func (s *Storage) Len() int { return len(s.flatten()) }

// HasSQL reports whether the storage holds an SQL database (State.SQL was
// used), whose tables Snapshot writes beside the keys.
func (s *Storage) HasSQL() bool {
	for s.txn != nil {
		s = s.parent
	}
	return s.sql != nil
}
