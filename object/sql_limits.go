package object

// The platform's SQL limits (rule Q5), from the Durable Objects limits page
// (developers.cloudflare.com/durable-objects/platform/limits, "SQL
// storage"; the same as D1's). Real workerd 1.20261117.1 under localDisk
// storage enforces the statement, parameter, column and pattern limits to
// the byte (a 100,000-byte statement runs, 100,001 bytes: "statement too
// long: SQLITE_TOOBIG"; 101 parameters: "too many SQL variables"; a 101st
// column: "too many columns on t"; a 51-byte LIKE pattern: "LIKE or GLOB
// pattern too complex"). Its string limit is SQLite's own, larger than the
// platform's 2,000,000 bytes: dosim keeps the platform's.
const (
	// SQLMaxValueBytes is the largest string, blob or row, in bytes.
	SQLMaxValueBytes = 2_000_000
	// SQLMaxStatementBytes is the longest statement text, in bytes.
	SQLMaxStatementBytes = 100_000
	// SQLMaxParams is the most parameters a statement binds.
	SQLMaxParams = 100
	// SQLMaxColumns is the most columns of a table (or a result, an
	// index, an ORDER BY).
	SQLMaxColumns = 100
	// SQLMaxPatternBytes is the longest LIKE or GLOB pattern, in bytes.
	SQLMaxPatternBytes = 50
)

// sqlCodeNames names SQLite's primary result codes, as the platform's
// errors end with them.
var sqlCodeNames = [...]string{
	1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT",
	5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY",
	9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND",
	13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY",
	17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH",
	21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT",
	25: "SQLITE_RANGE", 26: "SQLITE_NOTADB",
}

// sqlExtendedNames names the extended result codes an object's SQL meets:
// the constraints'.
var sqlExtendedNames = map[int]string{
	275: "SQLITE_CONSTRAINT_CHECK", 531: "SQLITE_CONSTRAINT_COMMITHOOK",
	787: "SQLITE_CONSTRAINT_FOREIGNKEY", 1043: "SQLITE_CONSTRAINT_FUNCTION",
	1299: "SQLITE_CONSTRAINT_NOTNULL", 1555: "SQLITE_CONSTRAINT_PRIMARYKEY",
	1811: "SQLITE_CONSTRAINT_TRIGGER", 2067: "SQLITE_CONSTRAINT_UNIQUE",
	2323: "SQLITE_CONSTRAINT_VTAB", 2579: "SQLITE_CONSTRAINT_ROWID",
	2835: "SQLITE_CONSTRAINT_PINNED", 3091: "SQLITE_CONSTRAINT_DATATYPE",
}

// platformSQLMessage is msg as the platform words a SQLite error: the
// message, then the name of its primary result code, and of its extended
// one where that says more (real workerd 1.20261117.1: "no such table: t:
// SQLITE_ERROR", "UNIQUE constraint failed: t.b: SQLITE_CONSTRAINT
// (extended: SQLITE_CONSTRAINT_UNIQUE)").
func platformSQLMessage(msg string, code int) string {
	c := code & 0xff
	if c <= 0 || c >= len(sqlCodeNames) {
		return msg
	}
	msg += ": " + sqlCodeNames[c]
	if ext := sqlExtendedNames[code]; ext != "" {
		msg += " (extended: " + ext + ")"
	}
	return msg
}

// sqliteError is a SQLite error in the platform's words that still wraps
// the driver's error.
type sqliteError struct {
	msg string
	err error
}

func (e *sqliteError) Error() string { return e.msg }
func (e *sqliteError) Unwrap() error { return e.err }
