package platformtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
)

// world is what outlives an instance, as worker.js's module-level maps do:
// how often each method ran, by object name, and each alarm's deliveries.
type world struct {
	runs   map[string]int
	alarms map[string]*alarmLog
	wsLogs map[string]*wsLog
}

func newWorld() *world { return &world{runs: map[string]int{}, alarms: map[string]*alarmLog{}} }

func (w *world) bump(name, what string) { w.runs[name+"/"+what]++ }

// alarmLog is one alarm's scheduled instant and deliveries.
type alarmLog struct {
	scheduled  time.Time
	deliveries []delivery
}

// delivery is what the handler saw on one delivery.
type delivery struct {
	at                 time.Time
	RetryCount         int  `json:"retryCount"`
	IsRetry            bool `json:"isRetry"`
	GetAlarmInsideNull bool `json:"getAlarmInsideNull"`
}

// codeError is a user's own error type with a code, as worker.js throws
// an Error with a code property.
type codeError struct {
	Code string
	Msg  string
}

func (e *codeError) Error() string { return e.Msg }

// mirror is the Go class that behaves as worker.js's Base: one method for
// each of its methods, with the same names (capitalised) and results.
type mirror struct {
	st *object.State
	w  *world
}

// alarmCfg is what armAlarm keeps for the handler: the alarm's log name
// and how many deliveries fail (-1: all).
type alarmCfg struct {
	Name  string `json:"name"`
	Fails int    `json:"fails"`
}

func (m *mirror) Methods() object.Methods {
	return object.Methods{
		"Ping":          object.Func(func(ctx context.Context) (string, error) { return "pong", nil }),
		"ThrowWith":     object.Func(m.throwWith),
		"Abort":         object.Func(m.abort),
		"HoldThenAbort": object.Func(m.holdThenAbort),
		"Hold": object.Func(func(ctx context.Context, name string, ms int) (string, error) {
			m.w.bump(name, "hold")
			return "held", m.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error {
				return m.st.Sleep(ctx, time.Duration(ms)*time.Millisecond)
			})
		}),
		"Slow": object.Func(func(ctx context.Context, name string, ms int) (string, error) {
			m.w.bump(name, "slow")
			return "slept", m.st.Sleep(ctx, time.Duration(ms)*time.Millisecond)
		}),
		"Count": object.Func(func(ctx context.Context, name string) (int, error) {
			m.w.bump(name, "count")
			return m.w.runs[name+"/count"], nil
		}),
		"Runs": object.Func(func(ctx context.Context, name, what string) (int, error) {
			return m.w.runs[name+"/"+what], nil
		}),
		"Incr":     object.Func(m.incr),
		"GetN":     object.Func(func(ctx context.Context) (int, error) { return m.getN(ctx) }),
		"Storage":  object.Func(m.storage),
		"ArmAlarm": object.Func(m.armAlarm),
		"GetAlarm": object.Func(m.getAlarm),
		// worker.js's alarmLog(name).deliveries.length
		"AlarmDeliveries": object.Func(func(ctx context.Context, name string) (int, error) {
			return len(m.w.alarms[name].deliveries), nil
		}),
		"Built": object.Func(func(ctx context.Context) (int, error) {
			return m.w.runs[m.st.ID().String()+"/built"], nil
		}),
		"WsInfo":   object.Func(m.wsInfo),
		"WsAuto":   object.Func(m.wsAuto),
		"WsLimits": object.Func(m.wsLimits),
		"DeleteAlarm": object.Func(func(ctx context.Context) error {
			return m.st.DeleteAlarm(ctx)
		}),
		"SetAndRead":         object.Func(m.setAndRead),
		"DeleteAllWithAlarm": object.Func(m.deleteAllWithAlarm),
	}
}

// throwWith fails with message and the properties' Go counterparts: a
// *stub.Error flagged Retryable or Overloaded, a codeError for a code.
func (m *mirror) throwWith(ctx context.Context, name, message string, props map[string]any) error {
	m.w.bump(name, "throwWith")
	switch {
	case props["retryable"] == true:
		return &stub.Error{Retryable: true, Msg: message}
	case props["overloaded"] == true:
		return &stub.Error{Overloaded: true, Msg: message}
	case props["durableObjectReset"] == true:
		return &stub.Error{DurableObjectReset: true, Msg: message}
	case props["code"] != nil:
		code, _ := props["code"].(string)
		return &codeError{Code: code, Msg: message}
	}
	return errors.New(message)
}

// abort is ctx.abort(reason); "" is ctx.abort() (worker.js passes null).
func (m *mirror) abort(ctx context.Context, name, reason string) (string, error) {
	m.w.bump(name, "abort")
	m.st.Abort(reason)
	return "after abort", nil
}

