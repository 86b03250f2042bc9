//go:build race

package wallet_test

// raceFlags are make test's race flags (the Makefile's RACE) when this
// test binary is built with -race: TestReadmeInstallSteps builds its
// module with the same flags, so that it reuses what make test has
// compiled (the SQL driver most of all) instead of compiling it again.
// Under a plain go test -race the module's SQLite is compiled once more.
const raceFlags = "-race -gcflags=modernc.org/sqlite/lib=-race=false"
