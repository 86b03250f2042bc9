package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/wire"
	"github.com/robfig/cron/v3"
)

// The storage keys of an object's scheduled and queued tasks, its dead
// letters, its runs waiting for their next attempt and its task counter
// (rule A6), under object.ReservedPrefix.
const (
	scheduleKeys = object.ReservedPrefix + "schedule/"
	queueKeys    = object.ReservedPrefix + "queue/"
	deadKeys     = object.ReservedPrefix + "dead/"
	runKeys      = object.ReservedPrefix + "retry/"
	seqKey       = object.ReservedPrefix + "seq"
)

// ErrTask is wrapped by errors for bad Schedule, Queue, cancel and re-drive
// requests.
var ErrTask = errors.New("task")

// TaskOptions are the options of a scheduled or queued task. They are
// stored with the task.
type TaskOptions struct {
	// Retry configures the attempts of each run: RetryOptions merged, when
	// the task is made, over the class's defaults and the built-in ones,
	// and stored so resolved (rule A6: a task asked to make 7 attempts is
	// stored with 7, 100 and 3000); a later change of the class's defaults
	// does not change a stored task. ShouldRetry cannot be stored: set it
	// in the class's RetryDefaults, which a run asks. Breaker is stored as
	// given.
	Retry RetryOptions
	// DeadLetter keeps the task, with its last error, in the object's
	// dead-letter store when a run's attempts are exhausted, where
	// ListDeadLetters shows it and Redrive runs it again (rule A7, opt-in).
	DeadLetter bool
	// Independent (queued tasks only) retries a failed item on its own
	// timer: the items behind it run meanwhile instead of waiting for its
	// retries (rule A7, opt-in). By default a failing item blocks the
	// queue until its attempts are used up.
	Independent bool
	// Idempotent (schedules only) decides whether Schedule adds a task
	// when an identical one is stored (the same kind, callback and
	// payload, and for Cron and Every the same expression or interval):
	// with it true, Schedule returns the stored task and adds none. Nil
	// takes the Agents SDK's default (agents 0.32.0, the Scheduler's
	// insert): a Cron schedule is idempotent unless it is false, a
	// one-shot one (After, At) only when it is true, and matches whatever
	// its time. An Every schedule is always idempotent, as the SDK's
	// scheduleEvery is (it takes no such option): false is refused.
	Idempotent *bool
}

// idempotent says whether a schedule of kind k with these options takes
// the place of an identical stored one (TaskOptions.Idempotent).
func (o TaskOptions) idempotent(k TaskKind) bool {
	if o.Idempotent != nil {
		return *o.Idempotent
	}
	return k == TaskCron || k == TaskInterval
}

// Task is a scheduled or queued task, as listed.
type Task struct {
	ID       string   // "s12" for a schedule, "q13" for a queue item
	Kind     TaskKind // how it was made
	Callback string   // the name of the method in the object's Methods it runs
	Payload  any      // the method's argument (a copy)
	Time     time.Time
	// Delay, Cron and Every are what After, Cron and Every were given.
	Delay time.Duration
	Cron  string
	Every time.Duration
	// Options are the task's options as stored: Retry's numeric fields
	// resolved when the task was made.
	Options TaskOptions
	// Attempts counts the failed attempts of the current run so far; only
	// an Independent queue item waiting for its retry has any.
	Attempts int
}

// storedRetry is the part of RetryOptions that can be stored.
type storedRetry struct {
	MaxAttempts, BaseDelayMs, MaxDelayMs *int
	Breaker                              *BreakerOptions
}

func (r storedRetry) options() RetryOptions {
	return RetryOptions{MaxAttempts: r.MaxAttempts, BaseDelayMs: r.BaseDelayMs, MaxDelayMs: r.MaxDelayMs, Breaker: r.Breaker}
}

