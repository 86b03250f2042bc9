package runtime

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
)

// The history of objects' turns (WithHistory): for every turn an object
// ran, when it ran and what it read from outside its own storage, so that
// a checker can replay the turn alone, from a state it chooses, and get
// what the turn would have computed there (rule C1; see Replay). A
// runtime without the option records nothing and pays one nil check where
// a turn reads the clock or the seeded source.

// WithHistory makes the runtime keep the history of its objects' turns
// (Turns): each request turn (a method or fetch handler that ran), alarm
// delivery and run of the scheduled or queued tasks, with the instant it
// began, the clock readings, seeded draws and replies of calls out it
// read, the events it recorded and whether it ran to its end. The
// explorer's model replays turns from it (Replay). Memory grows with the
// turns run: keep it for runs you check.
func WithHistory() Option { return optionFunc(func(r *Runtime) { r.hist = &history{} }) }

// TurnKind says what an object turn ran.
type TurnKind uint8

// The kinds of turn.
const (
	TurnRequest   TurnKind = iota + 1 // an attempt of a call: the method or the fetch handler
	TurnAlarm                         // a delivery of the object's alarm (rule O6)
	TurnSchedule                      // a run of the object's due scheduled tasks (rule A6)
	TurnQueue                         // a run of the object's due queue items (rule A6)
	TurnWebSocket                     // a WebSocket event: a client's message or close (rule W2)
)

var turnKindNames = [...]string{"", "request", "alarm", "schedule", "queue", "websocket"}

// String names the kind: "request", "alarm", "schedule", "queue".
func (k TurnKind) String() string {
	if int(k) < len(turnKindNames) && k > 0 {
		return turnKindNames[k]
	}
	return fmt.Sprintf("TurnKind(%d)", uint8(k))
}

// ReadKind says what a turn read from outside its object's storage.
type ReadKind uint8

// The kinds of read.
const (
	ReadClock  ReadKind = iota + 1 // the virtual clock (State.Now, SQL 'now', Schedule, Retry)
	ReadRandom                     // a draw of the seeded source (Retry's jitter, SQL random())
	ReadCall                       // the answer of a call the turn made to another object
	// ReadSocket is the number a WebSocket the turn accepted got (Value):
	// the object's count of sockets ever accepted, which turns the model
	// leaves out (a fetch whose writes were lost) moved on too.
	ReadSocket
)

// Read is one thing a turn read from outside its object's storage, in the
// order it read them. Replaying the turn from the same state with the same
// reads computes what it computed.
type Read struct {
	Kind  ReadKind
	Time  time.Time // ReadClock: the instant read
	Value uint64    // ReadRandom: the 64 bits drawn; ReadSocket: the socket's number
	Call  *CallOut  // ReadCall: the call and its answer
}

// CallOut is a call a turn made to another object, and its answer as the
// turn got it.
type CallOut struct {
	Namespace, Object, Method string
	Args                      []any // copies, as sent (nil for a fetch)
	Result                    any   // a copy of what the call returned
	Err                       error // the error the call returned, nil on success
}

// AlarmState is an object's alarm: whether one is set, for when, and how
// many deliveries of it failed so far (rule O6).
type AlarmState struct {
	Set bool
	At  time.Time
	// Retry counts the failed deliveries that count against the retries
	// (the handler's RetryCount).
	Retry int
	// Backoff is the exponent the next failed delivery's wait starts from,
	// and Infra whether the last failed delivery was the infrastructure's
	// (rule O6): with Retry, what the next retry's wait depends on.
	Backoff int
	Infra   bool
	// GaveUp: the alarm was given up after its last failed delivery (Set
	// is false), and GetAlarm still returns At, the instant it was first
	// due, as the platform's getAlarm does (rule O6).
	GaveUp bool
}

// Await is a wait of a turn with its object's input gate open (rule O3):
// a call out, a sleep.
type Await struct {
	// Point counts the turn's waiting points up to this one, from 1: its
	// calls out and sleeps, in the order it made them, whether they let
	// the gate go or not (a call inside BlockConcurrencyWhile does not).
	Point int
	// What it waited for: "a call to NS/object.Method", "a sleep of 1s".
	What string
	// Began and Ended stamp when it let the gate go and took it back, on
	// the scale of Turn.Began and Ended.
	Began, Ended uint64
}

