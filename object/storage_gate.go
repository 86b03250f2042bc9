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
	"fmt"
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
	lost    func()
}

// lostSQL fails the pending writes: SQLite undid the SQL ones (a
// statement's ON CONFLICT ROLLBACK ended the turn's savepoint), so every
// pending write is lost, as when a write fails (the runtime's strike).
func (j *journal) lostSQL() {
	if j.lost != nil {
		j.lost()
	}
}

// pendingWrite is one unconfirmed write: the key, what it held before,
// who wrote it and whether it allowed an unconfirmed reply. A write to
// the SQL database (sql set) has no key: the SQL database's turn
// savepoint holds what it changed. A write of what the runtime keeps
// beside storage (the alarm) has undo, which puts it back.
type pendingWrite struct {
	key   string
	old   any
	had   bool
	by    any
	allow bool
	sql   bool
	undo  func()
}

var _ Journal = storageJournal{}

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

// noteSQL journals a write to the SQL database, made by the turn by
// inside the database's turn savepoint (SQL.openTurn). SQL writes never
// allow an unconfirmed reply: AllowUnconfirmed is for key-value writes only.
func (j *journal) noteSQL(by any) {
	j.pending = append(j.pending, pendingWrite{by: by, sql: true})
}

// openTurn readies a write to the database by the running turn (rule
// L7): with a journal and inside a turn, it opens the savepoint that
// holds the writes not yet confirmed, if it is not open, and returns the
// turn; otherwise nil (the write is durable at once). The savepoint is
// released where the key-value writes are confirmed and rolled back
// where they are lost (endTurn), so a turn's SQL and key-value writes are
// confirmed together (rule Q2).
func (db *SQL) openTurn() (any, error) {
	if db.root == nil || db.root.j == nil {
		return nil, nil
	}
	by := db.root.j.current()
	if by == nil || db.turn {
		return by, nil
	}
	fresh := db.pristine
	db.ddlInTx = false // a transaction starts
	if _, err := db.run("SAVEPOINT dosim_turn", nil); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSQL, err)
	}
	// On a new database the savepoint stands for it: losing the turn's
	// writes leaves a new database (toEmpty), whether the turn's schema
	// query ran or a template made it.
	db.turn, db.turnSchema, db.turnEmpty = true, db.schema, fresh
	return by, nil
}

// turnWanted reports whether a write now would open the turn's
// savepoint (openTurn).
func (db *SQL) turnWanted() bool {
	return db.root != nil && db.root.j != nil && !db.turn && db.root.j.current() != nil
}

// endTurn closes the turn savepoint, if open: keeping its writes
// (confirmed) or rolling them back (lost). A statement's ON CONFLICT
// ROLLBACK ends every savepoint, this one too: then there is nothing left
// to close, and the turn's earlier SQL writes were rolled back with it.
func (db *SQL) endTurn(keep bool) {
	if db == nil || !db.turn {
		return
	}
	empty := db.turnEmpty
	db.turn, db.turnEmpty = false, false
	if db.enter("endTurn") != nil {
		return // closed: its savepoint went with the connection
	}
	defer db.leave()
	if !keep {
		_, _ = db.run("ROLLBACK TO dosim_turn", nil)
		db.revertSchema(db.turnSchema)
		db.rolledBackSchema()
	}
	_, _ = db.run("RELEASE dosim_turn", nil)
	if !keep && empty { // the savepoint stood for a new database
		db.toEmpty()
	}
}

// settle takes the database back to new when a statement's ON CONFLICT
// ROLLBACK ended a turn savepoint that stood for a new database
// (emptyDue): at the end of the Exec, when no statement of it is open on
// the connection.
func (db *SQL) settle() {
	if db.emptyDue {
		db.emptyDue = false
		db.toEmpty()
	}
}

// Pending implements Journal.
func (j *journal) Pending() (int, bool) {
	for _, w := range j.pending {
		if !w.allow {
			return len(j.pending), true
		}
	}
	return len(j.pending), false
}

// Confirm implements Journal.
func (j *journal) Confirm() {
	clear(j.pending)
	j.pending = j.pending[:0]
}

// lose is Lose on the storage s that owns j.
func (j *journal) lose(s *Storage) []any {
	by := make([]any, 0, len(j.pending))
	p := j.pending
	s.gen++
	s.j = nil // the restoring writes below are not journaled
	defer func() { s.j = j }()
	s.sql.endTurn(false)
	for i := len(p) - 1; i >= 0; i-- {
		w := p[i]
		switch {
		case w.sql: // rolled back above
		case w.undo != nil:
			w.undo()
		case w.had:
			s.set(w.key, w.old)
		default:
			s.del(w.key)
		}
		by = append(by, w.by)
	}
	j.pending = p[:0]
	clear(p)
	return by
}

// storageJournal is the Journal of one storage.
type storageJournal struct{ s *Storage }

func (sj storageJournal) Pending() (int, bool) { return sj.s.j.Pending() }
func (sj storageJournal) Confirm()             { sj.s.j.Confirm(); sj.s.sql.endTurn(true) }
func (sj storageJournal) Lose() []any {
	fn := sj.s.onWrite // rolling back is no write of anybody's (NotifyWrites)
	sj.s.onWrite = nil
	defer func() { sj.s.onWrite = fn }()
	return sj.s.j.lose(sj.s)
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