// taskRecord is how a task is stored, under scheduleKeys or queueKeys.
type taskRecord struct {
	Seq         uint64
	Kind        TaskKind
	Callback    string
	Payload     any
	Due         time.Time
	Delay       time.Duration
	Cron        string
	Every       time.Duration
	Retry       storedRetry
	DeadLetter  bool
	Independent bool
	Attempts    int
}

func (r *taskRecord) lane() wire.Lane {
	if r.Kind == TaskQueued {
		return wire.LaneQueue
	}
	return wire.LaneSchedule
}

func (r *taskRecord) id() string { return taskID(r.lane(), r.Seq) }

func (r *taskRecord) key() string { return taskKey(r.lane(), r.Seq) }

// event is e of kind, about the task.
func (r *taskRecord) event(kind object.EventKind, e object.Event) object.Event {
	e.Kind, e.Task, e.TaskKind, e.Callback = kind, r.id(), string(r.Kind), r.Callback
	return e
}

func (r *taskRecord) task() Task {
	o := r.Retry.options()
	return Task{
		ID: r.id(), Kind: r.Kind, Callback: r.Callback, Payload: r.Payload, Time: r.Due,
		Delay: r.Delay, Cron: r.Cron, Every: r.Every, Attempts: r.Attempts,
		Options: TaskOptions{Retry: o, DeadLetter: r.DeadLetter, Independent: r.Independent},
	}
}

func taskID(lane wire.Lane, seq uint64) string {
	if lane == wire.LaneQueue {
		return "q" + strconv.FormatUint(seq, 10)
	}
	return "s" + strconv.FormatUint(seq, 10)
}

func taskKey(lane wire.Lane, seq uint64) string {
	if lane == wire.LaneQueue {
		return fmt.Sprintf("%s%020d", queueKeys, seq)
	}
	return fmt.Sprintf("%s%020d", scheduleKeys, seq)
}

// retrying is a run of a task that is not Independent, between two of its
// attempts: the item holds its lane (no other task of the lane runs) until
// the run ends. It is stored under retryKey, beside the task's record, so
// that it survives a reset and the record stays as the task was made.
type retrying struct {
	Attempt int       // attempts made so far in the run
	At      time.Time // when the next one falls due
	LastErr string    // the last attempt's error
}

// retryKey is where the run of the task seq of lane keeps its retrying.
func retryKey(lane wire.Lane, seq uint64) string {
	if lane == wire.LaneQueue {
		return fmt.Sprintf("%squeue/%020d", runKeys, seq)
	}
	return fmt.Sprintf("%sschedule/%020d", runKeys, seq)
}

// parseID returns the sequence number of an id with the given letter.
func parseID(id string, letter byte) (uint64, bool) {
	if len(id) < 2 || id[0] != letter {
		return 0, false
	}
	n, err := strconv.ParseUint(id[1:], 10, 64)
	return n, err == nil && strconv.FormatUint(n, 10) == id[1:]
}

// nextSeq draws the next task number from the stored counter.
func (s *turn) nextSeq(ctx context.Context) (uint64, error) {
	var n uint64
	if _, err := s.storage.Get(ctx, seqKey, &n); err != nil {
		return 0, err
	}
	n++
	return n, s.storage.Put(ctx, seqKey, n)
}

