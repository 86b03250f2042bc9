package sched

// node links an element into one intrusive list.
type node[T any] struct{ prev, next *T }

// list is a doubly linked list threaded through its elements, in the order
// they were pushed: pushing and removing cost O(1) however long it is, so
// no scheduler step scans the tasks. Each method takes at, which returns
// an element's node for this list (an element may be in several lists).
type list[T any] struct {
	head, tail *T
	n          int
}

func (l *list[T]) push(e *T, at func(*T) *node[T]) {
	n := at(e)
	n.prev, n.next = l.tail, nil
	if l.tail != nil {
		at(l.tail).next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.n++
}

func (l *list[T]) remove(e *T, at func(*T) *node[T]) {
	n := at(e)
	if n.prev != nil {
		at(n.prev).next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		at(n.next).prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next = nil, nil
	l.n--
}
