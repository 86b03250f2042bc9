package platformtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// dosimCase is a case's Go side: the same program as worker.js's case of
// the same name, run in a dosim runtime.
type dosimCase struct {
	name string
	slow bool // waits for real retries on workerd: only with DOSIM_WORKERD_SLOW=1
	// waits: it sleeps seconds of real time on workerd (an alarm's retry):
	// it runs in parallel with the others that wait.
	waits bool
	run   func(ctx context.Context, e *env) (map[string]any, error)
}

// env is what a case's Go side runs with: the runtime, the namespace of
// mirror objects, their world, and the case's object name.
type env struct {
	rt    *runtime.Runtime
	ns    *runtime.Namespace
	w     *world
	name  string
	class string // "sql" (SQLite-backed) or "kv" (key-value-backed)
}

// get is ns.get(ns.idFromName(name)).
func (e *env) get(name string, opts ...stub.Option) (*stub.Stub, error) {
	return e.ns.GetByName(name, opts...)
}

// call is attempt(() => stub.method(args...)) on a new stub for name
// when s is nil.
func (e *env) call(ctx context.Context, s *stub.Stub, name, method string, args ...any) map[string]any {
	if s == nil {
		var err error
		if s, err = e.get(name); err != nil {
			return attempt(nil, err)
		}
	}
	return attempt(s.Call(ctx, method, args...))
}

// storageCase is a storage case: it runs inside the object.
func storageCase(which string) dosimCase {
	return dosimCase{name: "storage-" + which, run: func(ctx context.Context, e *env) (map[string]any, error) {
		s, err := e.get(e.name)
		if err != nil {
			return nil, err
		}
		v, err := s.Call(ctx, "Storage", which)
		if err != nil {
			return nil, err
		}
		r, _ := v.(map[string]any)
		return r, nil
	}}
}

// cases are the platform-observable cases, in worker.js's order.
var cases = []dosimCase{
	{name: "websocket-chat", waits: true, run: websocketChat},
	{name: "websocket-wake", waits: true, run: websocketWake},
	{name: "websocket-auto", run: websocketAuto},
	{name: "websocket-drop", waits: true, run: websocketDrop},
	{name: "websocket-limits", run: func(ctx context.Context, e *env) (map[string]any, error) {
		s, err := e.get(e.name)
		if err != nil {
			return nil, err
		}
		v, err := s.Call(ctx, "WsLimits")
		if err != nil {
			return nil, err
		}
		r, _ := v.(map[string]any)
		return r, nil
	}},
	{name: "error-props", run: errorProps},
	{name: "missing-method", run: func(ctx context.Context, e *env) (map[string]any, error) {
		s, err := e.get(e.name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"nope": e.call(ctx, s, "", "nope"), "after": e.call(ctx, s, "", "Ping")}, nil
	}},
	{name: "stub-options", run: stubOptions},
	{name: "abort", run: abort},
	{name: "abort-while-running", run: abortWhileRunning},
	{name: "queued-at-reset", run: queuedAtReset},
	{name: "input-gate", run: inputGate},
	storageCase("empty-key"),
	storageCase("key-size"),
	storageCase("pairs"),
	storageCase("value-size"),
	storageCase("list"),
	storageCase("sql"),
	storageCase("sql-counters"),
	storageCase("sql-writes"),
	{name: "alarm-retry-once", waits: true, run: alarmRetryOnce},
	{name: "alarm-past", waits: true, run: alarmPast},
	{name: "alarm-delete-all", run: func(ctx context.Context, e *env) (map[string]any, error) {
		s, err := e.get(e.name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"after": e.call(ctx, s, "", "DeleteAllWithAlarm")}, nil
	}},
	{name: "alarm-set-during-retry", waits: true, run: alarmSetDuringRetry},
	{name: "block-timeout", slow: true, run: func(ctx context.Context, e *env) (map[string]any, error) {
		s, err := e.get(e.name)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"held":     e.call(ctx, s, e.name, "Hold", e.name, 35000),
			"sameStub": e.call(ctx, s, "", "Ping"),
			"fresh":    e.call(ctx, nil, e.name, "Ping"),
		}, nil
	}},
	{name: "alarm-retry-all", slow: true, run: alarmRetryAll},
}

