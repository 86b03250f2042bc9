//go:build !dosim_nosql

package object

// SetSQLMaxSteps bounds the steps a statement runs until the returned
// function restores SQLMaxSteps.
func SetSQLMaxSteps(n int64) (restore func()) {
	old := sqlMaxSteps
	sqlMaxSteps = n
	return func() { sqlMaxSteps = old }
}
