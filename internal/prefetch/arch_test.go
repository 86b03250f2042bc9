package prefetch

import (
	"go/build"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// go vet (asmdecl), issue 14: Line's assembly declares an 8-byte argument
// frame, right only where pointers have 8 bytes. On an architecture with
// no prefetch instruction Line is plain Go, so that `GOARCH=386 go vet`
// (or arm, mips) is clean: no assembly file is built there.
func TestVet_NoAssemblyOnArchitecturesWithoutPrefetch(t *testing.T) {
	for _, arch := range []string{"386", "arm", "mips", "riscv64", "wasm"} {
		ctx := build.Default
		ctx.GOARCH = arch
		if arch == "wasm" {
			ctx.GOOS = "js"
		}
		pkg, err := ctx.ImportDir(".", 0)
		require.NoError(t, err, arch)
		assert.Empty(t, pkg.SFiles, "%s: assembly files built", arch)
		assert.NotEmpty(t, pkg.GoFiles, arch)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		ctx := build.Default
		ctx.GOARCH = arch
		pkg, err := ctx.ImportDir(".", 0)
		require.NoError(t, err, arch)
		assert.Equal(t, []string{"prefetch_" + arch + ".s"}, pkg.SFiles, arch)
	}
}
