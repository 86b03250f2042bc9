//go:build !dosim_nosql

package object

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// sqlConnPool keeps the connections of closed databases for the next
// database whose schema has the same history (issue 35): a replayed turn
// restores a snapshot of the schema the last one restored, a fresh
// object's database starts from none. A connection taken from it keeps
// its statements prepared on that schema (sqlPrepared) and its schema
// read; its file is given the new database's bytes, and everything of
// the connection a statement can read is set as a new connection has it
// (reset), so what an object sees never depends on which database the
// connection served before, nor which worker's. BenchmarkScenarioSeed
// (explore) is what it is for. It keeps at most maxPooled connections,
// their files emptied.
type sqlConnPool struct {
	mu   sync.Mutex
	idle []pooledConn // the most recently closed last
	// asked are the histories databases opened with: a connection of
	// another (an object's own schema, reached by its constructor's DDL)
	// would wait for nobody, and is closed.
	asked map[sqlSchema]bool
}

type pooledConn struct {
	oc     openConn
	schema sqlSchema
}

// maxPooled bounds the connections sqlConnPool keeps, maxPooledSchema
// those of one schema: a sweep's objects, each of its own history, do not
// push out the connections its replays take again and again. At four a
// schema, a booth sweep pushed a connection out nearly every seed (177
// times in 200 seeds on one worker, counted with a temporary counter) and
// opened a new one for it, and 2,000 seeds ran 1.19 times as long
// (farm-bench, f34bb3b against it with these bounds). At eight, two
// workers (a sweep's default on two cores), each of whose checks holds a
// connection for each state it may go on from, emptied a schema's
// connections and pushed them out by turns: 512 of booth's replays in
// 4,000 seeds found none kept and opened one, and prepared its
// statements again; at sixteen, 5. An idle connection holds about 70 KB.
const (
	maxPooled       = 64
	maxPooledSchema = 16
	maxAsked        = 64 // histories sqlConnPool.asked keeps
)

var connPool sqlConnPool

// take returns a kept connection whose schema has the history schema.
func (p *sqlConnPool) take(schema sqlSchema) (openConn, bool) {
	if !schema.known {
		return openConn{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.asked[schema] {
		if len(p.asked) >= maxAsked {
			clear(p.asked)
		}
		if p.asked == nil {
			p.asked = map[sqlSchema]bool{}
		}
		p.asked[schema] = true
	}
	best := -1
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].schema == schema && (best < 0 || p.idle[i].statements() > p.idle[best].statements()) {
			best = i
		}
	}
	if best < 0 {
		return openConn{}, false
	}
	oc := p.idle[best].oc
	p.idle = append(p.idle[:best], p.idle[best+1:]...)
	return oc, true
}

// statements is how many statements the idle connection keeps prepared
// (sqlPrepared). Of a schema's connections, take hands out the one that
// keeps the most, the most recently closed of those, and keep pushes out
// the one that keeps the fewest, the oldest of those: a connection that
// only loaded a snapshot (imageFor) keeps dosim's own statements and none
// of the object's, and handed out first, or pushing out one that keeps
// the object's, it had them all prepared again: 2,900 prepares in 5,000
// booth seeds on one worker, 0.6 a seed (counted with a temporary
// counter), 2.7% of its CPU.
func (c pooledConn) statements() int { return len(c.oc.prepared.m) }

// put keeps the connection of db, which is closing, unless no database
// asked for its schema's history, or it cannot serve another as a new
// one would: its schema's history is not known, a transaction is open,
// or its file is in use.
func (p *sqlConnPool) put(db *SQL) bool {
	p.mu.Lock()
	asked := p.asked[db.schema]
	p.mu.Unlock()
	if !asked || !db.schema.known || db.inTransaction() || db.setImage(nil) != nil {
		return false
	}
	sqlite3.Xsqlite3_db_release_memory(db.raw.tls, db.raw.db) // its pages are the old file's
	db.oc.point(nil)
	gone, kept := p.keep(pooledConn{oc: db.oc, schema: db.schema})
	if gone != nil {
		// Closed outside the pool's lock: closing a connection takes a
		// while, and a sweep's other workers wait for the pool.
		gone.close()
	}
	return kept
}

// keep adds c to the idle connections, and returns the one that made room
// for it, if one did; it does not keep c when c keeps fewer statements
// than each of its schema's maxPooledSchema.
func (p *sqlConnPool) keep(c pooledConn) (gone *openConn, kept bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Room: of the same schema, the one keeping the fewest statements
	// goes when it has maxPooledSchema, else the oldest of all.
	same, oldest := 0, 0
	for i, idle := range p.idle {
		if idle.schema == c.schema {
			if same == 0 || idle.statements() < p.idle[oldest].statements() {
				oldest = i
			}
			same++
		}
	}
	if same >= maxPooledSchema || len(p.idle) >= maxPooled {
		if same < maxPooledSchema {
			oldest = 0
		}
		if oldest >= len(p.idle) || same >= maxPooledSchema && c.statements() < p.idle[oldest].statements() {
			return nil, false // it keeps none
		}
		oc := p.idle[oldest].oc
		gone = &oc
		p.idle = append(p.idle[:oldest], p.idle[oldest+1:]...)
	}
	p.idle = append(p.idle, c)
	return gone, true
}

