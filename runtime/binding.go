package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
)

// Binding returns the namespace called name in the runtime that runs the
// object of st: what env.NAME is to a Durable Object class on the platform,
// a binding to another class's namespace, declared in the Worker's
// configuration. In dosim the runtime's namespaces are the bindings, under
// their names: a scenario file's namespaces, the classes of cli.WithClasses
// under the names a scenario gives them, or Runtime.Namespace in Go. So a
// class that calls another needs no closure over a *Namespace, and runs as
// it is from YAML, the command line and verify, which defines the bound
// namespaces in each of its worlds.
//
// Call it in a method, an alarm or a constructor: it fails, wrapping
// ErrNamespace, with the names there are, when the runtime has no such
// namespace, and when st is not an object's state in a runtime.
func Binding(st *object.State, name string) (*Namespace, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: Binding(nil, %q): want the object's *object.State", ErrNamespace, name)
	}
	h, _ := object.Hosting(seal.Key{}).Of(st)
	v, ok := h.(hostView)
	if !ok || v.h == nil {
		return nil, fmt.Errorf("%w: Binding(%q): the state is not one a runtime made for an object", ErrNamespace, name)
	}
	r := v.h.ns.r
	target := name
	if t, ok := v.h.ns.bindings[name]; ok {
		target = t // WithBinding
	}
	if ns := r.byName[target]; ns != nil {
		return ns, nil
	}
	if rp := r.replay; rp != nil {
		// A replay runs one object's turns (rule C1): the calls they make
		// out are answered from the turn's reads, never delivered. The
		// binding is a namespace of a runtime apart (replayer.bound), whose
		// objects nothing reaches.
		if rp.bound == nil {
			rp.bound = New()
		}
		if ns := rp.bound.byName[target]; ns != nil {
			return ns, nil
		}
		return rp.bound.Namespace(target, func(*object.State) object.Object { return unreached{} }), nil
	}
	names := make([]string, 0, len(r.namespaces))
	for _, ns := range r.namespaces {
		names = append(names, ns.name)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("%w: Binding(%q): the runtime has no namespace %q; it has %s", ErrNamespace, name, target, strings.Join(names, ", "))
}

// unreached is the class of a replay's bound namespaces: no call reaches
// its objects (their calls are answered from the replayed turn's reads).
type unreached struct{}

func (unreached) Methods() object.Methods { return object.Methods{} }