func errorProps(ctx context.Context, e *env) (map[string]any, error) {
	r := map[string]any{}
	props := map[string]map[string]any{
		"retryable":  {"retryable": true},
		"overloaded": {"overloaded": true},
		"code":       {"code": "E_CUSTOM"},
		"reset":      {"durableObjectReset": true},
	}
	for _, k := range []string{"retryable", "overloaded", "code", "reset"} {
		n := e.name + "-" + k
		s, err := e.get(n)
		if err != nil {
			return nil, err
		}
		r[k] = e.call(ctx, s, n, "ThrowWith", n, "boom "+k, props[k])
		r[k+"Runs"] = e.call(ctx, s, n, "Runs", n, "throwWith")
	}
	return r, nil
}

func stubOptions(ctx context.Context, e *env) (map[string]any, error) {
	opt := func(retry map[string]any) (any, error) {
		opts, err := stub.ParseOptions(map[string]any{"retry": retry})
		if err != nil {
			return nil, err
		}
		s, err := e.get(e.name, opts...)
		if err != nil {
			return nil, err
		}
		return s.Call(ctx, "Ping")
	}
	return map[string]any{
		"maxRetries11": attempt(opt(map[string]any{"maxRetries": 11.0})),
		"maxRetriesX":  attempt(opt(map[string]any{"maxRetries": "x"})),
		"timeoutMs100": attempt(opt(map[string]any{"timeoutMs": 100.0})),
		"timeoutMsX":   attempt(opt(map[string]any{"timeoutMs": "x"})),
		"valid":        attempt(opt(map[string]any{"maxRetries": 2.0, "timeoutMs": 1000.0})),
		"unknownKey":   attempt(opt(map[string]any{"maxRetries": 2.0, "maxRetry": 3.0})),
	}, nil
}

func abort(ctx context.Context, e *env) (map[string]any, error) {
	r := map[string]any{}
	for _, c := range []struct{ k, reason string }{{"reason", "custom reason"}, {"none", ""}} {
		n := e.name + "-" + c.k
		s, err := e.get(n)
		if err != nil {
			return nil, err
		}
		r[c.k] = e.call(ctx, s, n, "Abort", n, c.reason)
		r[c.k+"Runs"] = e.call(ctx, nil, n, "Runs", n, "abort")
		r[c.k+"SameStub"] = e.call(ctx, s, n, "Ping")
	}
	return r, nil
}

