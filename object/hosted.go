package object

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/wire"
)

// This file is package object's side of its seam with package runtime, the
// way database/sql/driver is a driver's side of its seam with database/sql:
// the interfaces the runtime implements for object code (Host), and the
// constructors and methods the runtime calls, which are the methods of one
// value, Hosting's. Hosting takes a seal.Key (under the unexported name
// sealKey), a type only dosim's own packages can name, so that they are
// for the runtime alone; user code never needs them, and go doc shows them
// as one line that names nothing of dosim's internal packages.

// sealKey is seal.Key: Hosting's parameter, which only dosim's packages
// can make.
type sealKey = seal.Key

// Hosting returns package object's entry points for package runtime and
// package agent; its parameter's type is internal to dosim, so that no
// other package can call it.
func Hosting(sealKey) hosting { return hosting{} }

// hosting holds package object's entry points for package runtime and
// package agent (Hosting): its methods make an object's ID and State and
// drive its storage as only the runtime may.
type hosting struct{}

// Host is what an object's State needs from the runtime hosting it.
// Package runtime implements it; its methods name types of dosim's
// internal packages, so that no other package can.
type Host interface {
	// Sleep waits d of virtual time, yielding the object's input gate.
	Sleep(ctx context.Context, d time.Duration) error
	// Now is the virtual wall clock.
	Now() time.Time
	// Halted reports whether the runtime's watchdog gave up on a stalled
	// turn: a SQL statement still running then stops (rule Q5).
	Halted() bool
	// Effect records a side effect that leaves the object.
	Effect(ctx context.Context, kind string, payload any) error

	// Rand is the runtime's seeded source; use it only on the simulated path.
	Rand() *rand.Rand
	// Instance returns the object instance, building it if needed; nil
	// while its constructor runs.
	Instance() (any, error)
	// CheckTask reports an error if the built instance has no method
	// called name, or if payload does not fit its parameter as Invoke would
	// pass it (nil while the instance is not built).
	CheckTask(name string, payload any) error
	// Invoke runs the instance's method called name, building the instance
	// if needed, with payload as its one argument (none when payload is nil
	// and the method takes none), through the path requests take: argument
	// conversion, and a panic returned as an error.
	Invoke(ctx context.Context, name string, payload any) error
	// SetAlarm sets the object's alarm to at, or deletes it when ok is false.
	SetAlarm(at time.Time, ok bool)
	// Alarm returns the pending alarm, if any.
	Alarm() (time.Time, bool)
	// TasksDue tells the host when the earliest task of lane falls due
	// (ok false: the lane is empty), so that it can set its timer.
	TasksDue(lane wire.Lane, at time.Time, ok bool)
	// Event appends an event to the runtime's trace, attributed to the
	// object.
	Event(e Event)
	// Shared returns the runtime-wide value stored under key, storing mk()
	// there first if there is none and mk is not nil.
	Shared(key string, mk func() any) any
	// ResetAfterBlock resets the object because the function given to
	// BlockConcurrencyWhile failed with err (rule L6).
	ResetAfterBlock(err error)
	// BlockConcurrency runs fn with the object's input gate held closed
	// (rule L6), and resets the object if fn runs 30 s of virtual time
	// without returning, as the platform cancels blockConcurrencyWhile.
	BlockConcurrency(ctx context.Context, fn func(ctx context.Context) error) error
	// Abort resets the object because its code called State.Abort with
	// reason (rule L3).
	Abort(reason string)

	// AcceptWebSocket keeps server, accepted with tags, among the
	// object's sockets, and links its pair (rule W1).
	AcceptWebSocket(server *WebSocket, tags []string) error
	// WebSockets returns the object's open sockets, those with tag when it
	// is not "".
	WebSockets(tag string) []*WebSocket
	// WebSocketTags returns the tags ws was accepted with.
	WebSocketTags(ws *WebSocket) []string
	// SetWebSocketAutoResponse sets the object's auto-response pair.
	SetWebSocketAutoResponse(request, response string)
	// WebSocketAutoResponseTimestamp returns when ws last got the
	// auto-response.
	WebSocketAutoResponseTimestamp(ws *WebSocket) (time.Time, bool)
}

// Journal is what the runtime drives of an object's storage when a write
// can fail (rule L7): the writes made and not yet confirmed durable
// (Storage.StartJournal).
type Journal interface {
	// Pending reports how many writes wait for confirmation and whether
	// any of them holds the turn's output (was not made with
	// AllowUnconfirmed).
	Pending() (n int, held bool)
	// Confirm makes every pending write durable.
	Confirm()
	// Lose rolls every pending write back, newest first, and returns who
	// made each (what the current function given to StartJournal returned
	// as it was made).
	Lose() []any
}

// NewID returns the id of an object of namespace, from its 32 raw
// bytes and, for an id made from a name, that name. For package runtime,
// which makes and checks the bytes (rule O1).
func (hosting) NewID(namespace string, raw [32]byte, name string) ID {
	return ID{ns: namespace, raw: raw, name: name}
}

