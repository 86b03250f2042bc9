// Package spare keeps one value for the next use: the speed trick by which
// a stub reuses its last call's frame and an object host its last inline
// turn's record, instead of allocating one per call.
//
// It earns its place by the figures users see (issue 21, alternating test
// binaries with and without it, 6 rounds, medians): without it
// BenchmarkCallNoFault is 28% slower in wall time (38% in CPU time),
// BenchmarkGroupCalls at 100,000 calls 32% (21%) and BenchmarkCallAmbiguous
// 58% (16%), all in package runtime. Measure it again when the call path
// changes, and remove it when those figures no longer move by 10%.
//
// The trick's danger is sharing: a value put back while something still
// holds it is handed to the next use too (it caused a nil dereference and
// a wrong result once, when a copy of a stub shared its frame). So the
// rule is the caller's to keep, at Put: nothing else holds v any more, and
// a copy of a value holding a One starts with an empty one.
package spare

// One holds at most one *T for reuse. Its zero value is empty and ready.
type One[T any] struct{ v *T }

// Take returns the value kept for reuse and empties o, or nil when o is
// empty. The value is as Put left it: the caller sets it up.
func (o *One[T]) Take() *T {
	v := o.v
	o.v = nil
	return v
}

// Put keeps v for the next Take, in place of any value kept. The caller
// promises that nothing else holds v.
func (o *One[T]) Put(v *T) { o.v = v }
