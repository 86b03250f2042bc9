//go:build race

package wallet_test

// raceFlags is "-race" when this test binary is: TestReadmeInstallSteps
// builds its module with the same flag, so that it reuses what go test
// -race ./... has compiled (the SQL driver most of all) instead of
// compiling it again without.
const raceFlags = "-race"