// FetchExchange is what a fetch handler got and answered, as a request
// turn ran it: the request's method, URL, header and the body bytes the
// handler read, and the response it wrote.
type FetchExchange struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte // what the handler read of the body
	// BodyErr is the error reading the body ended with, other than io.EOF.
	BodyErr    string
	Status     int
	RespHeader http.Header
	RespBody   []byte
}

// Turn is one object turn as it ran (WithHistory). Began and Ended order
// the starts and ends of all turns, finer than virtual time.
type Turn struct {
	Kind TurnKind
	// Shared says the turn read runtime-wide state (a circuit breaker)
	// that no replay of it alone can reproduce.
	Shared    bool
	Namespace string
	Object    string
	// Backend is the storage the object's namespace has (KeyValueBacked):
	// a replay runs the turn on the same.
	Backend object.Backend
	// Seed is the run's seed: a replay computes from it what the run
	// derived from it inside the turn (an alarm retry's jitter, rule O6).
	Seed uint64
	// Bindings are the namespace's bindings (WithBinding): a replay's
	// runtime.Binding resolves them as the run's did. Shared: do not change.
	Bindings map[string]string
	// Call and Attempt say which call's attempt a request turn ran: Call is
	// the call's number (its position in Calls, from 1). Method and Args
	// are the call's: Args are the runtime's own copies, to read, not to
	// change.
	Call, Attempt int
	Method        string
	Args          []any
	// Fetch is a fetch handler's exchange (Method "fetch").
	Fetch *FetchExchange
	// Alarm is the object's alarm as an alarm turn found it (nil for the
	// other kinds).
	Alarm *AlarmState
	// Instance numbers the instance the turn ran on, from 1 (rule O2): the
	// turns an instance ran share it, and a reset or an eviction makes the
	// next turn's instance a new one. 0 for a turn whose instance could
	// not be built.
	Instance int
	// Ctor is what the constructor of the turn's instance read (the
	// clock, seeded draws), in order: a replay that builds the instance
	// feeds it back. The turns of one instance share it: to read, not to
	// change.
	Ctor []Read
	// At is the instant (the virtual wall clock) the turn began.
	At           time.Time
	Start, End   time.Duration // virtual time since the runtime started
	Began, Ended uint64
	// Reads are what the turn read from outside its storage, in order.
	Reads []Read
	// Awaits are the waits during which the turn let its object's input
	// gate go (rule O3), in order: other turns of the object could run
	// then, and those that began within one came in during it.
	Awaits []Await
	// Events are the trace events the turn recorded, in order.
	Events []object.Event
	// WebSocket is what a WebSocket turn delivered (TurnWebSocket).
	WebSocket *WebSocketEvent
	// Cut says why the turn did not run as it would have alone, "" when
	// it did: "reset" (the object was reset under it: its instance went
	// stale and its storage refused it from then on), "writes lost" (a
	// storage write failure took back writes it made, rule L7),
	// "cancelled" (its caller gave up and its context was cancelled).
	Cut string
	// outcome is what it computed as it ran, when kept (see Outcome).
	outcome *outcome
}

// history is what WithHistory keeps.
type history struct {
	stamp uint64
	turns []*turnLog
	// objects are the hosts that ran a turn, in the order of their first
	// (each keeps its objectLog).
	objects []*host
	slab    []turnLog // where the next turn logs come from
}

// objectLog is what the history keeps of one object besides its turns.
type objectLog struct {
	init    ObjectState // its storage and alarm when its first turn began
	outside int         // writes and effects made outside its turns since
}

// turnLog is a Turn being recorded: the Turn readers get (History hands
// out pointers to it), and what it is finished from.
type turnLog struct {
	Turn
	h     *host
	call  *wire.Call   // a request turn's call
	calls []*wire.Call // the records of its calls out, in their order
	open  bool
	// made says the ReadCall reads' CallOuts are made (finish); unfinished
	// says finish marked the turn cut because it had not ended yet.
	made, unfinished bool
	// points counts the turn's waiting points so far (Await.Point), and
	// what the last was for.
	points int
	what   string
	// ob is the outcome to come as the turn runs; pending a request
	// turn's outcome until its answer is known (answered).
	ob      outcomeStart
	pending *outcome
}

