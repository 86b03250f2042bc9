//go:build dosim_nosql

package buildflags

// Tags is -tags=dosim_nosql when this binary is built without SQLite
// (make test's second step), and "" when it is not.
const Tags = "-tags=dosim_nosql"