// holdThenAbort holds the input gate for ms, then aborts inside the block.
func (m *mirror) holdThenAbort(ctx context.Context, name string, ms int, reason string) (string, error) {
	m.w.bump(name, "hold")
	err := m.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error {
		if err := m.st.Sleep(ctx, time.Duration(ms)*time.Millisecond); err != nil {
			return err
		}
		m.st.Abort(reason)
		return nil
	})
	return "after abort", err
}

// incr is a read-modify-write of "n", with a timer between when sleepMs > 0.
func (m *mirror) incr(ctx context.Context, sleepMs int) (int, error) {
	v, err := m.getN(ctx)
	if err != nil {
		return 0, err
	}
	if sleepMs > 0 {
		if err := m.st.Sleep(ctx, time.Duration(sleepMs)*time.Millisecond); err != nil {
			return 0, err
		}
	}
	return v + 1, m.st.Storage().Put(ctx, "n", v+1)
}

func (m *mirror) getN(ctx context.Context) (int, error) {
	n, _, err := object.GetAs[int](ctx, m.st.Storage(), "n")
	return n, err
}

// armAlarm sets the alarm delayMs from now; the handler fails its first
// fails deliveries (-1: all). It returns the instant in Unix milliseconds.
func (m *mirror) armAlarm(ctx context.Context, name string, delayMs, fails int) (int64, error) {
	// In storage, as worker.js keeps it: an instance after a reset reads it.
	if err := m.st.Storage().Put(ctx, "alarm-cfg", alarmCfg{Name: name, Fails: fails}); err != nil {
		return 0, err
	}
	at := m.st.Now().Add(time.Duration(delayMs) * time.Millisecond)
	if err := m.st.SetAlarm(ctx, at); err != nil {
		return 0, err
	}
	m.w.alarms[name] = &alarmLog{scheduled: at}
	return at.UnixMilli(), nil
}

// Alarm logs the delivery and fails while it should.
func (m *mirror) Alarm(ctx context.Context, info object.AlarmInfo) error {
	cfg, _, err := object.GetAs[alarmCfg](ctx, m.st.Storage(), "alarm-cfg")
	if err != nil {
		return err
	}
	log := m.w.alarms[cfg.Name]
	_, set, err := m.st.GetAlarm(ctx)
	if err != nil {
		return err
	}
	log.deliveries = append(log.deliveries, delivery{at: m.st.Now(), RetryCount: info.RetryCount, IsRetry: info.IsRetry, GetAlarmInsideNull: !set})
	if cfg.Fails < 0 || len(log.deliveries) <= cfg.Fails {
		return errors.New("alarm fails")
	}
	return nil
}

// setAndRead is worker.js's setAndRead: the alarm offsetMs from now, then
// how many whole seconds ahead of now GetAlarm says it is (nil: none).
func (m *mirror) setAndRead(ctx context.Context, offsetMs int) (*int64, error) {
	now := m.st.Now()
	if err := m.st.SetAlarm(ctx, now.Add(time.Duration(offsetMs)*time.Millisecond)); err != nil {
		return nil, err
	}
	at, set, err := m.st.GetAlarm(ctx)
	if err != nil || !set {
		return nil, err
	}
	s := max(0, at.Sub(now).Round(time.Second).Milliseconds()/1000)
	return &s, nil
}

// deleteAllWithAlarm is worker.js's: a key and an alarm, then DeleteAll.
func (m *mirror) deleteAllWithAlarm(ctx context.Context) (map[string]any, error) {
	s := m.st.Storage()
	if err := s.Put(ctx, "x", 1); err != nil {
		return nil, err
	}
	if err := m.st.SetAlarm(ctx, m.st.Now().Add(time.Minute)); err != nil {
		return nil, err
	}
	if err := s.DeleteAll(ctx); err != nil {
		return nil, err
	}
	alarm, err := m.getAlarm(ctx)
	if err != nil {
		return nil, err
	}
	x, found, err := object.GetAs[int](ctx, s, "x")
	if err != nil {
		return nil, err
	}
	var got any
	if found {
		got = x
	}
	return map[string]any{"alarm": alarm, "x": got}, nil
}

// getAlarm is storage.getAlarm(): Unix milliseconds, or nil.
func (m *mirror) getAlarm(ctx context.Context) (*int64, error) {
	at, set, err := m.st.GetAlarm(ctx)
	if err != nil || !set {
		return nil, err
	}
	ms := at.UnixMilli()
	return &ms, nil
}

