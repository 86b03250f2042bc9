package object_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dosim/dosim/object"
)

// FuzzStorageAgainstAMap runs a program of storage operations, decoded from
// the fuzzer's bytes, on object.Storage and on a plain map, and requires
// that they agree after every step (rules L1, L8): Put, Delete, Get, List
// with prefix, start, end, reverse and limit, DeleteMany, DeleteAll, and
// transactions that commit or roll back. A bad key is an error on both
// sides, never a panic.
func FuzzStorageAgainstAMap(f *testing.F) {
	f.Add([]byte("\x00a\x01\x00b\x02\x02a\x03\x00\x05a\x06"))
	f.Add([]byte("\x07\x00k\x01\x08\x00z\x02\x09"))
	f.Fuzz(func(t *testing.T, prog []byte) {
		ctx := context.Background()
		s := object.NewStorage()
		model := map[string]int{}
		var run func(s *object.Storage, model map[string]int, prog []byte, depth int) []byte
		run = func(s *object.Storage, model map[string]int, prog []byte, depth int) []byte {
			for len(prog) >= 2 {
				op, key := prog[0]%10, string(rune('a'+prog[1]%6))
				v := int(prog[1])
				prog = prog[2:]
				switch op {
				case 0, 1:
					if err := s.Put(ctx, key, v); err != nil {
						t.Fatalf("Put %q: %v", key, err)
					}
					model[key] = v
				case 2:
					existed, err := s.Delete(ctx, key)
					_, had := model[key]
					if err != nil || existed != had {
						t.Fatalf("Delete %q: %v, %v; the map had it: %v", key, existed, err, had)
					}
					delete(model, key)
				case 3:
					var got int
					ok, err := s.Get(ctx, key, &got)
					want, had := model[key]
					if err != nil || ok != had || (ok && got != want) {
						t.Fatalf("Get %q = %d, %v, %v; want %d, %v", key, got, ok, err, want, had)
					}
				case 4, 5:
					checkList(t, s, model, object.ListOptions{Prefix: key[:min(len(key), int(v%2))], Start: string(rune('a' + v%3)),
						End: string(rune('c' + v%4)), Reverse: v%2 == 1, Limit: v % 4})
				case 6:
					n, err := s.DeleteMany(ctx, []string{key, "a"})
					want := 0
					for _, k := range slices.Compact([]string{key, "a"}) {
						if _, ok := model[k]; ok {
							want++
						}
						delete(model, k)
					}
					if err != nil || n != want {
						t.Fatalf("DeleteMany: %d, %v; want %d", n, err, want)
					}
				case 7:
					if err := s.DeleteAll(ctx); err != nil {
						t.Fatalf("DeleteAll: %v", err)
					}
					clear(model)
				case 8, 9:
					if depth > 2 {
						continue
					}
					inner := copyModel(model)
					rollback := op == 9
					boom := errors.New("roll back")
					var rest []byte
					err := s.Transaction(ctx, func(ctx context.Context, tx *object.Storage) error {
						rest = run(tx, inner, prog, depth+1)
						if rollback {
							return boom
						}
						return nil
					})
					if rollback != (err != nil) {
						t.Fatalf("Transaction: %v (rollback %v)", err, rollback)
					}
					if !rollback {
						clear(model)
						for k, v := range inner {
							model[k] = v
						}
					}
					prog = rest
				}
				if s.Len() != len(model) && depth == 0 {
					t.Fatalf("Len %d, the map has %d", s.Len(), len(model))
				}
			}
			return prog
		}
		run(s, model, prog, 0)
		checkList(t, s, model, object.ListOptions{})
	})
}

func copyModel(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// checkList requires that List with opts gives what the map gives.
func checkList(t *testing.T, s *object.Storage, model map[string]int, opts object.ListOptions) {
	t.Helper()
	var want []string
	for k := range model {
		if strings.HasPrefix(k, opts.Prefix) && k >= opts.Start && (opts.End == "" || k < opts.End) {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if opts.Reverse {
		slices.Reverse(want)
	}
	if opts.Limit > 0 && len(want) > opts.Limit {
		want = want[:opts.Limit]
	}
	got, err := s.List(context.Background(), opts)
	if err != nil {
		t.Fatalf("List %+v: %v", opts, err)
	}
	keys := make([]string, len(got))
	for i, e := range got {
		keys[i] = e.Key
		var v int
		if err := e.Decode(&v); err != nil || v != model[e.Key] {
			t.Fatalf("List %+v: %s = %d (%v), the map has %d", opts, e.Key, v, err, model[e.Key])
		}
	}
	if !slices.Equal(keys, want) && !(len(keys) == 0 && len(want) == 0) {
		t.Fatalf("List %+v = %q, the map gives %q", opts, keys, want)
	}
}