// Schedule stores a task that runs the object's method callback with
// payload as its argument at the time when says (rule A6). The task, its
// payload and its options live in the object's storage, so they survive
// an object reset. The method runs in a turn of its own, through the
// object's input gate, like a request; each run makes up to the retry
// policy's attempts, with Retry's backoff. After a run's last failed
// attempt the error goes to the object's OnError (see ErrorHandler).
// Then a one-shot task (After, At) is removed and a recurring one (Cron,
// Every) scheduled again. Scheduled tasks are background work: like
// alarms, they run when virtual time reaches them.
//
// The callback must be listed in the object's Methods and take no
// argument or one that payload converts to; payload must be plain data.
// Options are validated now, merged over the class defaults (rule A4).
// At most one TaskOptions may be given.
func (a *Agent) Schedule(ctx context.Context, when When, callback string, payload any, opts ...TaskOptions) (Task, error) {
	s, err := a.turn(ctx, "agent.Agent.Schedule")
	if err != nil {
		return Task{}, err
	}
	const op = "agent.Agent.Schedule"
	rec := taskRecord{Kind: when.kind, Callback: callback, Payload: payload}
	now := s.Now()
	switch when.kind {
	case TaskDelayed:
		// A delay already past runs at once, as the SDK's schedule(-10, cb)
		// does (agents 0.32.0, real workerd 1.20261117.1, rule A6).
		rec.Delay, rec.Due = when.d, now.Add(max(when.d, 0))
	case TaskScheduled:
		if when.at.IsZero() {
			return Task{}, fmt.Errorf("%s: %w: At: the time is zero", op, ErrTask)
		}
		rec.Due = when.at
	case TaskCron:
		next, err := cronNext(when.cron, now)
		if err != nil {
			return Task{}, fmt.Errorf("%s: %w: %w", op, ErrTask, err)
		}
		rec.Cron, rec.Due = when.cron, next
	case TaskInterval:
		// The SDK's words (scheduleEvery, agents 0.32.0).
		switch {
		case when.d <= 0:
			return Task{}, fmt.Errorf("%s: %w: Every(%v): intervalSeconds must be a positive number", op, ErrTask, when.d)
		case when.d > MaxInterval:
			return Task{}, fmt.Errorf("%s: %w: Every(%v): intervalSeconds cannot exceed %d seconds (30 days)", op, ErrTask, when.d, int(MaxInterval/time.Second))
		}
		rec.Every, rec.Due = when.d, now.Add(when.d)
	default:
		return Task{}, fmt.Errorf("%s: %w: when is not set (use agent.After, At, Cron or Every)", op, ErrTask)
	}
	o, err := taskOptions(op, opts, false)
	if err != nil {
		return Task{}, err
	}
	if when.kind == TaskInterval && o.Idempotent != nil && !*o.Idempotent {
		return Task{}, fmt.Errorf("%s: %w: Idempotent false: an Every schedule is always idempotent, as the Agents SDK's scheduleEvery is (it takes no idempotent option); use a Cron schedule to add one row per call", op, ErrTask)
	}
	return s.addTask(ctx, op, rec, o)
}

// cronAllowed says what a cron expression may be, for error messages.
const cronAllowed = `five fields (minute hour day-of-month month day-of-week) or a descriptor such as "@hourly", optionally after a time zone and a space, as in "CRON_TZ=UTC 0 9 * * *"`

// cronNext parses a cron expression and returns its first instant after now.
func cronNext(expr string, now time.Time) (time.Time, error) {
	// robfig/cron slices up to the first space after a TZ= or CRON_TZ=
	// prefix, and panics when there is none: refuse that here.
	if (strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=")) && !strings.Contains(expr, " ") {
		return time.Time{}, fmt.Errorf("cron expression %q: a time zone with no schedule after it; allowed are %s", expr, cronAllowed)
	}
	sched, err := cronParse(expr)
	if err != nil {
		return time.Time{}, fmt.Errorf("cron expression %q: %w", expr, err)
	}
	next := sched.Next(now)
	if next.IsZero() {
		return time.Time{}, fmt.Errorf("cron expression %q names no instant after %s", expr, now.Format(time.RFC3339))
	}
	return next, nil
}

// cronParse is cron.ParseStandard, with any panic of the parser on odd
// input turned into an error: user input must not panic.
func cronParse(expr string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("not a cron expression (the parser failed: %v); allowed are %s", r, cronAllowed)
		}
	}()
	return cron.ParseStandard(expr)
}

