package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"

	"github.com/dosim/dosim/internal/seal"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/stub"
)

// Constructor builds an object instance from its State. It runs lazily, on
// the first delivery to an id (rule O2), and again after a reset.
type Constructor func(st *object.State) object.Object

// ErrNamespace is wrapped by errors about defining or using a namespace.
var ErrNamespace = errors.New("namespace")

// ErrID is wrapped by errors for ids IDFromString does not accept.
var ErrID = errors.New("invalid object id")

// Namespace is a class of objects, bound to a constructor: a Durable Object
// namespace binding.
type Namespace struct {
	r     *Runtime
	name  string
	ctor  Constructor
	tag   [8]byte
	err   error
	hosts map[[32]byte]*host
	order []*host
	names map[[32]byte]string // ids made from names, to restore their label
	// resets counts the resets of each object (Resets); nil until one.
	resets map[[32]byte]int
	// rerunDuplicates turns rule S6's refusal off (RerunDuplicates).
	rerunDuplicates bool
	// bindings maps a binding's name to the namespace it names
	// (WithBinding); nil when every binding is a namespace's own name.
	bindings map[string]string
	// backend is the storage the namespace's objects have (KeyValueBacked).
	backend object.Backend
}

// NamespaceOption configures one namespace (Runtime.Namespace).
type NamespaceOption interface{ applyNamespace(*Namespace) }

type namespaceOptionFunc func(*Namespace)

func (f namespaceOptionFunc) applyNamespace(ns *Namespace) { f(ns) }

// RerunDuplicates makes the namespace's objects run a duplicate delivery
// of a request (a retry of a request the object has already received)
// again, as if every method and the fetch handler were marked
// object.Retryable: the refusal of rule S6 is off for this namespace, and
// only for it.
//
// It is for verifiers, which must run a method twice for one request,
// marked or not, on the class exactly as it is (package verify does).
// Wrapping the class to mark its methods would hide the optional
// interfaces the runtime and package object look for on the instance
// (object.Alarmer, agent.ErrorHandler, agent.RetryDefaulter,
// http.Handler), so that an alarm, an OnError or a class's retry defaults
// would not work under the check. A model of the platform never uses it:
// the platform refuses a duplicate of an unmarked method.
func RerunDuplicates() NamespaceOption {
	return namespaceOptionFunc(func(ns *Namespace) { ns.rerunDuplicates = true })
}

// KeyValueBacked makes the namespace's class key-value-backed, as a class
// declared with new_classes is on the platform: its objects have no SQL
// (State.SQL fails with object.ErrNotSQLiteBacked) and the key-value
// limits MaxKeyBytes and MaxValueBytes (rule L8). Without it a namespace
// is SQLite-backed, as new classes are.
func KeyValueBacked() NamespaceOption {
	return namespaceOptionFunc(func(ns *Namespace) { ns.backend = object.KeyValueBacked })
}

// WithBinding makes the namespace's objects find the namespace called
// namespace under the name binding (runtime.Binding(st, binding)): a
// Worker's env.BINDING naming a Durable Object namespace of another name.
// Without it a binding is the namespace of that name.
func WithBinding(binding, namespace string) NamespaceOption {
	return namespaceOptionFunc(func(ns *Namespace) {
		if ns.bindings == nil {
			ns.bindings = map[string]string{}
		}
		ns.bindings[binding] = namespace
	})
}

// Bindings returns the namespace's bindings set with WithBinding (binding
// name to namespace name), a copy; nil when there are none.
func (ns *Namespace) Bindings() map[string]string { return maps.Clone(ns.bindings) }

// bindingOptions are the options that give another namespace these
// bindings.
func bindingOptions(bindings map[string]string) []NamespaceOption {
	var opts []NamespaceOption
	for b, n := range bindings {
		opts = append(opts, WithBinding(b, n))
	}
	return opts
}

// Backend returns the storage the namespace's objects have.
func (ns *Namespace) Backend() object.Backend { return ns.backend }

// Namespace defines a namespace named name whose objects ctor builds,
// configured by opts (KeyValueBacked; RerunDuplicates, which a model of
// the platform never uses).
// A nil constructor, an empty name or a name already defined gives a
// namespace whose Get returns the error; Run returns it too.
func (r *Runtime) Namespace(name string, ctor Constructor, opts ...NamespaceOption) *Namespace {
	ns := &Namespace{r: r, name: name, ctor: ctor, hosts: map[[32]byte]*host{}, names: map[[32]byte]string{}}
	for _, o := range opts {
		if o != nil {
			o.applyNamespace(ns)
		}
	}
	h := sha256.Sum256([]byte("dosim-namespace\x00" + name))
	copy(ns.tag[:], h[:8])
	switch {
	case name == "":
		ns.err = fmt.Errorf("runtime.Namespace: %w name must not be empty", ErrNamespace)
	case ctor == nil:
		ns.err = fmt.Errorf("runtime.Namespace(%q): %w constructor is nil", name, ErrNamespace)
	case r.byName[name] != nil:
		ns.err = fmt.Errorf("runtime.Namespace(%q): %w already defined; each name may be defined once per runtime", name, ErrNamespace)
	}
	if ns.err != nil {
		r.setupErrs = append(r.setupErrs, ns.err)
		return ns
	}
	r.byName[name] = ns
	r.namespaces = append(r.namespaces, ns)
	return ns
}

// Name returns the namespace's name.
func (ns *Namespace) Name() string { return ns.name }

