package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/dosim -update to create it")
	assert.Equal(t, string(want), string(got))
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// The demo is deterministic (rule D1): its table matches the golden file.
func TestDemoGoldenD1(t *testing.T) {
	code, out, errOut := runCLI(t, "demo")
	require.Equal(t, 0, code, errOut)
	golden(t, "demo.golden", []byte(out))
	_, again, _ := runCLI(t, "demo")
	assert.Equal(t, out, again)
}

func TestVersionAndUsage(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "dosim dev\n", out)

	code, _, errOut := runCLI(t, "nonsense")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "nonsense"`)

	code, _, errOut = runCLI(t, "demo", "--seed", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `invalid argument "x" for "--seed"`)
}
