package object

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// How a query becomes statements (cut, remembered per text), how one
// statement runs on the connection (rawCursor, runAs) and how arguments
// bind to its ? marks.

// sqlCuts remembers how queries cut into statements (the cut depends on
// the text alone), so that a query is parsed once per run, by the driver
// that runs it, after the first time: at most maxSQLCuts queries, starting
// again when full.
var sqlCuts struct {
	sync.RWMutex
	m map[string][]sqlStmt
}

const maxSQLCuts = 1024

// sqlCut gives the statements of a query one at a time: from sqlCuts
// when the query was seen before; else SQLite's parser cuts it
// (sqlSplitter) as the statements run, and once all of them were cut,
// sqlCuts keeps them.
type sqlCut struct {
	query string
	known []sqlStmt // from sqlCuts
	i     int
	sp    *sqlSplitter // nil once done
	seen  []sqlStmt
	multi bool
}

// cut starts cutting query; the caller calls done.
func (db *SQL) cut(query string) (*sqlCut, error) {
	sqlCuts.RLock()
	known, ok := sqlCuts.m[query]
	sqlCuts.RUnlock()
	if ok {
		return &sqlCut{query: query, known: known, multi: len(known) > 1}, nil
	}
	sp, err := db.split(query)
	if err != nil {
		return nil, err
	}
	return &sqlCut{query: query, sp: sp}, nil
}

// next is the next statement; ok is false when none is left. After the
// first, multi says whether others follow.
func (c *sqlCut) next() (s sqlStmt, ok bool, err error) {
	if c.sp == nil {
		if c.i == len(c.known) {
			return sqlStmt{}, false, nil
		}
		c.i++
		return c.known[c.i-1], true, nil
	}
	s, ok, err = c.sp.next()
	switch {
	case err != nil:
		c.done()
	case !ok:
		rememberCut(c.query, c.seen)
		c.done()
	default:
		c.seen = append(c.seen, s)
		if len(c.seen) == 1 {
			if c.multi = c.sp.more(); !c.multi {
				rememberCut(c.query, c.seen)
				c.done()
			}
		}
	}
	return s, ok, err
}

// done frees the splitter, if it is still cutting.
func (c *sqlCut) done() {
	if c.sp != nil {
		c.sp.free()
		c.sp = nil
	}
}

// rememberCut keeps the statements query cut into.
func rememberCut(query string, stmts []sqlStmt) {
	sqlCuts.Lock()
	defer sqlCuts.Unlock()
	if sqlCuts.m == nil || len(sqlCuts.m) >= maxSQLCuts {
		sqlCuts.m = make(map[string][]sqlStmt)
	}
	sqlCuts.m[query] = stmts
}

// runAll runs the statements of an Exec, first then, when multi, those
// sp cuts after it, each taking as many of vals as it has ? marks; cur
// gets the last one's rows and counts. It reports whether any wrote.
func (db *SQL) runAll(cut *sqlCut, s sqlStmt, multi bool, vals []driver.NamedValue, cur *Cursor) (bool, error) {
	wrote, next, n := false, 0, 0
	for {
		n++
		if s.kw == "VACUUM" {
			return wrote, errors.New("VACUUM is not allowed: the database is in memory, and VACUUM INTO would write a file")
		}
		if s.conn && db.root != nil {
			db.root.connReads++
		}
		sv := vals
		if !multi && !s.named && len(vals) != s.params {
			return wrote, wrongBindings(len(vals), s.params)
		}
		if multi {
			if s.named {
				return wrote, fmt.Errorf("statement %d: numbered (?NNN) and named parameters are only for a single statement", n)
			}
			if next+s.params > len(vals) {
				return wrote, fmt.Errorf("%w (statement %d has %d, after %d)", wrongBindings(len(vals), next+s.params), n, s.params, next)
			}
			sv = make([]driver.NamedValue, s.params)
			for i := range sv {
				sv[i] = driver.NamedValue{Ordinal: i + 1, Value: vals[next+i].Value}
			}
			next += s.params
		}
		if !s.readonly {
			if db.root != nil {
				db.root.gen++
			}
			if !wrote && db.root != nil && db.root.onWrite != nil {
				db.root.onWrite()
			}
			wrote = true
			if db.depth > 0 {
				db.txWrote = true
			}
		}
		if err := db.runOne(s, sv, cur); err != nil {
			return wrote, err
		}
		if !multi {
			return wrote, nil
		}
		var ok bool
		var err error
		if s, ok, err = cut.next(); err != nil {
			return wrote, fmt.Errorf("statement %d: %w", n+1, err)
		} else if !ok {
			break
		}
	}
	if next != len(vals) {
		return wrote, fmt.Errorf("%w (in %d statements)", wrongBindings(len(vals), next), n)
	}
	return wrote, nil
}

