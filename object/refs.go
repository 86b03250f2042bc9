package object

import (
	"reflect"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/ref"
)

var (
	byRefType  = reflect.TypeFor[ref.Arriver]()
	targetType = reflect.TypeFor[Target]()
)

// refPolicy is the copy policy of arguments and results (rules O5, S11):
// plain data is copied; a stub (a ref.Arriver) and an RPC target travel
// by reference.
var refPolicy = &clone.Policy{AllowRefs: true, Funcs: true, Ref: func(v reflect.Value) (reflect.Value, string, bool) {
	t := v.Type()
	switch {
	case t.Implements(byRefType):
		if t.Kind() == reflect.Pointer && v.IsNil() {
			return v, "", false
		}
		return arriveAs(v)
	case t.Implements(targetType):
		return v, "an RPC target", true
	}
	return v, "", false
}}

// arriveAs asks v, a ref.Arriver, what it arrives as. Only a value of the
// type that arrives (a *stub.Stub) is claimed: a struct that embeds a stub
// has the method by promotion and answers with the stub inside it, of
// another type, and one that embeds a nil stub panics in that call. Neither is claimed: the copy goes on inside it, and
// meets the stub (or the nil) in its field.
func arriveAs(v reflect.Value) (r reflect.Value, what string, ok bool) {
	defer func() {
		if recover() != nil {
			r, what, ok = v, "", false
		}
	}()
	arrived, what := ref.Arrive(v.Interface().(ref.Arriver))
	r = reflect.ValueOf(arrived)
	if r.Type() != v.Type() {
		return v, "", false
	}
	return r, what, true
}

// CopyPolicy returns the copy policy of a call's arguments and results:
// stubs and RPC targets travel by reference, a stub arriving as one that
// never retries. For packages runtime and stub.
func (hosting) CopyPolicy() *clone.Policy { return refPolicy }

// whyNotData is the error for v, which failed to copy as plain data with
// err, naming a stub or an RPC target inside v as one (see
// clone.Policy.Explain).
func whyNotData(v any, err error) error { return refPolicy.Explain(v, err) }
