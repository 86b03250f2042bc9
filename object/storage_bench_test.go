package object_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dosim/dosim/object"
)

// BenchmarkListPage reads a page of 10 keys from the middle of 100,000
// (rule L8): the cost follows the page, not the number of keys stored.
func BenchmarkListPage(b *testing.B) {
	ctx := context.Background()
	s := object.NewStorage()
	for i := range 100_000 {
		if err := s.Put(ctx, fmt.Sprintf("item:%06d", i), i); err != nil {
			b.Fatal(err)
		}
	}
	opts := object.ListOptions{Prefix: "item:", Start: "item:050000", Limit: 10}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		es, err := s.List(ctx, opts)
		if err != nil || len(es) != 10 {
			b.Fatal(len(es), err)
		}
	}
}