// taskOptions checks the variadic options of Schedule and Queue.
func taskOptions(op string, opts []TaskOptions, queued bool) (TaskOptions, error) {
	switch {
	case len(opts) > 1:
		return TaskOptions{}, fmt.Errorf("%s: %w: at most one TaskOptions, got %d", op, ErrTask, len(opts))
	case len(opts) == 0:
		return TaskOptions{}, nil
	}
	o := opts[0]
	if o.Independent && !queued {
		return TaskOptions{}, fmt.Errorf("%s: %w: Independent applies to queued tasks only", op, ErrTask)
	}
	if o.Idempotent != nil && queued {
		return TaskOptions{}, fmt.Errorf("%s: %w: Idempotent applies to schedules only (the SDK's queue has no such option)", op, ErrTask)
	}
	if o.Retry.ShouldRetry != nil {
		return TaskOptions{}, fmt.Errorf("%s: %w: retry.ShouldRetry is a func and cannot be stored with a task; set it in the class's RetryDefaults", op, ErrRetryOptions)
	}
	return o, nil
}

// addTask validates and stores a new task and tells the host when its lane
// is next due.
func (s *turn) addTask(ctx context.Context, op string, rec taskRecord, o TaskOptions) (Task, error) {
	if rec.Callback == "" {
		return Task{}, fmt.Errorf("%s: %w: the callback name is empty", op, ErrTask)
	}
	payload, _, err := clone.Copy(rec.Payload, nil)
	if err != nil {
		return Task{}, fmt.Errorf("%s: %w: payload: %w", op, ErrTask, object.Hosting(seal.Key{}).CopyPolicy().Explain(rec.Payload, err))
	}
	rec.Payload = payload
	if inst, err := s.host.Instance(); err == nil && inst != nil {
		if _, ok := inst.(object.TaskRunner); !ok {
			return Task{}, fmt.Errorf("%s: %w: %T does not embed agent.Agent, so its tasks would never run", op, ErrTask, inst)
		}
	}
	if err := s.host.CheckTask(rec.Callback, payload); err != nil {
		if errors.Is(err, object.ErrNoMethod) && rec.Kind != TaskQueued {
			// The SDK's words for a schedule's unknown callback (agents 0.32.0).
			return Task{}, fmt.Errorf("%s: Unknown scheduled callback %q: not registered on this Scheduler: %w", op, rec.Callback, err)
		}
		if errors.Is(err, object.ErrNoMethod) {
			return Task{}, fmt.Errorf("%s: %w", op, err)
		}
		return Task{}, fmt.Errorf("%s: %w: %w", op, ErrTask, err)
	}
	class := s.classDefaults()
	if _, err := resolve(class, o.Retry); err != nil {
		return Task{}, err // A4's message, exactly
	}
	// Stored resolved, as the Agents SDK stores them (agents@0.32.0,
	// schedule() and queue() resolve them at push): a later change of the
	// class's defaults leaves the task as it was made. The breaker, dosim's
	// own (rule A7), is stored as given.
	m := merge(class, o.Retry)
	rec.Retry = storedRetry{MaxAttempts: m.MaxAttempts, BaseDelayMs: m.BaseDelayMs, MaxDelayMs: m.MaxDelayMs, Breaker: o.Retry.Breaker}
	rec.DeadLetter, rec.Independent = o.DeadLetter, o.Independent
	if rec.Kind != TaskQueued && o.idempotent(rec.Kind) {
		same, ok, err := s.sameSchedule(ctx, &rec)
		if err != nil {
			return Task{}, fmt.Errorf("%s: %w", op, err)
		}
		if ok {
			return same.task(), nil
		}
	}
	seq, err := s.nextSeq(ctx)
	if err != nil {
		return Task{}, fmt.Errorf("%s: %w", op, err)
	}
	rec.Seq = seq
	if err := s.storage.Put(ctx, rec.key(), rec); err != nil {
		return Task{}, fmt.Errorf("%s: %w", op, err)
	}
	s.index(ctx).add(&rec)
	s.reportDue(ctx, rec.lane())
	return rec.task(), nil
}

