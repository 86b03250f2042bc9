package clone

import "reflect"

// Policy says how to treat values that are not plain data.
type Policy struct {
	// AllowRefs passes readers and the values Ref claims by reference
	// instead of failing; with Funcs, funcs too (a call's argument or
	// result, as the platform passes a function as a stub to call it
	// back). Channels, unsafe pointers and operating-system handles are
	// refused whatever the policy.
	AllowRefs bool
	Funcs     bool
	// Ref, if set, may replace a by-reference value (for example a stub by
	// a non-retrying stub), names what it is with its article ("a stub")
	// and reports whether v is such a value. It is asked only about
	// pointers and structs.
	Ref func(v reflect.Value) (r reflect.Value, what string, ok bool)
}

// Explain is the error for v, which failed to copy as plain data with err:
// a value inside v that p's Ref claims (a stub, an RPC target) is named as
// one, where err named what inside it stopped the copy ("value.conn.k.cur
// holds an unsafe pointer"). It copies v again, which only an error costs.
func (p *Policy) Explain(v any, err error) error {
	if p == nil || p.Ref == nil {
		return err
	}
	if _, _, named := Copy(v, &Policy{Ref: p.Ref}); named != nil {
		return named
	}
	return err
}
