//go:build !dosim_nosql

package object

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"weak"

	"modernc.org/sqlite"
)

// The SQLite driver: the one file (with sql_memory.go) that links
// modernc.org/sqlite. The build tag dosim_nosql leaves it out (see
// sql_nosql.go): make fuzz builds with it, because coverage-guided
// fuzzing instruments every linked package, and SQLite's transpiled C
// makes each execution a thousand times slower while no fuzz target
// runs SQL.

// connect opens db's private in-memory database, with random(),
// randomblob() and the clock functions reading the runtime's seed and
// virtual clock (rule Q3). release, once the connection is closed, hands
// its driver on to the next database.
func connect(db *SQL) (conn driver.Conn, release func(), err error) {
	slot, err := takeDriver()
	if err != nil {
		return nil, nil, err
	}
	slot.db = weak.Make(db)
	conn, err = slot.drv.Open(fmt.Sprintf("file:dosim-%d?mode=memory&cache=private", sqlSeq.Add(1)))
	if err != nil {
		slot.release()
		return nil, nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	return conn, slot.release, nil
}

// sqlDriver is a SQLite driver with dosim's functions registered, and the
// database they serve. modernc.org/sqlite keeps a function registered on a
// driver for the program's life, with what its closure holds, so one driver
// a database leaked every database (and its runtime) a sweep opened. The
// drivers are pooled instead: one per open database, reused once it is
// closed; and a driver holds its database weakly, so that one nobody
// closed is still collected (openSQL's cleanup then closes it).
type sqlDriver struct {
	drv sqlite.Driver
	db  weak.Pointer[SQL] // set by connect, cleared by release
}

// sqlDrivers is the pool of drivers whose database is closed.
var sqlDrivers struct {
	mu   sync.Mutex
	free []*sqlDriver
}

// takeDriver returns a driver from the pool, or a new one.
func takeDriver() (*sqlDriver, error) {
	sqlDrivers.mu.Lock()
	if n := len(sqlDrivers.free); n > 0 {
		d := sqlDrivers.free[n-1]
		sqlDrivers.free = sqlDrivers.free[:n-1]
		sqlDrivers.mu.Unlock()
		return d, nil
	}
	sqlDrivers.mu.Unlock()
	d := &sqlDriver{}
	if err := d.register(); err != nil {
		return nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	return d, nil
}

// release returns d to the pool; its database's connection is closed.
func (d *sqlDriver) release() {
	d.db = weak.Pointer[SQL]{}
	sqlDrivers.mu.Lock()
	sqlDrivers.free = append(sqlDrivers.free, d)
	sqlDrivers.mu.Unlock()
}

// current is the database d serves.
func (d *sqlDriver) current() (*SQL, error) {
	if db := d.db.Value(); db != nil {
		return db, nil
	}
	return nil, errors.New("the database is closed")
}

// register registers random(), randomblob() and dosim_now() on d's driver.
func (d *sqlDriver) register() error {
	if err := d.drv.RegisterScalarFunction("random", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		db, err := d.current()
		if err != nil {
			return nil, err
		}
		return db.rand().Int64(), nil
	}); err != nil {
		return err
	}
	if err := d.drv.RegisterScalarFunction("randomblob", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		db, err := d.current()
		if err != nil {
			return nil, err
		}
		n, _ := args[0].(int64)
		if n < 1 {
			n = 1
		}
		if n > DefaultSQLMaxBytes {
			return nil, fmt.Errorf("randomblob(%d): at most %d bytes", n, DefaultSQLMaxBytes)
		}
		b := make([]byte, (n+7)/8*8) // eight bytes a draw: few draws to record (runtime.WithHistory)
		r := db.rand()
		for i := 0; i < len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		return b[:n], nil
	}); err != nil {
		return err
	}
	return d.drv.RegisterScalarFunction("dosim_now", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		db, err := d.current()
		if err != nil {
			return nil, err
		}
		return db.now(), nil
	})
}

// explain makes SQLite's errors that need it clearer.
func explain(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 13 { // SQLITE_FULL
		return fmt.Errorf("%w (the database is limited to %d bytes, DefaultSQLMaxBytes)", err, DefaultSQLMaxBytes)
	}
	return err
}