// Err returns the error that kept the namespace from being defined, if any.
func (ns *Namespace) Err() error { return ns.err }

func idCheck(b []byte) [4]byte {
	h := sha256.Sum256(append([]byte("dosim-id\x00"), b...))
	return [4]byte(h[:4])
}

func (ns *Namespace) makeID(body []byte, name string) object.ID {
	var raw [32]byte
	copy(raw[:8], ns.tag[:])
	copy(raw[8:28], body)
	c := idCheck(raw[:28])
	copy(raw[28:], c[:])
	return object.Hosting(seal.Key{}).NewID(ns.name, raw, name)
}

// IDFromName returns the id of the object called name: the same name always
// gives the same id in this namespace (rule O1).
func (ns *Namespace) IDFromName(name string) object.ID {
	h := sha256.Sum256([]byte("dosim-name\x00" + ns.name + "\x00" + name))
	id := ns.makeID(h[:20], name)
	ns.names[rawOf(id)] = name
	return id
}

func rawOf(id object.ID) [32]byte { return id.Bytes() }

// NewUniqueID returns a new id drawn from the runtime's seeded source; it
// never repeats an id of this namespace (rule O1).
func (ns *Namespace) NewUniqueID() object.ID {
	for {
		var body [20]byte
		rngReader{ns.r.rng}.Read(body[:])
		id := ns.makeID(body[:], "")
		raw := rawOf(id)
		if _, taken := ns.hosts[raw]; taken {
			continue
		}
		if _, taken := ns.names[raw]; taken {
			continue
		}
		// Reserve it so that a later draw cannot repeat it.
		ns.host(id)
		return id
	}
}

// IDFromString parses an id's 64 hex digits. It rejects text that is not an
// id dosim produced and ids of another namespace, saying which (rule O1).
func (ns *Namespace) IDFromString(s string) (object.ID, error) {
	if ns.err != nil {
		return object.ID{}, ns.err
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return object.ID{}, fmt.Errorf("%s.IDFromString(%q): %w: want 64 hex digits", ns.name, s, ErrID)
	}
	if c := idCheck(b[:28]); string(c[:]) != string(b[28:]) {
		return object.ID{}, fmt.Errorf("%s.IDFromString(%q): %w: not an id dosim produced (its checksum does not match)", ns.name, s, ErrID)
	}
	if string(b[:8]) != string(ns.tag[:]) {
		other := "another namespace"
		for _, o := range ns.r.namespaces {
			if string(o.tag[:]) == string(b[:8]) {
				other = fmt.Sprintf("namespace %q", o.name)
			}
		}
		return object.ID{}, fmt.Errorf("%s.IDFromString(%q): %w: it belongs to %s, not %q", ns.name, s, ErrID, other, ns.name)
	}
	raw := [32]byte(b)
	return object.Hosting(seal.Key{}).NewID(ns.name, raw, ns.names[raw]), nil
}

// Get returns a stub for the object with id. The stub retries failed
// attempts (rule S1) within its options: stub.MaxRetries (default 4) and
// stub.TimeoutMs (default 10000).
func (ns *Namespace) Get(id object.ID, opts ...stub.Option) (*stub.Stub, error) {
	if ns.err != nil {
		return nil, ns.err
	}
	if id.IsZero() {
		return nil, fmt.Errorf("%s.Get: %w: the zero ID (make ids with IDFromName, NewUniqueID or IDFromString)", ns.name, ErrID)
	}
	if id.Namespace() != ns.name {
		return nil, fmt.Errorf("%s.Get(%s): %w: it belongs to namespace %q", ns.name, id.Label(), ErrID, id.Namespace())
	}
	h := ns.host(id)
	s, err := ns.r.newStub(h, nil, true, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s.Get(%s): %w", ns.name, id.Label(), err)
	}
	return s, nil
}

// GetByName is Get(IDFromName(name), opts...).
func (ns *Namespace) GetByName(name string, opts ...stub.Option) (*stub.Stub, error) {
	if ns.err != nil {
		return nil, ns.err
	}
	return ns.Get(ns.IDFromName(name), opts...)
}

// host returns the host of id, making it (without building the object).
func (ns *Namespace) host(id object.ID) *host {
	raw := rawOf(id)
	if h := ns.hosts[raw]; h != nil {
		return h
	}
	h := newHost(ns, id)
	ns.hosts[raw] = h
	ns.order = append(ns.order, h)
	return h
}

// Storage returns the storage of the object with id, for assertions in
// tests. It does not build the object.
func (ns *Namespace) Storage(id object.ID) *object.Storage { return ns.host(id).storage }

// Instance returns the object instance for id, or nil if it has not been
// built (or was reset and not rebuilt yet).
func (ns *Namespace) Instance(id object.ID) object.Object { return ns.host(id).inst }

// Constructor returns the namespace's constructor, for tools that rebuild
// the same class in another runtime (the idempotency verifier does).
func (ns *Namespace) Constructor() Constructor { return ns.ctor }

// Runtime returns the runtime the namespace belongs to.
func (ns *Namespace) Runtime() *Runtime { return ns.r }

// Methods builds the object with id if it is not built yet and returns
// its method table, for tools that list or inspect a class's methods.
func (ns *Namespace) Methods(id object.ID) (object.Methods, error) {
	if ns.err != nil {
		return nil, ns.err
	}
	h := ns.host(id)
	if err := h.build(); err != nil {
		return nil, err
	}
	return h.inst.Methods(), nil
}
