package runtime

import "github.com/dosim/dosim/internal/clone"

// CallsTo returns the records kept (see WithRecords) of the calls to
// method on objects of namespace, in the order the calls began, each its
// own copy as Calls gives it. An empty method matches every method of the
// namespace; an empty namespace, every namespace. The last call to
// BOOTH.Book:
//
//	calls := rt.CallsTo("BOOTH", "Book")
//	last := calls[len(calls)-1]
func (r *Runtime) CallsTo(namespace, method string) []CallRecord {
	var out []CallRecord
	for _, c := range r.kept() {
		if (namespace == "" || c.Site.Target.Namespace == namespace) && (method == "" || c.Site.Method == method) {
			out = append(out, record(c))
		}
	}
	return out
}

// EffectsOf returns the side effects of the given kind (the kind given to
// object.State.Effect, such as "email"), in the order they were recorded,
// each with its own copy of the payload as Effects gives it.
func (r *Runtime) EffectsOf(kind string) []Effect {
	var out []Effect
	for _, e := range r.effects {
		if e.Kind == kind {
			e.Payload, _, _ = clone.Copy(e.Payload, nil)
			out = append(out, e)
		}
	}
	return out
}
