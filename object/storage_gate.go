package object

// The output gate's side in storage (rule L7): the writes of a turn are
// confirmed durable when the turn reaches a release point (its reply, an
// outgoing call, Sync); until then the runtime holds the output. When the
// runtime can make a write fail (a fault plan names the
// storage-write-fails fault) storage keeps a journal of the unconfirmed
// writes so that a failure can make them vanish; otherwise it keeps
// nothing and a write costs what it did.

import (
	"context"

	"github.com/dosim/dosim/internal/wire"
)

// WriteOption changes how one write (Put, Delete, PutMany, DeleteMany) is
// confirmed. The zero value changes nothing.
type WriteOption struct{ allowUnconfirmed bool }

// AllowUnconfirmed lets the turn's reply, and its outgoing calls, go
// before the write is durable, as the platform's allowUnconfirmed does
// (rule L7). If the write then fails, it is lost while the caller may
// already have seen success: use it only for writes that may be lost.
// Inside a transaction it has no effect: the commit is an ordinary write.
func AllowUnconfirmed() WriteOption { return WriteOption{allowUnconfirmed: true} }

// allows reports whether opts allow an unconfirmed write.
func allows(opts []WriteOption) bool {
	for _, o := range opts {
		if o.allowUnconfirmed {
			return true
		}
	}
	return false
}

// journal is a storage's list of unconfirmed writes (rule L7).
type journal struct {
	pending []pendingWrite
	current func() any
	sync    func(ctx context.Context) error
}

// pendingWrite is one unconfirmed write: the key, what it held before,
// who wrote it and whether it allowed an unconfirmed reply.
type pendingWrite struct {
	key   string
	old   any
	had   bool
	by    any
	allow bool
}

var _ wire.Journal = storageJournal{}

// note journals a write of key on s, the outermost storage, before it is
// made. A write outside any turn is durable at once.
func (j *journal) note(s *Storage, key string, allow bool) {
	by := j.current()
	if by == nil {
		return
	}
	old, had := s.data[key]
	j.pending = append(j.pending, pendingWrite{key: key, old: old, had: had, by: by, allow: allow})
}

// Pending implements wire.Journal.
func (j *journal) Pending() (int, bool) {
	for _, w := range j.pending {
		if !w.allow {
			return len(j.pending), true
		}
	}
	return len(j.pending), false
}

// Confirm implements wire.Journal.
func (j *journal) Confirm() {
	clear(j.pending)
	j.pending = j.pending[:0]
}

// lose is Lose on the storage s that owns j.
func (j *journal) lose(s *Storage) []any {
	by := make([]any, 0, len(j.pending))
	p := j.pending
	s.j = nil // the restoring writes below are not journaled
	defer func() { s.j = j }()
	for i := len(p) - 1; i >= 0; i-- {
		w := p[i]
		if w.had {
			s.set(w.key, w.old)
		} else {
			s.del(w.key)
		}
		by = append(by, w.by)
	}
	j.pending = p[:0]
	clear(p)
	return by
}

// storageJournal is the wire.Journal of one storage.
type storageJournal struct{ s *Storage }

func (sj storageJournal) Pending() (int, bool) { return sj.s.j.Pending() }
func (sj storageJournal) Confirm()             { sj.s.j.Confirm() }
func (sj storageJournal) Lose() []any          { return sj.s.j.lose(sj.s) }

func init() {
	wire.StartJournal = func(storage any, current func() any, sync func(ctx context.Context) error) wire.Journal {
		s := storage.(*Storage)
		s.j = &journal{current: current, sync: sync}
		return storageJournal{s}
	}
	wire.JournalOf = func(storage any) wire.Journal {
		s := storage.(*Storage)
		if s.j == nil {
			return nil
		}
		return storageJournal{s}
	}
}

// Sync waits until every write made so far is durable (rule L7): a
// release point of the turn, as its reply is, that also waits for writes
// made with AllowUnconfirmed. If a write fails (the storage-write-fails
// fault), the unconfirmed writes are lost, the object is reset and Sync
// returns an error wrapping ErrStorage. Without a runtime that can fail
// writes, every write is durable at once and Sync returns nil.
func (s *Storage) Sync(ctx context.Context) error {
	if err := s.live("Sync"); err != nil {
		return err
	}
	for s.txn != nil {
		s = s.parent
	}
	if s.j == nil || s.j.sync == nil {
		return nil
	}
	return s.j.sync(ctx)
}
