package sched

import (
	"slices"
	"testing"
)

type item struct {
	v    int
	link node[item]
}

func itemNode(i *item) *node[item] { return &i.link }

// The kernel's lists keep push order and unlink any element in O(1): the
// head, the tail and the middle (issue 14: no per-task scan per switch).
func TestListKeepsOrderAndUnlinksAnywhere(t *testing.T) {
	var l list[item]
	items := make([]*item, 5)
	for i := range items {
		items[i] = &item{v: i}
		l.push(items[i], itemNode)
	}
	values := func() []int {
		var out []int
		for e := l.head; e != nil; e = e.link.next {
			out = append(out, e.v)
		}
		return out
	}
	l.remove(items[2], itemNode) // middle
	l.remove(items[0], itemNode) // head
	l.remove(items[4], itemNode) // tail
	if got := values(); !slices.Equal(got, []int{1, 3}) || l.n != 2 || l.tail != items[3] {
		t.Fatalf("after removals: %v (n %d)", got, l.n)
	}
	l.push(items[0], itemNode)
	if got := values(); !slices.Equal(got, []int{1, 3, 0}) {
		t.Fatalf("after a push: %v", got)
	}
}
