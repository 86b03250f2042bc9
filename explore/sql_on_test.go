//go:build !dosim_nosql

package explore_test

// sqlBuilt says this test binary links SQLite: make test's second step
// builds without it (the build tag dosim_nosql), and a test whose class
// keeps SQL runs in its race step instead.
const sqlBuilt = true
