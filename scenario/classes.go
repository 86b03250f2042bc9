package scenario

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// Option configures Load and Parse: which classes a scenario may bind its
// namespaces to.
type Option interface{ applyLoad(*loadConfig) }

// loadConfig is what the options of Load and Parse set.
type loadConfig struct {
	// regs are the registries given, in order: a later one wins for a
	// class name several have.
	regs []*registry
}

// lookup returns the registry that has the class called name, or nil.
func (c *loadConfig) lookup(name string) *registry {
	for i := len(c.regs) - 1; i >= 0; i-- {
		if _, ok := c.regs[i].classes[name]; ok {
			return c.regs[i]
		}
	}
	return nil
}

// builtIn reports whether every class registered came from
// WithBuiltInClasses: messages then call them "the built-in classes".
func (c *loadConfig) builtIn() bool {
	for _, r := range c.regs {
		if !r.builtIn {
			return false
		}
	}
	return true
}

// registry is the classes one WithClasses registers, and what probing
// them found, kept for every parse that uses the option.
type registry struct {
	classes map[string]runtime.Constructor
	names   []string // the class names, sorted
	builtIn bool
	probes  sync.Map // class name -> classInfo
}

// probe probes the class called name once per registry.
func (r *registry) probe(name string) classInfo {
	if v, ok := r.probes.Load(name); ok {
		return v.(classInfo)
	}
	v, _ := r.probes.LoadOrStore(name, probe(r.classes[name]))
	return v.(classInfo)
}

func (r *registry) applyLoad(c *loadConfig) { c.regs = append(c.regs, r) }

// WithClasses registers classes a scenario may bind its namespaces to: a
// constructor per class name, the name being how the file spells the
// class ("wallet": wallet.New). A class's methods, and the types of their
// arguments, are those of an instance the constructor returns: Load and
// Parse build one, with a bare object.State, to check the file's calls.
//
// WithClasses may be given more than once (the built-in classes are one
// registry among others); a later registry replaces a class of the same
// name. Without any, no class is registered, and a file that binds a
// namespace to a class is refused with a message saying so. The map is
// copied.
func WithClasses(classes map[string]runtime.Constructor) Option {
	return register(classes, false)
}

// WithBuiltInClasses is WithClasses for the classes a program ships with
// (dosim's are examples.Constructors()); the only difference is in the
// messages, which call them "the built-in classes" rather than "the
// registered classes" (as long as no WithClasses adds others).
func WithBuiltInClasses(classes map[string]runtime.Constructor) Option {
	return register(classes, true)
}

func register(classes map[string]runtime.Constructor, builtIn bool) Option {
	classes = maps.Clone(classes)
	return &registry{classes: classes, names: slices.Sorted(maps.Keys(classes)), builtIn: builtIn}
}

// NamedClass is a registered class a namespace is bound to: its name, as
// the file spells it, and its constructor.
type NamedClass struct {
	Name string              // "inventory"
	New  runtime.Constructor // as registered with WithClasses
}

// classNames lists the registered class names, sorted.
func (c *loadConfig) classNames() []string {
	switch len(c.regs) {
	case 0:
		return nil
	case 1:
		return c.regs[0].names
	}
	set := map[string]bool{}
	for _, r := range c.regs {
		for _, n := range r.names {
			set[n] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// registered says which classes may be named, for a message: "the
// built-in classes are bucket, counter", or how to register some.
func (c *loadConfig) registered() string {
	names := c.classNames()
	if len(names) == 0 {
		return "no classes are registered (register classes with scenario.WithClasses)"
	}
	word := "registered"
	if c.builtIn() {
		word = "built-in"
	}
	return fmt.Sprintf("the %s classes are %s", word, strings.Join(names, ", "))
}

// oneOf says which class names may be given: "one of bucket, counter",
// or how to register some.
func (c *loadConfig) oneOf() string {
	names := c.classNames()
	if len(names) == 0 {
		return "none is registered: register classes with scenario.WithClasses"
	}
	return "one of " + strings.Join(names, ", ")
}

// classInfo is what a class's probe instance says about it.
type classInfo struct {
	methods object.Methods
	fetch   bool
	err     error // why the class cannot be used; nil when it can
}

// probe builds one instance of a class, with a bare State, to learn its
// methods and whether it serves fetch. A constructor that is nil, returns
// nil or panics gives a classInfo with err set.
func probe(ctor runtime.Constructor) (info classInfo) {
	if ctor == nil {
		return classInfo{err: errors.New("its constructor is nil")}
	}
	defer func() {
		if r := recover(); r != nil {
			info = classInfo{err: fmt.Errorf("its constructor, given a bare object.State, panicked: %v", r)}
		}
	}()
	inst := ctor(new(object.State))
	if inst == nil {
		return classInfo{err: errors.New("its constructor returned nil")}
	}
	_, fetch := inst.(http.Handler)
	return classInfo{methods: inst.Methods(), fetch: fetch}
}

// class returns what the registered class called name is (probed once
// per WithClasses option, however many files it loads).
func (p *parser) class(name string) classInfo { return p.cfg.lookup(name).probe(name) }

// fetchClasses lists the registered classes that serve fetch, sorted and
// joined ("none" when none does).
func (p *parser) fetchClasses() string {
	var out []string
	for _, name := range p.cfg.classNames() {
		if p.class(name).fetch {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
