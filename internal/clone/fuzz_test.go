package clone

import (
	"errors"
	"reflect"
	"testing"
)

// fz is a graph node for FuzzClone: exported and unexported fields,
// pointers, slices, maps and interfaces, so that cycles and deep nesting
// can be built through every kind the copier follows.
type fz struct {
	Next *fz
	Kids []*fz
	M    map[int]*fz
	A    any
	nums []int64
	arr  [2]*fz
	n    int
}

// build turns fuzz bytes into a graph: each byte is an instruction on a
// growing list of nodes.
func build(data []byte) *fz {
	nodes := []*fz{{}}
	pick := func(b byte) *fz { return nodes[int(b)%len(nodes)] }
	for i := 0; i+1 < len(data); i += 2 {
		op, arg := data[i], data[i+1]
		cur := nodes[len(nodes)-1]
		switch op % 9 {
		case 0: // a new node hanging off the current one
			n := &fz{n: int(arg)}
			cur.Next = n
			nodes = append(nodes, n)
		case 1: // a chain of nodes, for depth
			for range int(arg) * 50 {
				n := &fz{Next: cur}
				nodes = append(nodes, n)
				cur = n
			}
		case 2: // a cycle or a shared pointer
			cur.Next = pick(arg)
		case 3:
			cur.Kids = append(cur.Kids, pick(arg))
		case 4:
			if cur.M == nil {
				cur.M = map[int]*fz{}
			}
			cur.M[int(arg)] = pick(arg)
		case 5:
			cur.A = pick(arg)
		case 6:
			cur.A = []any{int(arg), cur.A, map[string]any{"k": pick(arg)}}
		case 7:
			cur.nums = append(cur.nums, int64(arg))
		case 8:
			cur.arr[arg%2] = pick(arg)
		}
	}
	return nodes[len(nodes)-1]
}

// pointers collects every *fz reachable from v.
func pointers(v *fz, seen map[*fz]bool) {
	if v == nil || seen[v] {
		return
	}
	seen[v] = true
	pointers(v.Next, seen)
	for _, k := range v.Kids {
		pointers(k, seen)
	}
	for _, k := range v.M {
		pointers(k, seen)
	}
	pointers(v.arr[0], seen)
	pointers(v.arr[1], seen)
	switch a := v.A.(type) {
	case *fz:
		pointers(a, seen)
	case []any:
		if p, ok := a[1].(*fz); ok {
			pointers(p, seen)
		}
		pointers(a[2].(map[string]any)["k"].(*fz), seen)
	}
}

// hasCycle reports whether a node reachable from v reaches itself: state
// is 1 while a node's children are walked, 2 once they are done.
func hasCycle(v *fz, state map[*fz]int) bool {
	if v == nil {
		return false
	}
	switch state[v] {
	case 1:
		return true
	case 2:
		return false
	}
	state[v] = 1
	next := []*fz{v.Next, v.arr[0], v.arr[1]}
	next = append(next, v.Kids...)
	for _, k := range v.M {
		next = append(next, k)
	}
	next = append(next, held(v.A)...)
	for _, n := range next {
		if hasCycle(n, state) {
			return true
		}
	}
	state[v] = 2
	return false
}

// held lists the nodes an A field holds: a node, or the lists and maps
// that build's case 6 nests.
func held(a any) []*fz {
	switch x := a.(type) {
	case *fz:
		return []*fz{x}
	case []any:
		var out []*fz
		for _, e := range x {
			out = append(out, held(e)...)
		}
		return out
	case map[string]any:
		return held(x["k"])
	}
	return nil
}

// FuzzClone copies arbitrary graphs (cycles, shared parts, deep chains,
// unexported fields): Copy never panics or overflows the stack, fails only
// with ErrTooDeep or, exactly when the graph has a cycle, ErrCycle, and a
// copy is equal to its original and shares no node with it.
func FuzzClone(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0})
	f.Add([]byte{0, 1, 0, 2, 3, 1, 4, 0, 5, 2, 6, 1, 7, 9, 8, 1})
	f.Add([]byte{1, 255, 1, 255, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			return
		}
		src := build(data)
		cp, _, err := Copy(src, nil)
		// A cycle is refused as one, unless the copy went too deep first.
		if cyclic := hasCycle(src, map[*fz]int{}); errors.Is(err, ErrCycle) && !cyclic || cyclic && err == nil {
			t.Fatalf("cyclic %v, but the error is %v", cyclic, err)
		}
		if err != nil {
			if !errors.Is(err, ErrTooDeep) && !errors.Is(err, ErrCycle) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		got := cp.(*fz)
		if !reflect.DeepEqual(src, got) {
			t.Fatal("the copy differs from the original")
		}
		orig, copied := map[*fz]bool{}, map[*fz]bool{}
		pointers(src, orig)
		pointers(got, copied)
		if len(orig) != len(copied) {
			t.Fatalf("the copy has %d nodes, the original %d: sharing was not kept", len(copied), len(orig))
		}
		for p := range copied {
			if orig[p] {
				t.Fatal("the copy shares a node with the original")
			}
		}
	})
}
