//go:build dosim_nosql

package object

import (
	"database/sql/driver"
	"fmt"
)

// Built with the tag dosim_nosql (make fuzz), dosim links no SQLite: an
// object's SQL() database cannot open, and says why. See sql_driver.go.

func connect(*SQL) (driver.Conn, func(), error) {
	return nil, nil, fmt.Errorf("%w: open: this build leaves SQLite out (the build tag dosim_nosql, for fuzzing)", ErrSQL)
}

func explain(err error) error { return err }
