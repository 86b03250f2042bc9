//go:build !dosim_nosql

package object

import (
	"fmt"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The sandbox (rule Q5): what an object's SQL may do is decided by an
// authorizer SQLite consults while it compiles each statement, on the
// operations it found there, not on the text. Refused, with the reason:
//
//   - ATTACH and DETACH: an object has one database;
//   - BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE: SQL.Transaction
//     makes transactions, and the runtime's own savepoints hold the
//     writes not yet confirmed (rule L7);
//   - TEMP tables, views, indexes and triggers: an object's database is
//     its storage, and a TEMP object would not survive a reset, a
//     snapshot or the explorer's replay;
//   - every PRAGMA but those of sqlPragmasRead (reads only, no value)
//     and sqlPragmasNamed (given a table or index name), and
//     defer_foreign_keys; foreign_keys only to ON: foreign keys are
//     always enforced, as on the platform;
//   - load_extension().
//
// VACUUM, which SQLite does not put to the authorizer, is refused by its
// first keyword.

// sqlPragmasRead are the pragmas an object may read, without a value.
var sqlPragmasRead = []string{
	"application_id", "collation_list", "data_version", "defer_foreign_keys", "encoding",
	"foreign_keys", "freelist_count", "function_list", "max_page_count", "module_list",
	"page_count", "page_size", "pragma_list", "schema_version", "user_version",
}

// sqlPragmasNamed are the pragmas an object may run on a table or index
// it names (or on none).
var sqlPragmasNamed = []string{
	"foreign_key_check", "foreign_key_list", "index_info", "index_list", "index_xinfo",
	"integrity_check", "quick_check", "table_info", "table_list", "table_xinfo",
}

// authorize is the authorizer of d's connection.
func (d *sqlDriver) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, _ string) sqlite.AuthorizerReturnCode {
	db := d.db.Value()
	if db == nil {
		return sqlite.AuthorizerDeny
	}
	if db.trusted {
		return sqlite.AuthorizerOK
	}
	why := sqlPolicy(int32(action), arg1, arg2, dbName)
	if why == "" {
		if db.counting && action == sqlite3.SQLITE_UPDATE {
			db.sets.note(arg1, arg2) // the statement's, its triggers' or its foreign keys' actions'
		}
		return sqlite.AuthorizerOK
	}
	if db.denied == "" {
		db.denied = why
	}
	return sqlite.AuthorizerDeny
}

// sqlTempRefused is why TEMP objects are refused.
const sqlTempRefused = "TEMP tables, views, indexes and triggers are not allowed: an object's database is its storage, and a TEMP object would not survive a reset, a snapshot or the explorer's replay"

// sqlPolicy says why the sandbox refuses an operation, "" when it allows
// it; the arguments are the authorizer's.
func sqlPolicy(action int32, arg1, arg2, dbName string) string {
	switch action {
	case sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH:
		return "ATTACH and DETACH are not allowed: an object has one database"
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		return "transaction statements (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) are not allowed: use SQL.Transaction"
	case sqlite3.SQLITE_CREATE_TEMP_TABLE, sqlite3.SQLITE_CREATE_TEMP_INDEX, sqlite3.SQLITE_CREATE_TEMP_VIEW, sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
		sqlite3.SQLITE_DROP_TEMP_TABLE, sqlite3.SQLITE_DROP_TEMP_INDEX, sqlite3.SQLITE_DROP_TEMP_VIEW, sqlite3.SQLITE_DROP_TEMP_TRIGGER:
		return sqlTempRefused
	case sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_VIEW, sqlite3.SQLITE_CREATE_TRIGGER,
		sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_CREATE_VTABLE:
		if strings.EqualFold(dbName, "temp") && !isTempSchemaTable(action, arg1) {
			return sqlTempRefused // CREATE TABLE temp.t is an ordinary CREATE TABLE in temp
		}
	case sqlite3.SQLITE_PRAGMA:
		if dbName != "" && !strings.EqualFold(dbName, "main") {
			// The temp database is the connection's, not the object's.
			return fmt.Sprintf("PRAGMA %s.%s is not allowed: an object has one database, main", dbName, arg1)
		}
		return pragmaPolicy(strings.ToLower(arg1), arg2)
	case sqlite3.SQLITE_FUNCTION:
		if strings.EqualFold(arg2, "load_extension") {
			return "load_extension() is not allowed"
		}
	}
	return ""
}

// isTempSchemaTable reports whether action writes the temp schema's own
// table, as SQLite's ALTER TABLE does to check and rename what a TEMP
// object names (no statement of the object's can: SQLite refuses writes
// to a schema table, and the sandbox the pragma that would allow them).
func isTempSchemaTable(action int32, table string) bool {
	return (action == sqlite3.SQLITE_INSERT || action == sqlite3.SQLITE_UPDATE || action == sqlite3.SQLITE_DELETE) &&
		(strings.EqualFold(table, "sqlite_temp_master") || strings.EqualFold(table, "sqlite_temp_schema"))
}

// pragmaPolicy says why the sandbox refuses PRAGMA name (= value), "" when
// it allows it.
func pragmaPolicy(name, value string) string {
	switch {
	case slices.Contains(sqlPragmasNamed, name):
		return ""
	case name == "defer_foreign_keys":
		return ""
	case name == "foreign_keys" && (value == "" || isOn(value)):
		return ""
	case name == "foreign_keys":
		return "PRAGMA foreign_keys = " + value + " is not allowed: foreign keys are always enforced, as on the platform; PRAGMA defer_foreign_keys = ON defers them to the end of the transaction"
	case value == "" && slices.Contains(sqlPragmasRead, name):
		return ""
	case name == "max_page_count" || name == "page_size":
		return fmt.Sprintf("PRAGMA %s = %s is not allowed: the size limit is the runtime's (DefaultSQLMaxBytes, %d bytes)", name, value, DefaultSQLMaxBytes)
	case value != "" && slices.Contains(sqlPragmasRead, name):
		return fmt.Sprintf("PRAGMA %s = %s is not allowed: an object may read %s, not set it", name, value, name)
	}
	return fmt.Sprintf("PRAGMA %s is not allowed: an object's SQL may read %s; run %s on a table or index; and set defer_foreign_keys",
		name, strings.Join(sqlPragmasRead, ", "), strings.Join(sqlPragmasNamed, ", "))
}

// isOn reports whether a pragma's value turns it on.
func isOn(v string) bool {
	switch strings.ToLower(strings.Trim(v, `'"`)) {
	case "on", "1", "true", "yes":
		return true
	}
	return false
}
