package spare

import "testing"

// A One hands back what was put, once, and nothing when empty.
func TestOneHandsBackWhatWasPutOnce(t *testing.T) {
	var o One[int]
	if v := o.Take(); v != nil {
		t.Fatalf("an empty One gave %v", v)
	}
	x := 7
	o.Put(&x)
	if v := o.Take(); v != &x {
		t.Fatalf("Take gave %p, want the value put, %p", v, &x)
	}
	if v := o.Take(); v != nil {
		t.Fatalf("a second Take gave %v: a value must be handed out once", v)
	}
	y := 8
	o.Put(&x)
	o.Put(&y)
	if v := o.Take(); v != &y {
		t.Fatalf("Take gave %p, want the last value put, %p", v, &y)
	}
}
