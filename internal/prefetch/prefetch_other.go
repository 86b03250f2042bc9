//go:build !amd64 && !arm64

package prefetch

import "unsafe"

// Line hints that the cache line holding p will be read soon: here, with
// no prefetch instruction used, it does nothing. It is Go, not assembly,
// so that its frame is right whatever the size of a pointer (go vet's
// asmdecl check on 386, arm, mips).
func Line(p unsafe.Pointer) {}