// NewState returns the State of the object with id, whose storage
// and host are the runtime's. For package runtime.
func (hosting) NewState(id ID, storage *Storage, host Host) *State {
	if storage != nil && storage.txn == nil {
		storage.host = host // the alarm is storage's (storage_alarm.go)
	}
	return &State{id: id, storage: storage, host: host}
}

// Renew marks s stale, why being the reason (its instance was reset or
// evicted: its storage refuses every operation from now on, rule L4), and
// returns a new State for the next instance, with the same id, storage
// and host. For package runtime.
func (hosting) Renew(s *State, why string) *State {
	s.reset = fmt.Errorf("%w (%s): a new instance serves the object, this one may not touch its storage", ErrInstanceReset, why)
	return &State{id: s.id, storage: s.storage, host: s.host}
}

// TaskRunner is implemented by an instance whose class embeds
// agent.Agent: package agent's scheduled and queued tasks (rule A6) run
// through it. Package runtime reaches it through the instance, as it
// reaches Alarmer; its method takes a wire.Lane, a type only dosim's
// packages can name, so that only package agent implements it.
type TaskRunner interface {
	// RunTasks runs the due tasks of lane (wire.LaneSchedule or
	// wire.LaneQueue), then reports the lane's next due time through
	// Host.TasksDue. Package runtime calls it in a turn holding the
	// object's input gate.
	RunTasks(ctx context.Context, lane wire.Lane)
}

// Of returns what package agent needs of s: the host and the object's
// storage, the same handle whether or not the instance is stale (its
// tasks are the runtime's to run). For package agent.
func (hosting) Of(s *State) (Host, *Storage) { return s.host, s.storage }

// Generation counts the changes of what s holds (its top level's): two
// equal counts a storage read apart mean it holds what it held (a write,
// a DeleteAll, a Restore, writes taken back each move it).
func (hosting) Generation(s *Storage) uint64 {
	for s.txn != nil {
		s = s.txn.parent
	}
	return s.gen
}

// ConnectionReads counts the SQL statements run on s's database that may
// read the connection's own counts (changes(), total_changes(),
// last_insert_rowid()), which no snapshot of it holds.
func (hosting) ConnectionReads(s *Storage) uint64 {
	for s.txn != nil {
		s = s.txn.parent
	}
	return s.connReads
}

// Has reports whether key is stored, as the current transaction sees it,
// outside any turn and without touching the journal. For package agent,
// which checks that a running task was not cancelled.
func (hosting) Has(s *Storage, key string) bool {
	_, ok := s.lookup(key)
	return ok
}

// Count returns how many stored keys start with prefix. For package
// agent, which counts an object's tasks (rule C8).
func (hosting) Count(s *Storage, prefix string) int {
	n := 0
	for k := range s.flatten() {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// Close frees what the storage holds outside the Go heap (its SQL
// database). For package runtime, which calls it when it closes.
func (hosting) Close(s *Storage) { s.closeSQL() }

// StartJournal makes the storage keep a journal of its unconfirmed writes
// (rule L7) and returns it; current names the turn making a write (nil:
// outside any turn, durable at once), sync is Sync's wait, and lost makes
// the pending writes fail when SQLite itself undid them (a statement's ON
// CONFLICT ROLLBACK). For package runtime.
func (hosting) StartJournal(s *Storage, current func() any, sync func(ctx context.Context) error, lost func()) Journal {
	s.j = &journal{current: current, sync: sync, lost: lost}
	return storageJournal{s}
}

// JournalUndo journals a write the runtime keeps beside storage (the
// object's alarm, rule L7) as one of the running turn's unconfirmed
// writes: undo puts it back if they are lost. It reports whether it
// journaled the write: not without a journal, nor outside a turn, where
// a write is durable at once. For package runtime.
func (hosting) JournalUndo(s *Storage, undo func()) bool {
	if s.j == nil {
		return false
	}
	by := s.j.current()
	if by == nil {
		return false
	}
	s.j.pending = append(s.j.pending, pendingWrite{by: by, undo: undo})
	return true
}

// Journal returns the storage's journal, nil when it keeps none
// (StartJournal). For package runtime.
func (hosting) Journal(s *Storage) Journal {
	if s.j == nil {
		return nil
	}
	return storageJournal{s}
}

// SnapshotInOrder is Snapshot as a checker replays turns from (rule C1):
// each SQL table with rowids lists its rows in rowid order, with their
// rowids (see SQLSnapshotPrefix), so that Restore brings back the order in
// which a SELECT without ORDER BY reads them. For package runtime.
func (hosting) SnapshotInOrder(s *Storage) map[string]any {
	out := s.snapshotKV()
	s.snapshotSQL(out, true, false)
	return out
}

// SnapshotToRead is SnapshotInOrder whose entries are the storage's own
// values and what was dumped of the same SQL bytes before, not copies:
// storage never changes a value it holds (a write replaces it), nor a
// dump it kept, so a snapshot nobody changes (the runtime's outcomes,
// which only dosim's checker reads) need not copy every entry at every
// turn. For package runtime.
func (hosting) SnapshotToRead(s *Storage) map[string]any {
	out := maps.Clone(s.flatten())
	if out == nil {
		out = map[string]any{}
	}
	s.snapshotSQL(out, true, true)
	return out
}
