package agent

import "time"

// TaskKind says what made a task and how it repeats.
type TaskKind string

// The kinds of task. The names are the Agents SDK's.
const (
	TaskDelayed   TaskKind = "delayed"   // After: runs once after a delay
	TaskScheduled TaskKind = "scheduled" // At: runs once at an instant
	TaskCron      TaskKind = "cron"      // Cron: runs on a cron expression, again and again
	TaskInterval  TaskKind = "interval"  // Every: runs every interval
	TaskQueued    TaskKind = "queued"    // Queue: runs once, in order
)

// When says when a scheduled task runs: make it with After, At, Cron or
// Every.
type When struct {
	kind TaskKind
	d    time.Duration
	at   time.Time
	cron string
}

// After runs the task once, d of virtual time from now (at once when d is
// negative, as the Agents SDK's schedule(-10, cb) does).
func After(d time.Duration) When { return When{kind: TaskDelayed, d: d} }

// At runs the task once at t; an instant already past runs it at once.
func At(t time.Time) When { return When{kind: TaskScheduled, at: t} }

// Cron runs the task at every instant a standard five-field cron
// expression (minute hour day-of-month month day-of-week, or a descriptor
// such as "@hourly") names, in the virtual clock's time zone (UTC unless
// runtime.WithStart says otherwise), parsed by github.com/robfig/cron/v3.
func Cron(expr string) When { return When{kind: TaskCron, cron: expr} }

// Every runs the task every d of virtual time (d > 0), the first time d
// from now; each next run is d after the previous one ended.
func Every(d time.Duration) When { return When{kind: TaskInterval, d: d} }

// MaxInterval is the longest interval Every takes: the Agents SDK's
// scheduleEvery refuses more than 2,592,000 seconds (30 days).
const MaxInterval = 30 * 24 * time.Hour