// begin starts the log of a turn of h.
func (hs *history) begin(h *host, kind TurnKind) *turnLog {
	if h.hist == nil {
		h.hist = &objectLog{}
		if h.storage.Len() > 0 || h.storage.HasSQL() || h.alarm.set { // most objects begin empty: nothing to copy
			h.hist.init = h.objectState()
		}
		hs.objects = append(hs.objects, h)
	}
	hs.stamp++
	if len(hs.slab) == 0 {
		hs.slab = make([]turnLog, 4)
		if hs.turns == nil {
			hs.turns = make([]*turnLog, 0, 4)
		}
	}
	tl := &hs.slab[0]
	hs.slab = hs.slab[1:]
	now := h.ns.r.k.Now()
	*tl = turnLog{h: h, open: true, Turn: Turn{Kind: kind, Namespace: h.ns.name, Object: h.target.Object, Backend: h.ns.backend, Seed: h.ns.r.alarmSeed, Bindings: h.ns.bindings,
		At: h.ns.r.start.Add(now), Start: now, Began: hs.stamp}}
	hs.turns = append(hs.turns, tl)
	h.beginOutcome(tl)
	return tl
}

// end closes a turn's log.
func (hs *history) end(tl *turnLog) {
	if tl == nil || !tl.open {
		return
	}
	hs.stamp++
	tl.open, tl.Ended, tl.End = false, hs.stamp, tl.h.ns.r.k.Now()
	if tl.unfinished {
		tl.unfinished, tl.Cut = false, ""
	}
	tl.h.endOutcome(tl)
}

// cutOpen marks every open turn of h cut, for why.
func (hs *history) cutOpen(h *host, why string) {
	for i := len(hs.turns) - 1; i >= 0; i-- {
		if tl := hs.turns[i]; tl.open && tl.h == h && tl.Cut == "" {
			tl.Cut = why
		}
	}
}

// objectTurn is the Work of a task that runs a turn of an object: a
// request's (turnInfo) or a background lane's (laneTurn).
type objectTurn interface {
	// ofObject returns the turn's host and its log (nil without history).
	ofObject() (*host, *turnLog)
}

func (ti *turnInfo) ofObject() (*host, *turnLog) { return ti.h, ti.log }
func (lt *laneTurn) ofObject() (*host, *turnLog) { return lt.h, lt.log }

// current is the log of the turn running on the kernel's current task,
// if it is a turn of h (of any host when h is nil) and not building the
// instance (a constructor's reads belong to no turn).
func (r *Runtime) current(h *host) *turnLog {
	cur := r.k.Current()
	if cur == nil {
		return nil
	}
	var tl *turnLog
	if t, ok := cur.Work().(objectTurn); ok {
		_, tl = t.ofObject()
	}
	if tl == nil || !tl.open || (h != nil && tl.h != h) || tl.h.building {
		return nil
	}
	return tl
}

// noteOutside counts a write or an effect of h made outside its turns,
// once its history has begun.
func (hs *history) noteOutside(r *Runtime, h *host) {
	if h.hist == nil || r.current(h) != nil {
		return
	}
	h.hist.outside++
}

// histSource is the object-visible seeded source of a runtime that keeps
// a history: the runtime's own draws, each recorded in the turn that made
// it.
type histSource struct{ r *Runtime }

func (s histSource) Uint64() uint64 {
	v := s.r.pcg.Uint64()
	if tl := s.r.current(nil); tl != nil {
		tl.Reads = append(tl.Reads, Read{Kind: ReadRandom, Value: v})
	} else if h := s.r.constructing(); h != nil {
		h.ctor = append(h.ctor, Read{Kind: ReadRandom, Value: v})
	}
	return v
}

// constructing is the host whose constructor the running task runs, if
// it is running one in a turn.
func (r *Runtime) constructing() *host {
	cur := r.k.Current()
	if cur == nil {
		return nil
	}
	t, ok := cur.Work().(objectTurn)
	if !ok {
		return nil
	}
	if h, _ := t.ofObject(); h.building {
		return h
	}
	return nil
}