// storage runs one of worker.js's storage cases inside the object.
func (m *mirror) storage(ctx context.Context, which string) (map[string]any, error) {
	s := m.st.Storage()
	r := map[string]any{}
	switch which {
	case "empty-key":
		r["put"] = attempt(nil, s.Put(ctx, "", 1))
		v, _, err := object.GetAs[int](ctx, s, "")
		r["get"] = attempt(v, err)
	case "key-size":
		r["k2048"] = attempt(nil, s.Put(ctx, strings.Repeat("k", 2048), 1))
		r["k2049"] = attempt(nil, s.Put(ctx, strings.Repeat("k", 2049), 1))
	case "pairs":
		pairs(ctx, s, r)
	case "value-size":
		r["s131100"] = attempt(nil, s.Put(ctx, "v", strings.Repeat("x", 131100)))
		r["s131101"] = attempt(nil, s.Put(ctx, "w", strings.Repeat("x", 131101)))
		for _, n := range []int{131072, 131093, 131094} {
			r["bytes"+itoa(n)] = attempt(nil, s.Put(ctx, "b"+itoa(n), make([]byte, n)))
		}
	case "list":
		if err := s.PutMany(ctx, map[string]any{"a": 1, "b": 2, "c": 3}); err != nil {
			return nil, err
		}
		list(ctx, s, r)
	case "sql":
		sqlCase(ctx, m.st, r)
	case "sql-counters":
		sqlCounters(ctx, m.st, r)
	case "sql-writes":
		if err := sqlWrites(ctx, m.st, r); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("no storage case " + which)
	}
	return r, nil
}

// sqlCounters is worker.js's sql-counters case: statements' rows,
// rowsRead and rowsWritten, or rowsWritten alone.
func sqlCounters(ctx context.Context, st *object.State, r map[string]any) {
	db := st.SQL()
	c := func(query string) map[string]any {
		cur, err := db.Exec(ctx, query)
		if err != nil {
			return attempt(nil, err)
		}
		return attempt(map[string]any{"rows": cur.Len(), "read": cur.RowsRead, "written": cur.RowsWritten}, nil)
	}
	w := func(query string) map[string]any {
		cur, err := db.Exec(ctx, query)
		if err != nil {
			return attempt(nil, err)
		}
		return attempt(cur.RowsWritten, nil)
	}
	_, err := db.Exec(ctx, "CREATE TABLE u (k TEXT, n INTEGER)")
	if r["create"] = attempt(nil, err); err != nil {
		return // a key-value-backed class has no SQL
	}
	r["insert"] = c("INSERT INTO u VALUES ('a', 1), ('b', 2), ('c', 3)")
	r["scan"] = c("SELECT * FROM u")
	r["update"] = w("UPDATE u SET n = n + 1 WHERE k <> 'a'")
	r["multi"] = c("INSERT INTO u VALUES ('e', 5); UPDATE u SET n = 0 WHERE k = 'e'; SELECT * FROM u")
	r["multiWrite"] = c("SELECT * FROM u; INSERT INTO u VALUES ('f', 6)")
	r["delete"] = w("DELETE FROM u WHERE k = 'f'")
	r["deleteAll"] = c("DELETE FROM u")
}

// sqlWrites is worker.js's sql-writes case: its tables, then each
// statement's rowsWritten. The statements are worker.js's own
// (SQL_WRITES_SCHEMA, SQL_WRITES), read from it, so that both sides run
// the same list.
func sqlWrites(ctx context.Context, st *object.State, r map[string]any) error {
	schema, writes, err := workerSQLWrites()
	if err != nil {
		return err
	}
	db := st.SQL()
	for _, q := range schema {
		if _, err := db.Exec(ctx, q); err != nil {
			r["create"] = attempt(nil, err)
			return nil // a key-value-backed class has no SQL
		}
	}
	r["create"] = attempt(nil, nil)
	for _, w := range writes {
		c, err := db.Exec(ctx, w[1])
		if err != nil {
			r[w[0]] = attempt(nil, err)
			continue
		}
		r[w[0]] = attempt(c.RowsWritten, nil)
	}
	return nil
}

// workerSQLWrites reads SQL_WRITES_SCHEMA (its statements) and SQL_WRITES
// (its [key, statement] pairs) from testdata/worker.js.
func workerSQLWrites() (schema []string, writes [][2]string, err error) {
	src, err := os.ReadFile(filepath.Join("testdata", "worker.js"))
	if err != nil {
		return nil, nil, err
	}
	block := func(name string) (string, error) {
		_, after, ok := strings.Cut(string(src), "const "+name+" = [")
		body, _, ok2 := strings.Cut(after, "\n];")
		if !ok || !ok2 {
			return "", fmt.Errorf("worker.js has no %s", name)
		}
		return body, nil
	}
	body, err := block("SQL_WRITES_SCHEMA")
	if err != nil {
		return nil, nil, err
	}
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(body, -1) {
		schema = append(schema, m[1])
	}
	if body, err = block("SQL_WRITES"); err != nil {
		return nil, nil, err
	}
	for _, m := range regexp.MustCompile(`\["(\w+)", "([^"]*)"\]`).FindAllStringSubmatch(body, -1) {
		writes = append(writes, [2]string{m[1], m[2]})
	}
	if len(schema) == 0 || len(writes) == 0 {
		return nil, nil, errors.New("worker.js: SQL_WRITES_SCHEMA or SQL_WRITES is empty")
	}
	return schema, writes, nil
}

