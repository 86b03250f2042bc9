package object

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/clone"
)

// ErrStorage is wrapped by every error Storage returns for bad input.
var ErrStorage = errors.New("storage")

// Storage is an object's durable, transactional key-value store (rule O4).
// Values are copied in and out: changing a value after Put, or the value
// Get filled in, never changes what is stored. Operations never yield: no
// other request of the object runs during one.
//
// The ctx parameters are accepted for symmetry with the real runtime's
// asynchronous API; Storage itself never blocks.
type Storage struct {
	data map[string]any
	// In a transaction: the storage it commits to, and its pending writes
	// (a nil entry deletes the key).
	parent *Storage
	writes map[string]*any
	done   bool
	// revoked, when set, refuses every operation: the handle of a stale
	// instance (rule L4, see State.Storage).
	revoked error
}

// NewStorage returns an empty storage, for tests of an object's code
// without a runtime. The runtime makes one per object.
func NewStorage() *Storage { return &Storage{data: map[string]any{}} }

func checkKey(op, key string) error {
	if key == "" {
		return fmt.Errorf("%w: %s: key must not be empty", ErrStorage, op)
	}
	return nil
}

func (s *Storage) live(op string) error {
	if s.revoked != nil {
		return fmt.Errorf("%w: %s: %w", ErrStorage, op, s.revoked)
	}
	if s.done {
		return fmt.Errorf("%w: %s: transaction already finished", ErrStorage, op)
	}
	return nil
}

// lookup finds the stored value for key through the transaction chain.
func (s *Storage) lookup(key string) (any, bool) {
	for st := s; st != nil; st = st.parent {
		if st.writes != nil {
			if w, ok := st.writes[key]; ok {
				if w == nil {
					return nil, false
				}
				return *w, true
			}
			continue
		}
		v, ok := st.data[key]
		return v, ok
	}
	return nil, false
}

// Get copies the value stored under key into dst, a non-nil pointer, and
// reports whether the key was present. The value keeps its Go type: an int
// put is an int got; compatible types convert (an int into an *int64).
func (s *Storage) Get(ctx context.Context, key string, dst any) (bool, error) {
	if err := s.live("Get"); err != nil {
		return false, err
	}
	if err := checkKey("Get", key); err != nil {
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

// Put stores a copy of value under key. Only plain data can be stored:
// a func, channel or reader anywhere inside value is an error.
func (s *Storage) Put(ctx context.Context, key string, value any) error {
	if err := s.live("Put"); err != nil {
		return err
	}
	if err := checkKey("Put", key); err != nil {
		return err
	}
	cp, _, err := clone.Copy(value, nil)
	if err != nil {
		return fmt.Errorf("%w: Put %q: %w", ErrStorage, key, err)
	}
	if s.writes != nil {
		s.writes[key] = &cp
		return nil
	}
	s.data[key] = cp
	return nil
}

// Delete removes key and reports whether it was present.
func (s *Storage) Delete(ctx context.Context, key string) (bool, error) {
	if err := s.live("Delete"); err != nil {
		return false, err
	}
	if err := checkKey("Delete", key); err != nil {
		return false, err
	}
	_, ok := s.lookup(key)
	if s.writes != nil {
		s.writes[key] = nil
		return ok, nil
	}
	delete(s.data, key)
	return ok, nil
}

// ListOptions selects and orders the entries List returns. Zero fields
// select everything.
type ListOptions struct {
	Prefix  string // only keys starting with Prefix
	Start   string // only keys >= Start
	End     string // only keys < End (when not empty)
	Reverse bool   // descending key order
	Limit   int    // at most Limit entries (0: no limit)
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

// List returns the entries selected by opts, ordered by key bytes.
func (s *Storage) List(ctx context.Context, opts ListOptions) ([]Entry, error) {
	if err := s.live("List"); err != nil {
		return nil, err
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("%w: List: Limit is %d, must be >= 0 (0 means no limit)", ErrStorage, opts.Limit)
	}
	if opts.End != "" && opts.Start > opts.End {
		return nil, fmt.Errorf("%w: List: Start %q is after End %q", ErrStorage, opts.Start, opts.End)
	}
	view := s.flatten()
	keys := make([]string, 0, len(view))
	for k := range view {
		if !strings.HasPrefix(k, opts.Prefix) || k < opts.Start || (opts.End != "" && k >= opts.End) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if opts.Reverse {
		slices.Reverse(keys)
	}
	if opts.Limit > 0 && len(keys) > opts.Limit {
		keys = keys[:opts.Limit]
	}
	out := make([]Entry, len(keys))
	for i, k := range keys {
		out[i] = Entry{Key: k, value: view[k]}
	}
	return out, nil
}

// flatten returns the visible key-value view through the transaction chain.
func (s *Storage) flatten() map[string]any {
	if s.writes == nil {
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
func (s *Storage) Transaction(ctx context.Context, fn func(ctx context.Context, tx *Storage) error) error {
	if err := s.live("Transaction"); err != nil {
		return err
	}
	tx := &Storage{parent: s, writes: map[string]*any{}}
	defer func() { tx.done = true }()
	if err := fn(ctx, tx); err != nil {
		return err
	}
	for k, w := range tx.writes {
		switch {
		case s.writes != nil:
			s.writes[k] = w
		case w == nil:
			delete(s.data, k)
		default:
			s.data[k] = *w
		}
	}
	return nil
}

// Snapshot returns a copy of every stored key and value, for assertions in
// tests and for the idempotency verifier.
func (s *Storage) Snapshot() map[string]any {
	view := s.flatten()
	out := make(map[string]any, len(view))
	for k, v := range view {
		out[k], _, _ = clone.Copy(v, nil)
	}
	return out
}

// Restore replaces the whole content with a copy of snap.
func (s *Storage) Restore(snap map[string]any) error {
	if s.writes != nil {
		return fmt.Errorf("%w: Restore: not allowed inside a transaction", ErrStorage)
	}
	data := make(map[string]any, len(snap))
	for k, v := range snap {
		cp, _, err := clone.Copy(v, nil)
		if err != nil {
			return fmt.Errorf("%w: Restore %q: %w", ErrStorage, k, err)
		}
		data[k] = cp
	}
	s.data = data
	return nil
}

// Len returns the number of stored keys.
func (s *Storage) Len() int { return len(s.flatten()) }