// abortWhileRunning: a request sleeps for a second; at 100 ms another
// aborts the object.
func abortWhileRunning(ctx context.Context, e *env) (map[string]any, error) {
	var running, aborter map[string]any
	var failedAt time.Time
	start := e.rt.Now()
	g := e.rt.Group(ctx)
	g.Go(func(ctx context.Context) error {
		running = e.call(ctx, nil, e.name, "Slow", e.name, 1000)
		failedAt = e.rt.Now()
		return nil
	})
	g.Go(func(ctx context.Context) error {
		if err := e.rt.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
		aborter = e.call(ctx, nil, e.name, "Abort", e.name, "abort from another request")
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return map[string]any{
		"running":                          running,
		"runningFailedBeforeItsSleepEnded": attempt(failedAt.Sub(start) < 900*time.Millisecond, nil),
		"aborter":                          aborter,
	}, nil
}

// queuedAtReset: the first call holds the gate for 300 ms and aborts;
// three more arrive at 50 ms and wait behind it.
func queuedAtReset(ctx context.Context, e *env) (map[string]any, error) {
	got := make([]map[string]any, 4)
	g := e.rt.Group(ctx)
	g.Go(func(ctx context.Context) error {
		got[0] = e.call(ctx, nil, e.name, "HoldThenAbort", e.name, 300, "reset while others wait")
		return nil
	})
	for i := 1; i < 4; i++ {
		g.Go(func(ctx context.Context) error {
			if err := e.rt.Sleep(ctx, 50*time.Millisecond); err != nil {
				return err
			}
			got[i] = e.call(ctx, nil, e.name, "Count", e.name)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r := map[string]any{"first": got[0], "countRuns": e.call(ctx, nil, e.name, "Runs", e.name, "count")}
	for i, q := range got[1:] {
		r[fmt.Sprint("queued", i)] = q
	}
	return r, nil
}

// inputGate: two read-modify-writes at once, with no timer between the
// read and the write, then with one.
func inputGate(ctx context.Context, e *env) (map[string]any, error) {
	r := map[string]any{}
	for _, c := range []struct {
		k  string
		ms int
	}{{"storage", 0}, {"timer", 20}} {
		n := e.name + "-" + c.k
		seen := make([]int, 2)
		g := e.rt.Group(ctx)
		for i := range 2 {
			g.Go(func(ctx context.Context) error {
				s, err := e.get(n)
				if err != nil {
					return err
				}
				seen[i], err = stub.CallAs[int](ctx, s, "Incr", c.ms)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		slices.Sort(seen)
		r[c.k+"Seen"] = attempt(seen, nil)
		r[c.k+"Final"] = e.call(ctx, nil, n, "GetN")
	}
	return r, nil
}

// alarmRetryOnce: an alarm that fails once; getAlarm from a caller while
// its retry waits.
func alarmRetryOnce(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	at, err := stub.CallAs[int64](ctx, s, "ArmAlarm", e.name, 100, 1)
	if err != nil {
		return nil, err
	}
	if err := e.rt.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	during, err := stub.CallAs[*int64](ctx, s, "GetAlarm")
	if err != nil {
		return nil, err
	}
	for i := 0; i < 100 && len(e.w.alarms[e.name].deliveries) < 2; i++ {
		if err := e.rt.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	if err := e.rt.Sleep(ctx, 300*time.Millisecond); err != nil {
		return nil, err
	}
	return map[string]any{
		"getAlarmDuringWaitIsScheduled": attempt(during != nil && *during == at, nil),
		"deliveries":                    attempt(e.w.alarms[e.name].deliveries, nil),
		"afterAll":                      e.call(ctx, s, "", "GetAlarm"),
	}, nil
}

// alarmRetryAll: an alarm that always fails, until the platform gives up,
// and what getAlarm, a new setAlarm, deleteAlarm and a reset do after
// that, on three objects at once ("set", "del", "reset"), as worker.js.
func alarmRetryAll(ctx context.Context, e *env) (map[string]any, error) {
	ks := []string{"set", "del", "reset"}
	rs := make([]map[string]any, len(ks))
	g := e.rt.Group(ctx)
	for i, k := range ks {
		g.Go(func(ctx context.Context) error {
			var err error
			rs[i], err = retryAllOne(ctx, e, k)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r := map[string]any{}
	for _, m := range rs {
		maps.Copy(r, m)
	}
	return r, nil
}

// retryAllOne is alarm-retry-all on the object of k.
func retryAllOne(ctx context.Context, e *env, k string) (map[string]any, error) {
	on := e.name + "-" + k
	s, err := e.get(on)
	if err != nil {
		return nil, err
	}
	at, err := stub.CallAs[int64](ctx, s, "ArmAlarm", on, 100, -1)
	if err != nil {
		return nil, err
	}
	// As worker.js: until no delivery came for 100 s, at most 7 minutes,
	// asking the object (which keeps it from being evicted, rule L5).
	last, quiet := 0, 0
	for i := 0; i < 840 && quiet < 200; i++ {
		if err := e.rt.Sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
		n, err := stub.CallAs[int](ctx, s, "AlarmDeliveries", on)
		if err != nil {
			return nil, err
		}
		if n == last {
			quiet++
		} else {
			last, quiet = n, 0
		}
	}
	ds := e.w.alarms[on].deliveries
	counts, secs, backoff := []int{}, []int64{}, true
	for i, d := range ds {
		counts = append(counts, d.RetryCount)
		if i > 0 { // as worker.js: 2 s·2^(i-1), a quarter more when SQLite-backed, half a second of slack
			w, base := d.at.Sub(ds[i-1].at), 2*time.Second<<(i-1)
			jitter := time.Duration(0)
			if e.class == "sql" {
				jitter = base / 4
			}
			secs = append(secs, w.Round(time.Second).Milliseconds()/1000)
			backoff = backoff && w >= base-50*time.Millisecond && w <= base+jitter+500*time.Millisecond
		}
	}
	r := map[string]any{
		k + "Deliveries":         attempt(len(ds), nil),
		k + "RetryCounts":        attempt(counts, nil),
		k + "WaitsAreTheBackoff": attempt(backoff, nil),
	}
	if e.class == "kv" { // exact: the same whole seconds
		r[k+"WaitsS"] = attempt(secs, nil)
	}
	after, err := stub.CallAs[*int64](ctx, s, "GetAlarm")
	if err != nil {
		return nil, err
	}
	r[k+"AfterAllIsScheduled"] = attempt(after != nil && *after == at, nil)
	r[k+"AfterAllIsNull"] = attempt(after == nil, nil)
	return r, afterGiveUp(ctx, e, k, on, s, r)
}

// afterGiveUp is the end of alarm-retry-all on the object on: a reset, a
// deleteAlarm or a new setAlarm, by k.
func afterGiveUp(ctx context.Context, e *env, k, on string, s *stub.Stub, r map[string]any) error {
	switch k {
	case "reset":
		_, _ = s.Call(ctx, "Abort", on, "reset after the give-up")
		fresh, err := e.get(on)
		if err != nil {
			return err
		}
		r["resetAfterResetIsNull"] = alarmIsNull(ctx, fresh)
		if err := e.rt.Sleep(ctx, 3*time.Second); err != nil {
			return err
		}
		r["resetDeliveriesAfterReset"] = attempt(len(e.w.alarms[on].deliveries), nil)
	case "del":
		r["delDelete"] = e.call(ctx, s, "", "DeleteAlarm")
		r["delAfterDeleteIsNull"] = alarmIsNull(ctx, s)
	default:
		again := on + "-again"
		at2, err := stub.CallAs[int64](ctx, s, "ArmAlarm", again, 100, 0)
		if err != nil {
			return err
		}
		now, err := stub.CallAs[*int64](ctx, s, "GetAlarm")
		if err != nil {
			return err
		}
		r["setGetAlarmIsNew"] = attempt(now != nil && *now == at2, nil)
		for i := 0; i < 50 && len(e.w.alarms[again].deliveries) < 1; i++ {
			if err := e.rt.Sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		if err := e.rt.Sleep(ctx, 300*time.Millisecond); err != nil {
			return err
		}
		type try struct {
			RetryCount int  `json:"retryCount"`
			IsRetry    bool `json:"isRetry"`
		}
		tries := []try{}
		for _, d := range e.w.alarms[again].deliveries {
			tries = append(tries, try{d.RetryCount, d.IsRetry})
		}
		r["setAgainDeliveries"] = attempt(tries, nil)
		r["setAgainAfterIsNull"] = alarmIsNull(ctx, s)
	}
	return nil
}

// alarmIsNull is attempt(async () => (await stub.getAlarm()) === null).
func alarmIsNull(ctx context.Context, s *stub.Stub) map[string]any {
	at, err := stub.CallAs[*int64](ctx, s, "GetAlarm")
	return attempt(at == nil, err)
}

// runDosim runs c's Go side in a new runtime (seed 1) and returns its
// observation, made plain JSON.
func runDosim(ctx context.Context, c dosimCase, class string) (map[string]any, error) {
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	w := newWorld()
	var opts []runtime.NamespaceOption
	if class == "kv" {
		opts = append(opts, runtime.KeyValueBacked())
	}
	ns := rt.Namespace("OBJ", func(st *object.State) object.Object {
		w.bump(st.ID().String(), "built")
		return &mirror{st: st, w: w}
	}, opts...)
	e := &env{rt: rt, ns: ns, w: w, name: c.name + "-" + class, class: class}
	var obs map[string]any
	err := rt.Run(func(ctx context.Context) error {
		var err error
		obs, err = c.run(ctx, e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dosim, seed %d: %w", rt.Seed(), err)
	}
	return normalize(obs)
}

// alarmPast is worker.js's alarm-past.
func alarmPast(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	if _, err := stub.CallAs[int64](ctx, s, "ArmAlarm", e.name, 3600000, 0); err != nil {
		return nil, err
	}
	ahead, err := stub.CallAs[*int64](ctx, s, "SetAndRead", -60000)
	if err != nil {
		return nil, err
	}
	if err := e.rt.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return map[string]any{
		"getAlarmSecondsAhead": attempt(ahead, nil),
		"deliveries":           attempt(len(e.w.alarms[e.name].deliveries), nil),
	}, nil
}

// alarmSetDuringRetry is worker.js's alarm-set-during-retry.
func alarmSetDuringRetry(ctx context.Context, e *env) (map[string]any, error) {
	s, err := e.get(e.name)
	if err != nil {
		return nil, err
	}
	if _, err := stub.CallAs[int64](ctx, s, "ArmAlarm", e.name, 100, 1); err != nil {
		return nil, err
	}
	if err := e.rt.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	ahead, err := stub.CallAs[*int64](ctx, s, "SetAndRead", 100)
	if err != nil {
		return nil, err
	}
	if err := e.rt.Sleep(ctx, 4*time.Second); err != nil {
		return nil, err
	}
	counts := []int{}
	for _, d := range e.w.alarms[e.name].deliveries {
		counts = append(counts, d.RetryCount)
	}
	return map[string]any{
		"getAlarmSecondsAhead": attempt(ahead, nil),
		"retryCounts":          attempt(counts, nil),
		"afterAll":             e.call(ctx, s, "", "GetAlarm"),
	}, nil
}