// sqlCase is worker.js's sql case: statements and their words, each as
// exec(...).toArray() or exec(...).one(); on a key-value-backed object
// each fails, as it has no SQL API.
func sqlCase(ctx context.Context, st *object.State, r map[string]any) {
	q := func(query string, args ...any) map[string]any {
		c, err := st.SQL().Exec(ctx, query, args...)
		if err != nil {
			return attempt(nil, err)
		}
		rows := []any{}
		for _, row := range c.Rows() {
			rows = append(rows, row)
		}
		return attempt(rows, nil)
	}
	one := func(query string) map[string]any {
		c, err := st.SQL().Exec(ctx, query)
		if err != nil {
			return attempt(nil, err)
		}
		var row map[string]any
		return attempt(row, c.One(&row))
	}
	r["create"] = q("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)")
	r["insert"] = q("INSERT INTO t (name, n) VALUES (?, ?), (?, ?)", "a", 1, "b", 2)
	r["select"] = q("SELECT name, n FROM t ORDER BY name")
	r["unique"] = q("INSERT INTO t (name, n) VALUES ('a', 3)")
	r["params"] = q("SELECT name FROM t WHERE name = ?")
	r["paramsExtra"] = q("SELECT name FROM t WHERE name = ?", "a", "b")
	r["empty"] = q("")
	r["syntax"] = q("SELEC 1")
	r["multi"] = q("INSERT INTO t (name, n) VALUES ('c', 3); INSERT INTO nosuch VALUES (1)")
	r["afterMulti"] = q("SELECT name FROM t ORDER BY name")
	r["oneNone"] = one("SELECT n FROM t WHERE name = 'zz'")
	r["oneMany"] = one("SELECT n FROM t")
	r["one"] = one("SELECT n FROM t WHERE name = 'a'")
	r["blob"] = q("SELECT length(?) AS len", make([]byte, 600000))
	r["rename"] = q("ALTER TABLE t RENAME TO t2")
	r["renameColumn"] = q("ALTER TABLE t2 RENAME COLUMN n TO m")
	r["afterRename"] = q("SELECT name, m FROM t2 ORDER BY name")
	// Text in columns declared as dates reads back as stored.
	r["dates"] = q("CREATE TABLE d (a DATETIME, b DATE, c TIMESTAMP)")
	r["datesInsert"] = q("INSERT INTO d VALUES (?, ?, ?)", "2025-01-01T00:15:00.123Z", "2025-01-01", "2025-01-01 00:15:00.5")
	r["datesRead"] = q("SELECT a, b, c FROM d")
}

// pairs is the case of 128 and 129 keys in one put, get and delete.
func pairs(ctx context.Context, s *object.Storage, r map[string]any) {
	many := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m["k"+itoa(i)] = i
		}
		return m
	}
	keys := func(n int) []string {
		k := make([]string, n)
		for i := range n {
			k[i] = "k" + itoa(i)
		}
		return k
	}
	r["put128"] = attempt(nil, s.PutMany(ctx, many(128)))
	r["put129"] = attempt(nil, s.PutMany(ctx, many(129)))
	for _, n := range []int{128, 129} {
		got, err := s.GetMany(ctx, keys(n))
		r["get"+itoa(n)] = attempt(len(got), err)
	}
	for _, n := range []int{128, 129} {
		r["delete"+itoa(n)] = attempt(s.DeleteMany(ctx, keys(n)))
	}
}

// list is the list case: options as worker.js writes them, through
// ParseListOptions, as untyped input comes.
func list(ctx context.Context, s *object.Storage, r map[string]any) {
	keys := func(m map[string]any) (any, error) {
		opts, err := object.ParseListOptions(m)
		if err != nil {
			return nil, err
		}
		es, err := s.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, e := range es {
			out = append(out, e.Key)
		}
		return out, nil
	}
	r["all"] = attempt(keys(map[string]any{}))
	r["startAfterEnd"] = attempt(keys(map[string]any{"start": "c", "end": "a"}))
	r["startAfter"] = attempt(keys(map[string]any{"startAfter": "a"}))
	r["limit0"] = attempt(keys(map[string]any{"limit": 0.0}))
	r["limitNeg"] = attempt(keys(map[string]any{"limit": -1.0}))
	r["startAndStartAfter"] = attempt(keys(map[string]any{"start": "a", "startAfter": "b"}))
}