// freshDataVersion is what PRAGMA data_version reads on a new connection.
func freshDataVersion() (int64, error) {
	fresh.once.Do(func() {
		var db *SQL
		if db, fresh.err = openSQLImage(nil, nil, sqlSchema{}); fresh.err != nil { // unknown: a new connection
			return
		}
		defer db.close()
		fresh.version, fresh.err = db.dataVersion()
	})
	return fresh.version, fresh.err
}

var fresh struct {
	once    sync.Once
	version int64
	err     error
}

func (db *SQL) dataVersion() (int64, error) {
	c, err := db.run("PRAGMA data_version", nil)
	if err != nil {
		return 0, err
	}
	if len(c.rows) != 1 || len(c.rows[0]) != 1 {
		return 0, errors.New("PRAGMA data_version read no value")
	}
	v, ok := c.rows[0][0].(int64)
	if !ok {
		return 0, fmt.Errorf("PRAGMA data_version read %T", c.rows[0][0])
	}
	return v, nil
}

// reset readies a kept connection, just taken for db and given image:
// its pager reads the file again (its pages are another file's),
// and the counts a statement reads of the connection (changes(),
// total_changes(), last_insert_rowid(), PRAGMA data_version) are a new
// connection's.
func (db *SQL) reset(image []byte) error {
	want, err := freshDataVersion()
	if err != nil {
		return err
	}
	// The pager starts its cache again when the file's change counter and
	// size (16 bytes at 24) are not what it read last: make them not.
	vers := (*[16]byte)(unsafe.Pointer(&db.pager().FdbFileVers))
	var now [16]byte
	if len(image) >= 40 {
		copy(now[:], image[24:40])
	}
	for i := range vers {
		vers[i] = ^now[i]
	}
	got, err := db.versionAfterReset(len(image) >= 40)
	if err != nil {
		return err
	}
	conn := (*sqlite3.Tsqlite3)(cPtr(db.raw.db))
	bt := (*sqlite3.TBtree)(cPtr((*sqlite3.TDb)(cPtr(conn.FaDb)).FpBt))
	bt.FiBDataVersion += uint32(want - got)
	conn.FnChange, conn.FnTotalChange = 0, 0
	sqlite3.Xsqlite3_set_last_insert_rowid(db.raw.tls, db.raw.db, 0)
	// PRAGMA defer_foreign_keys = ON, the one setting an object may make,
	// is cleared by a commit, and its pragma opens no transaction.
	conn.Fflags &^= sqlite3.SQLITE_DeferFKs
	conn.FnDeferredCons, conn.FnDeferredImmCons = 0, 0
	return nil
}

// versionAfterReset is what PRAGMA data_version reads once the pager,
// whose counters reset has just made differ from the file's, has read the
// file again. When no transaction holds the file (PAGER_OPEN), SQLite
// checks the counters as the next statement takes its shared lock, and
// finding them changed it empties the cache and counts one change of
// data (pager_reset); PRAGMA data_version reads that count plus the
// connection's own (sqlite3BtreeGetMeta, BTREE_DATA_VERSION), as 32-bit
// numbers. So the value is known without running a statement: running
// the pragma to read it was 4.5% of a booth seed, whose replays each take
// a pooled connection. A file with no page (hasPage false) gives the
// pager no counters to remember (it reads them from page 1): it keeps a
// new connection's, zero, from which its first commit counts, as a new
// connection's does. The pragma still runs where SQLite would not take
// that path: a pager holding a transaction, or one that never held a
// shared lock. TestQ3_AKeptConnectionReadsAsANewOne and
// TestQ3_AKeptConnectionOpensNoImageAsANewOne hold both against a new
// connection.
func (db *SQL) versionAfterReset(hasPage bool) (int64, error) {
	pager := db.pager()
	conn := (*sqlite3.Tsqlite3)(cPtr(db.raw.db))
	bt := (*sqlite3.TBtree)(cPtr((*sqlite3.TDb)(cPtr(conn.FaDb)).FpBt))
	if pager.FeState != sqlite3.PAGER_OPEN || pager.FhasHeldSharedLock == 0 || pager.FtempFile != 0 {
		got, err := db.dataVersion() // that read
		if err != nil {
			return 0, err
		}
		if !hasPage {
			*(*[16]byte)(unsafe.Pointer(&pager.FdbFileVers)) = [16]byte{}
		}
		return got, nil
	}
	if !hasPage {
		// A new connection's counters, which the file's, read as zero
		// when it has no page 1, then match: no reset follows, and none
		// is needed, as the pool kept the connection with its cache
		// emptied (sqlConnPool.put).
		*(*[16]byte)(unsafe.Pointer(&pager.FdbFileVers)) = [16]byte{}
		return int64(pager.FiDataVersion + bt.FiBDataVersion), nil
	}
	return int64(pager.FiDataVersion + 1 + bt.FiBDataVersion), nil
}

// storeOf is the memdb file of the database's main schema.
func (db *SQL) storeOf() (*sqlite3.TMemStore, error) {
	var rc int32
	file := outParam[uintptr](db.raw.tls, func(pFile uintptr) {
		rc = sqlite3.Xsqlite3_file_control(db.raw.tls, db.raw.db, mainSchema, sqlite3.SQLITE_FCNTL_FILE_POINTER, pFile)
	})
	if rc != sqlite3.SQLITE_OK || file == 0 {
		return nil, errors.New("the database has no file")
	}
	return (*sqlite3.TMemStore)(cPtr((*sqlite3.TMemFile)(cPtr(file)).FpStore)), nil
}
