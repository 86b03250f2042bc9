package clone

import "testing"

// BenchmarkCopyInt64Slice copies a []int64 of 1000 elements; compare its
// ns/op with BenchmarkCopyByteSlice (same length) to see the per-element cost.
func BenchmarkCopyInt64Slice(b *testing.B) {
	src := make([]int64, 1000)
	for i := range src {
		src[i] = int64(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyByteSlice copies a []byte of 1000 elements.
func BenchmarkCopyByteSlice(b *testing.B) {
	src := make([]byte, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}
