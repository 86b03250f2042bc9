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

// benchOrder is a typical call argument: a struct of scalars, a nested
// struct, a slice of structs, a map and a pointer.
type benchOrder struct {
	ID    string
	Qty   int
	Price float64
	Ship  struct{ Street, City string }
	Lines []struct {
		SKU string
		N   int
	}
	Tags map[string]string
	Note *string
}

// BenchmarkCopyStruct copies a struct of scalars only, by value.
func BenchmarkCopyStruct(b *testing.B) {
	src := struct {
		A, B int
		C    string
		D    float64
	}{1, 2, "three", 4}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyNested copies a pointer to a struct holding slices, a map
// and a pointer: the copier's common case for arguments and results.
func BenchmarkCopyNested(b *testing.B) {
	note := "leave at the door"
	src := &benchOrder{ID: "o-1", Qty: 3, Price: 9.5, Tags: map[string]string{"a": "1", "b": "2"}, Note: &note}
	src.Ship.Street, src.Ship.City = "1 Main St", "Springfield"
	for i := range 8 {
		src.Lines = append(src.Lines, struct {
			SKU string
			N   int
		}{SKU: "sku", N: i})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyMapAny copies untyped data, as decoded from JSON or YAML: a
// map of scalars, a list and a nested map.
func BenchmarkCopyMapAny(b *testing.B) {
	src := map[string]any{
		"name": "apple", "qty": 3, "price": 1.25, "ok": true,
		"tags": []any{"red", "fruit", 7},
		"meta": map[string]any{"origin": "NZ", "grade": 1},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyList copies a linked list of 200 nodes: pointers nested
// deep, each met once.
func BenchmarkCopyList(b *testing.B) {
	type node struct {
		Next *node
		V    int
	}
	var head *node
	for i := range 200 {
		head = &node{Next: head, V: i}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Copy(head, nil); err != nil {
			b.Fatal(err)
		}
	}
}