// sameSchedule finds the stored schedule an idempotent rec takes the
// place of, as the SDK's findMatchingJob does: the same kind and callback,
// an equal payload, and for cron and interval schedules the same
// expression or interval. The first made wins.
func (s *turn) sameSchedule(ctx context.Context, rec *taskRecord) (taskRecord, bool, error) {
	recs, err := s.records(ctx, scheduleKeys)
	if err != nil {
		return taskRecord{}, false, err
	}
	for _, r := range recs {
		switch {
		case r.Kind != rec.Kind, r.Callback != rec.Callback, !reflect.DeepEqual(r.Payload, rec.Payload):
		case r.Kind == TaskCron && r.Cron != rec.Cron, r.Kind == TaskInterval && r.Every != rec.Every:
		default:
			return r, true, nil
		}
	}
	return taskRecord{}, false, nil
}

// TaskCounts returns how many scheduled tasks and queue items the storage
// holds (rule C8: what an object leaves behind). Package runtime counts
// them for every object, built or evicted (runtime.Backlog).
func TaskCounts(s *object.Storage) (schedules, queued int) {
	return object.Hosting(seal.Key{}).Count(s, scheduleKeys), object.Hosting(seal.Key{}).Count(s, queueKeys)
}

// ListSchedules returns the object's scheduled tasks, earliest first.
func (a *Agent) ListSchedules(ctx context.Context) ([]Task, error) {
	s, err := a.turn(ctx, "agent.Agent.ListSchedules")
	if err != nil {
		return nil, err
	}
	recs, err := s.records(ctx, scheduleKeys)
	if err != nil {
		return nil, fmt.Errorf("agent.Agent.ListSchedules: %w", err)
	}
	sortByDue(recs)
	out := make([]Task, len(recs))
	for i := range recs {
		out[i] = recs[i].task()
	}
	return out, nil
}

// CancelSchedule removes the scheduled task with id and reports whether
// there was one. A run in progress finishes its current attempt and makes
// no other, and a recurring task is not scheduled again.
func (a *Agent) CancelSchedule(ctx context.Context, id string) (bool, error) {
	s, err := a.turn(ctx, "agent.Agent.CancelSchedule")
	if err != nil {
		return false, err
	}
	seq, ok := parseID(id, 's')
	if !ok {
		return false, fmt.Errorf("agent.Agent.CancelSchedule(%q): %w: not a schedule id (schedule ids look like s12)", id, ErrTask)
	}
	return s.removeTask(ctx, wire.LaneSchedule, seq)
}

func (s *turn) removeTask(ctx context.Context, lane wire.Lane, seq uint64) (bool, error) {
	key := taskKey(lane, seq)
	var waiting *taskRecord // a run waiting for its next attempt: it ends, cancelled
	if b, ok := s.index(ctx).blocked(lane); ok && b == seq {
		var rec taskRecord
		if found, err := s.storage.Get(ctx, key, &rec); err == nil && found {
			waiting = &rec
		}
		if _, err := s.storage.Delete(ctx, retryKey(lane, seq)); err != nil {
			return false, err
		}
	}
	found, err := s.storage.Delete(ctx, key)
	if err != nil {
		return false, err
	}
	if waiting != nil {
		s.event(waiting.event(object.EventTaskDone, object.Event{Note: "cancelled"}))
	}
	s.index(ctx).remove(lane, seq)
	s.reportDue(ctx, lane)
	return found, nil
}

// records reads every task stored under prefix, in key (creation) order.
func (s *turn) records(ctx context.Context, prefix string) ([]taskRecord, error) {
	es, err := s.storage.List(ctx, object.ListOptions{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	out := make([]taskRecord, len(es))
	for i, e := range es {
		if err := e.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("%w: %s holds no task: %w", object.ErrStorage, e.Key, err)
		}
	}
	return out, nil
}

// sortByDue orders tasks by due time, then by creation (records come in
// creation order).
func sortByDue(recs []taskRecord) {
	slices.SortStableFunc(recs, func(a, b taskRecord) int { return a.Due.Compare(b.Due) })
}
