package object_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dosim/dosim/object"
)

// Storage's multi-key calls (rule L8): each is all or nothing, and List
// pages through keys in order from where the last page stopped.
func ExampleStorage_PutMany() {
	ctx := context.Background()
	s := object.NewKeyValueStorage()

	err := s.PutMany(ctx, map[string]any{"cart:1": 3, "cart:2": 1, "cart:3": 7, "owner": "ada"})
	fmt.Println("put:", err)

	// One value too large (131,101 bytes of text serialise to 131,107):
	// nothing at all is written.
	err = s.PutMany(ctx, map[string]any{"cart:4": 2, "note": strings.Repeat("x", 131_101)})
	fmt.Println("refused:", errors.Is(err, object.ErrStorage), err)
	fmt.Println("keys:", s.Len())

	got, _ := s.GetMany(ctx, []string{"cart:1", "cart:4", "owner"})
	var owner string
	_ = got["owner"].Decode(&owner)
	fmt.Println("got:", len(got), got["cart:1"].Value(), owner)

	// Two keys per page: the second page starts just after the first.
	page, _ := s.List(ctx, object.ListOptions{Prefix: "cart:", Limit: 2})
	for _, e := range page {
		fmt.Println("page 1:", e.Key)
	}
	last := page[len(page)-1].Key
	page, _ = s.List(ctx, object.ListOptions{Prefix: "cart:", StartAfter: last, Limit: 2})
	for _, e := range page {
		fmt.Println("page 2:", e.Key)
	}

	n, _ := s.DeleteMany(ctx, []string{"cart:1", "cart:2", "cart:9"})
	fmt.Println("deleted:", n)
	_ = s.DeleteAll(ctx)
	fmt.Println("after DeleteAll:", s.Len())
	// Output:
	// put: <nil>
	// refused: true storage: PutMany "note": Values cannot be larger than 131072 bytes. A value of size 131107 was provided.
	// keys: 4
	// got: 2 3 ada
	// page 1: cart:1
	// page 1: cart:2
	// page 2: cart:3
	// deleted: 2
	// after DeleteAll: 0
}
