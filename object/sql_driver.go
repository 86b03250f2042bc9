//go:build !dosim_nosql

package object

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"

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
// virtual clock (rule Q3).
func connect(db *SQL) (driver.Conn, error) {
	var drv sqlite.Driver
	if err := drv.RegisterScalarFunction("random", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return db.rand().Int64(), nil
	}); err != nil {
		return nil, err
	}
	if err := drv.RegisterScalarFunction("randomblob", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
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
		return nil, err
	}
	if err := drv.RegisterScalarFunction("dosim_now", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
		return db.now(), nil
	}); err != nil {
		return nil, err
	}
	conn, err := drv.Open(fmt.Sprintf("file:dosim-%d?mode=memory&cache=private", sqlSeq.Add(1)))
	if err != nil {
		return nil, fmt.Errorf("%w: open: %w", ErrSQL, err)
	}
	return conn, nil
}

// explain makes SQLite's errors that need it clearer.
func explain(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 13 { // SQLITE_FULL
		return fmt.Errorf("%w (the database is limited to %d bytes, DefaultSQLMaxBytes)", err, DefaultSQLMaxBytes)
	}
	return err
}
