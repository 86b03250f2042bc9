package object

import "database/sql/driver"

// sqlPrepared is a connection's prepared statements, by text (issue 35):
// a statement an object runs again (its schema's CREATE ... IF NOT
// EXISTS at the top of every method, the same SELECT in every call) is
// parsed once per connection, as the platform's SQL API keeps its own.
// The sandbox's authorizer decides as a statement is prepared, and its
// decision holds for the statement kept: dosim's own statements and an
// object's are kept apart, and so are the columns an UPDATE sets, which
// the authorizer tells as it prepares (rows written, sql_written.go).
// Every statement kept goes when the schema may have moved (a DDL
// statement, a rollback), so that none is prepared again inside a run,
// and when the connection closes. BenchmarkScenarioSeed (explore) is what
// it is for.
type sqlPrepared struct {
	m map[preparedKey]*preparedStmt
}

type preparedKey struct {
	text    string
	trusted bool
}

type preparedStmt struct {
	st   cStmt
	sets sqlSets // what the authorizer told as it prepared a statement that writes
	// draws: the statement's program may draw from SQLite's generator
	// (stmtMayDraw), so running it takes prngMu (runUser).
	draws bool
}

// maxPrepared bounds the statements a connection keeps: past it, they
// all go and it starts again.
const maxPrepared = 64

// query runs the statement text with args, through the connection's
// prepared statements, and reads its rows.
func (db *SQL) query(text string, args []driver.NamedValue) (rawCursor, error) {
	if db.prepared == nil || !db.schema.known {
		st, err := db.prepareQuietly(text)
		if err != nil {
			return rawCursor{}, err
		}
		defer st.finalize()
		return db.stepStmt(&st, args)
	}
	key := preparedKey{text: text, trusted: db.trusted}
	p, ok := db.prepared.m[key]
	if ok {
		if db.counting {
			db.sets = copySets(db.sets[:0], p.sets)
		}
	} else {
		st, err := db.prepareQuietly(text)
		if err != nil {
			return rawCursor{}, err
		}
		p = &preparedStmt{st: st, draws: stmtMayDraw(st)}
		if db.counting {
			p.sets = copySets(nil, db.sets)
		}
		if len(db.prepared.m) >= maxPrepared {
			db.prepared.close()
		}
		db.prepared.m[key] = p
	}
	return db.stepStmt(&p.st, args)
}

// prepareQuietly prepares text: an object's statement under
// quietPrepare (runUser holds prngMu: mayDraw), dosim's own as it is (it
// names no column after four others).
func (db *SQL) prepareQuietly(text string) (st cStmt, err error) {
	prepare := func() { st, err = db.prepareStmt(text) }
	if db.trusted {
		prepare()
	} else {
		db.quietPrepare(prepare)
	}
	return st, err
}

// mayDraw reports whether the object's statement text, about to run, may
// draw from SQLite's generator: unless the connection keeps it prepared,
// it is prepared as it runs, and parsing may draw (quietPrepare); kept, it
// may if it writes and its program can (stmtMayDraw). A statement that
// only reads draws nothing as it runs.
func (db *SQL) mayDraw(text string, readonly bool) bool {
	if db.prepared == nil || !db.schema.known {
		return true
	}
	p, ok := db.prepared.m[preparedKey{text: text}]
	return !ok || !readonly && p.draws
}

// close finalizes every statement kept.
func (p *sqlPrepared) close() {
	for k, s := range p.m {
		s.st.finalize()
		delete(p.m, k)
	}
}

// schemaMayMove drops what was read of the schema, and the statements
// prepared on it: a DDL statement ran, or a rollback may have undone one.
func (db *SQL) schemaMayMove() {
	db.tables = nil
	if db.prepared != nil {
		db.prepared.close()
	}
}

// copySets appends a copy of from to dst: its column lists are the
// copy's own.
func copySets(dst, from sqlSets) sqlSets {
	for _, e := range from {
		dst = append(dst, sqlSet{table: e.table, cols: append([]string(nil), e.cols...)})
	}
	return dst
}
