//go:build dosim_nosql

package explore_test

// sqlBuilt says this test binary links SQLite (see sql_on_test.go).
const sqlBuilt = false