// noteInstance records in a turn's log the instance it runs on, once
// built (rule O2).
func (h *host) noteInstance(tl *turnLog) {
	if tl != nil && h.inst != nil {
		tl.Instance, tl.Ctor = h.instances, h.ctor
	}
}

// objectRand is the seeded source object code draws from (object.Host.Rand).
func (r *Runtime) objectRand() *rand.Rand {
	if r.orng != nil {
		return r.orng
	}
	return r.rng
}

// clockRead is what object code of h reads of the clock: the virtual
// clock, recorded in the history, or the replayed turn's reading.
func (r *Runtime) clockRead(h *host) time.Time {
	if r.replay != nil {
		return r.replay.clock(r, h)
	}
	now := r.Now()
	if r.hist != nil {
		if tl := r.current(h); tl != nil {
			tl.Reads = append(tl.Reads, Read{Kind: ReadClock, Time: now})
		} else if h.building {
			h.ctor = append(h.ctor, Read{Kind: ReadClock, Time: now})
		}
	}
	return now
}

// noteCall records a call out of the running turn (WithHistory): a read,
// and a waiting point.
func (r *Runtime) noteCall(c *wire.Call) {
	if tl := r.current(nil); tl != nil {
		tl.Reads = append(tl.Reads, Read{Kind: ReadCall})
		tl.calls = append(tl.calls, c)
		tl.points++
		tl.what = "a call to " + c.Site.Target.Namespace + "/" + c.Site.Target.Object + "." + c.Site.Method
	}
}

// noteSleep records a sleep of h's running turn as a waiting point.
func (r *Runtime) noteSleep(h *host, d time.Duration) {
	if tl := r.current(h); tl != nil {
		tl.points++
		tl.what = "a sleep of " + d.String()
	}
}

// openAwait records that the turn whose log is tl let its object's input
// gate go (Await).
func (r *Runtime) openAwait(tl *turnLog) {
	hs := r.hist
	if hs == nil || tl == nil || !tl.open {
		return
	}
	hs.stamp++
	tl.Awaits = append(tl.Awaits, Await{Point: tl.points, What: tl.what, Began: hs.stamp})
}

// closeAwait records that the turn whose log is tl took its object's
// input gate back.
func (r *Runtime) closeAwait(tl *turnLog) {
	hs := r.hist
	if hs == nil || tl == nil || len(tl.Awaits) == 0 {
		return
	}
	if w := &tl.Awaits[len(tl.Awaits)-1]; w.Ended == 0 {
		hs.stamp++
		w.Ended = hs.stamp
	}
}

// noteEvent records an event in the running turn of h.
func (r *Runtime) noteEvent(h *host, e object.Event) {
	if tl := r.current(h); tl != nil {
		tl.Events = append(tl.Events, e)
	}
}

// objectState is the storage and alarm of h now.
func (h *host) objectState() ObjectState { return h.stateOf(false) }

// stateOf is objectState, whose entries are the storage's own with toRead
// (object's Hosting.SnapshotToRead), copies without.
func (h *host) stateOf(toRead bool) ObjectState {
	var storage map[string]any
	if toRead {
		storage = object.Hosting(seal.Key{}).SnapshotToRead(h.storage)
	} else {
		storage = object.Hosting(seal.Key{}).SnapshotInOrder(h.storage)
	}
	st := ObjectState{Storage: storage, Alarm: h.alarmState()}
	if h.ws != nil {
		ss := &SocketsState{Accepted: h.ws.accepted}
		for _, s := range h.ws.open {
			ss.Open = append(ss.Open, s.state())
		}
		st.WebSockets = ss
	}
	return st
}

// alarmState is h's alarm, in absolute time.
func (h *host) alarmState() AlarmState {
	if !h.alarm.set {
		if g := h.alarm.gaveUp; g != nil && g == h.state {
			return AlarmState{GaveUp: true, At: h.ns.r.start.Add(h.alarm.first)}
		}
		return AlarmState{}
	}
	a := h.alarm
	return AlarmState{Set: true, At: h.ns.r.start.Add(a.at), Retry: a.retry, Backoff: a.backoff, Infra: a.infra}
}