// runOne runs the statement s of an Exec with its arguments sv, and gives
// cur its rows and counts.
func (db *SQL) runOne(s sqlStmt, sv []driver.NamedValue, cur *Cursor) error {
	var before int64
	if !s.readonly {
		var err error
		if before, err = db.changes(); err != nil {
			return err
		}
	}
	if !s.readonly || s.kw == "PRAGMA" {
		db.pristine = false // it may write, or set the connection
	}
	cookie := db.schemaCookie()
	c, err := db.runUser(s, sv)
	if err != nil {
		switch s.kw {
		case "CREATE", "DROP", "ALTER", "ANALYZE":
			// Failing, it may leave SQLite's mark that the transaction
			// changed the schema (rolledBackSchema); one that succeeds
			// says so by the cookie (noteSchema).
			db.ddlInTx = true
		}
		return err
	}
	db.noteSchema(s.text, s.kw, cookie)
	// The cursor is the last statement's, and so are its counts, as
	// the platform's are (real workerd 1.20261117.1).
	cur.cols, cur.rows, cur.RowsRead, cur.RowsWritten = c.cols, c.rows, len(c.rows), 0
	if !s.readonly {
		after, err := db.changes()
		if err != nil {
			return err
		}
		cur.RowsWritten = int(after - before + db.indexWrites())
	}
	return nil
}

// wrongBindings is the error of an Exec given args arguments for marks ?
// marks: the platform's words (real workerd 1.20261117.1, for too few and
// too many alike), then the counts.
func wrongBindings(args, marks int) error {
	return fmt.Errorf("Wrong number of parameter bindings for SQL query. (%d arguments for %d ? marks)", args, marks) //lint:ignore ST1005 the platform's words, quoted
}

// firstKeyword is the first word of a statement, upper case, after space
// and comments.
func firstKeyword(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n\f\v")
		switch {
		case strings.HasPrefix(q, "--"):
			if i := strings.IndexByte(q, '\n'); i >= 0 {
				q = q[i+1:]
				continue
			}
			return ""
		case strings.HasPrefix(q, "/*"):
			if i := strings.Index(q[2:], "*/"); i >= 0 {
				q = q[i+4:]
				continue
			}
			return ""
		}
		end := strings.IndexFunc(q, func(r rune) bool { return !(r == '_' || unicode.IsLetter(r)) })
		if end < 0 {
			end = len(q)
		}
		return strings.ToUpper(q[:end])
	}
}

// rawCursor is one statement's rows.
type rawCursor struct {
	cols []string
	rows [][]any
}

// run runs one statement of dosim's own, which the sandbox lets through,
// and reads all its rows.
func (db *SQL) run(query string, args []driver.NamedValue) (rawCursor, error) {
	return db.runAs(true, query, args)
}

// runAs runs one statement and reads all its rows, at most
// SQLMaxResultBytes of them; trusted says whether it is dosim's own SQL.
func (db *SQL) runAs(trusted bool, query string, args []driver.NamedValue) (rawCursor, error) {
	db.mu.Lock()
	if db.closing {
		db.mu.Unlock()
		return rawCursor{}, errors.New("the database is closed (its runtime was closed)")
	}
	db.running = true
	db.mu.Unlock()
	defer func() {
		db.mu.Lock()
		db.running = false
		if db.closing && !db.closed && db.users == 0 {
			db.shut(false) // the statement ran on after its runtime stalled
		}
		db.mu.Unlock()
	}()
	db.trusted = trusted
	db.denied = "" // a reason the authorizer gives now is this statement's
	defer func() { db.trusted = false }()
	// The runtime's contexts are not passed down: the progress handler
	// bounds a statement instead.
	c, err := db.query(query, args)
	if err != nil {
		return rawCursor{}, db.deniedOr(err)
	}
	return c, nil
}

// deniedOr is err, or the sandbox's reason when its authorizer refused.
func (db *SQL) deniedOr(err error) error {
	if db.denied != "" {
		why := db.denied
		db.denied = ""
		return errors.New(why)
	}
	return err
}

// valueSize is what a value counts toward SQLMaxResultBytes.
func valueSize(v driver.Value) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 8
}

// bindValues converts Exec's arguments to the driver's values.
func bindValues(args []any) ([]driver.NamedValue, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := bindValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out, nil
}

func bindValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, int64, float64, string, []byte:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		if uint64(v) > 1<<63-1 {
			return nil, fmt.Errorf("uint %d does not fit SQLite's 64-bit integer", v)
		}
		return int64(v), nil
	case uint64:
		if v > 1<<63-1 {
			return nil, fmt.Errorf("uint64 %d does not fit SQLite's 64-bit integer", v)
		}
		return int64(v), nil
	case float32:
		return float64(v), nil
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04:05.000"), nil
	}
	return nil, fmt.Errorf("%T cannot be bound: use nil, bool, an integer, a float, string, []byte or time.Time", a)
}
