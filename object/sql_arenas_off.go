//go:build !dosim_nosql && dosim_libcmalloc

package object

import "modernc.org/libc"

// installArenas leaves SQLite on libc's malloc: the build tag
// dosim_libcmalloc, to measure sqlArenas against it (BenchmarkSQLArenas).
func installArenas(*libc.TLS) bool { return false }