// turns are the history's turns, finished, as History hands them out.
func (r *Runtime) turns() []*Turn {
	if r.hist == nil {
		return nil
	}
	out := make([]*Turn, 0, len(r.hist.turns))
	for _, tl := range r.hist.turns {
		if tl.Kind != TurnRequest && len(tl.Events) == 0 && len(tl.Reads) == 0 {
			continue
		}
		tl.finish()
		out = append(out, &tl.Turn)
	}
	return out
}

// finish fills in what a turn's Turn takes from elsewhere: its call, a
// lost write, its calls out, and whether it has ended.
func (tl *turnLog) finish() {
	h := tl.h
	tl.Events = tl.Events[:len(tl.Events):len(tl.Events)] // a reader's appends go elsewhere
	if tl.open {                                          // still running (a turn that never ended: the run stopped)
		tl.End, tl.Ended = h.ns.r.k.Now(), h.ns.r.hist.stamp+1
		if tl.Cut == "" {
			tl.Cut, tl.unfinished = "unfinished", true
		}
	}
	if c := tl.call; c != nil {
		tl.Call, tl.Method, tl.Args = int(c.Seq), c.Site.Method, c.Args()
		if tl.Cut == "" && c.LostWrites(c.Attempt(tl.Attempt-1)) > 0 {
			tl.Cut = "writes lost"
		}
	}
	if tl.made || len(tl.calls) == 0 || tl.open {
		return
	}
	tl.made = true
	k := 0
	for i := range tl.Reads {
		if tl.Reads[i].Kind != ReadCall {
			continue
		}
		c := tl.calls[k]
		k++
		tl.Reads[i].Call = &CallOut{Namespace: c.Site.Target.Namespace, Object: c.Site.Target.Object, Method: c.Site.Method,
			Args: copyArgs(c.Args()), Result: copyValue(c.Result), Err: copyErr(c.Err())}
	}
}

// copyErr copies a recorded error for a reader: a *stub.Error by value.
func copyErr(err error) error {
	if e, ok := err.(*stub.Error); ok {
		cp := *e
		return &cp
	}
	return err
}

// History is what a runtime made WithHistory kept of its objects' turns,
// as a checker reads it: every turn, and for each object that ran one,
// its state when its first turn began and now.
type History struct {
	// Turns are the objects' turns, in the order they began (see
	// Runtime.Turns): the runtime's own records, to read, not to change.
	Turns []*Turn
	// Objects are the objects that ran a turn, in the order of their first.
	Objects []ObjectHistory
}

// ObjectHistory is one object's part of a History.
type ObjectHistory struct {
	Namespace, Object string
	// Initial is the object's storage and alarm when its first turn began;
	// Final is what they are now.
	Initial, Final ObjectState
	// Outside counts the storage writes and effects made to the object
	// outside its own turns (a test writing its storage between calls,
	// say) since its first turn began: a replay of its turns alone cannot
	// account for them.
	Outside int
}

// FinalStorage returns the storage the object ns/name holds now, as its
// Final state says, when it ran a turn (ok); a nil History has none.
// The map is the history's own: do not change it.
func (h *History) FinalStorage(namespace, name string) (map[string]any, bool) {
	if h == nil {
		return nil, false
	}
	for i := range h.Objects {
		if o := &h.Objects[i]; o.Namespace == namespace && o.Object == name {
			return o.Final.Storage, true
		}
	}
	return nil, false
}

// History returns the history of the objects' turns so far, or nil
// without WithHistory.
func (r *Runtime) History() *History {
	hs := r.hist
	if hs == nil {
		return nil
	}
	out := &History{Turns: r.turns(), Objects: make([]ObjectHistory, 0, len(hs.objects))}
	for _, h := range hs.objects {
		out.Objects = append(out.Objects, ObjectHistory{Namespace: h.ns.name, Object: h.target.Object,
			Initial: h.hist.init, Final: h.objectState(), Outside: h.hist.outside})
	}
	return out
}

// ObjectStateOf returns the storage and alarm of the object with id now.
func (ns *Namespace) ObjectStateOf(id object.ID) ObjectState { return ns.host(id).objectState() }
