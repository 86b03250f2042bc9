package cli

import (
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/spf13/cobra"
)

// verifyCmd is dosim verify's options: its flags, and the checks validate
// chose from them.
type verifyCmd struct {
	a        *app
	argFlags []string
	scenFile string
	showDiff bool

	names   []string // the classes named
	classes []verifyClass
	checks  []verifyCheck
	sc      *scenario.Scenario // --scenario's, when given
}

func (a *app) newVerify() *cobra.Command {
	o := &verifyCmd{a: a}
	cmd := &cobra.Command{
		Use:   "verify [CLASS...]",
		Short: "Check that methods marked Retryable are safe to run twice",
		Long: `For every method of the classes named (by default those of the
--scenario file's namespaces, else all of them; each class once), run it
once and, separately, twice for one request (a lost reply, then the duplicate
delivery a retry brings), from the same storage, and compare the result, the
storage and the side effects. The class runs as it is: its alarm, OnError,
retry defaults and fetch handler work as they do anywhere. The verdicts:

  ok                                 the mark (or its absence) is right
  DANGER: marked but not idempotent  a retry changes the outcome: unmark it, or fix it
  could be marked                    running it twice is the same as once
  inconclusive: REASON               nothing was proven: both runs failed, the
                                     object was reset, or the duplicate did not run

Calls that failed are listed under the table with their errors; IDEMPOTENT
reads ? when the check was inconclusive. An inconclusive method does not
change the exit code: its row says it was not checked. A fetch handler
(ServeHTTP) is never run twice by a retry (it is never marked), so it is
listed as not checked.

Arguments come from --args METHOD=JSON-ARRAY, else from the first call of the
method in --scenario FILE, else from the class's own samples (a class gives
them by implementing object.Sampler). A method with parameters that gets no
arguments from any of these, or an --args that names no method of a class
being verified, is an error (exit 2).` + verifyExitCodesHelp,
		Example: a.example(`  dosim verify
  dosim verify mailer ledger
  dosim verify inventory --args 'SetQuantity=["pear", 7]'
  dosim verify --scenario testdata/scenarios/mailer-vs-ledger.yaml`, `  dosim verify
  dosim verify CLASS...
  dosim verify CLASS --args 'METHOD=["a string", 7]'
  dosim verify --scenario FILE`),
		RunE: runE(o),
	}
	cmd.Flags().StringArrayVar(&o.argFlags, "args", nil, "arguments of a method, as METHOD=JSON-ARRAY or CLASS.METHOD=JSON-ARRAY (repeatable)")
	cmd.Flags().StringVar(&o.scenFile, "scenario", "", "take arguments from the calls of this scenario")
	cmd.Flags().BoolVar(&o.showDiff, "diff", false, "show how twice differed from once for every method, not only the dangerous ones")
	return cmd
}

func (o *verifyCmd) bind(names []string, _ func(string) bool) { o.names = names }

// validate picks the classes and every method's arguments.
func (o *verifyCmd) validate() error {
	var err error
	o.classes, o.checks, o.sc, err = o.a.verifyChecks(o.names, o.scenFile, o.argFlags)
	return err
}

// run checks every method and prints the verdicts.
func (o *verifyCmd) run(e env) error {
	namespaces, closeAll := verifyNamespaces(o.classes, o.sc)
	defer closeAll()
	return runVerify(e.out, o.classes, namespaces, o.checks, o.showDiff, o.a.stallOption())
}

// verifyCheck is one method verify checks, with its sample call.
type verifyCheck struct {
	class  verifyClass
	method string
	sample object.Sample
}

// verifyChecks picks the classes and every method's arguments before
// anything runs: a method with none is an error, and nothing is printed.
func (a *app) verifyChecks(names []string, scenFile string, argFlags []string) ([]verifyClass, []verifyCheck, *scenario.Scenario, error) {
	var sc *scenario.Scenario
	if scenFile != "" {
		var err error
		if sc, err = a.loadScenario(scenFile); err != nil {
			return nil, nil, nil, &codeError{code: exitUsage, msg: err.Error()}
		}
	}
	classes, err := a.pickClasses(names, sc)
	if err != nil {
		return nil, nil, nil, err
	}
	given, err := parseArgFlags(argFlags)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := a.checkArgFlags(given, classes); err != nil {
		return nil, nil, nil, err
	}
	var fromScenario map[string][]any
	if sc != nil {
		fromScenario = map[string][]any{}
		for _, c := range sc.Calls() {
			k := c.Stub.Namespace.Class.Name + "." + c.Method
			if _, seen := fromScenario[k]; !seen && c.Fetch == nil {
				fromScenario[k] = c.Args
			}
		}
	}
	var checks []verifyCheck
	for _, c := range classes {
		for _, m := range c.methodNames() {
			sample, ok := c.samples[m]
			from := "verify: the class's sample (object.Sampler)"
			if a, found := fromScenario[c.name+"."+m]; found {
				sample.Args, ok, from = a, true, "verify: the first call in --scenario "+render.Escape(scenFile)
			}
			if a, found := given[c.name+"."+m]; found {
				sample.Args, ok, from = a, true, "--args "+c.name+"."+m
			} else if a, found := given[m]; found {
				sample.Args, ok, from = a, true, "--args "+m
			}
			if n := c.arity(m); !ok && n != 0 {
				return nil, nil, nil, usageErrorf("verify: %s.%s takes %s and none were given: pass --args '%s=[...]' (or '%s.%s=[...]'), or have the class give samples by implementing object.Sampler (a method VerifySamples() map[string]object.Sample with an entry for %q)",
					c.name, m, plural(n, "argument"), m, c.name, m, m)
			}
			if ok {
				if err := checkArgs(from, c.name, m, c.methods[m], sample.Args); err != nil {
					return nil, nil, nil, err
				}
			}
			checks = append(checks, verifyCheck{c, m, sample})
		}
	}
	return classes, checks, sc, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// verifyClass is a registered class verify checks: its name, its
// constructor, and what an instance built with a bare State says about
// it.
type verifyClass struct {
	name    string
	new     runtime.Constructor
	methods object.Methods
	samples map[string]object.Sample // from object.Sampler; nil without
	fetch   bool                     // it serves Stub.Fetch (http.Handler)
}

// methodNames lists the class's methods, sorted.
func (c verifyClass) methodNames() []string { return slices.Sorted(maps.Keys(c.methods)) }

// arity is the number of arguments method m takes after its context: -1
// when it is variadic or not a function.
func (c verifyClass) arity(m string) int {
	t := reflect.TypeOf(c.methods[m].Fn())
	if t == nil || t.Kind() != reflect.Func || t.IsVariadic() {
		return -1
	}
	return max(t.NumIn()-1, 0)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// lookupClass probes the registered class called name: its methods and
// samples. A constructor that panics, returns nil or is nil is a usage
// error naming the class (exit 2), not a crash.
func (a *app) lookupClass(name string) (c verifyClass, err error) {
	ctor, ok := a.classes[name]
	if !ok {
		return c, usageErrorf("unknown class %s%s; %s", quote.Q(name), didYouMean(name, a.classNames()), a.registered())
	}
	if ctor == nil {
		return c, usageErrorf("class %s: its constructor is nil", name)
	}
	defer func() {
		if r := recover(); r != nil {
			err = usageErrorf("class %s: its constructor, given a bare object.State, panicked: %v", name, r)
		}
	}()
	inst := ctor(new(object.State))
	if inst == nil {
		return c, usageErrorf("class %s: its constructor returned nil", name)
	}
	c = verifyClass{name: name, new: ctor, methods: inst.Methods()}
	_, c.fetch = inst.(http.Handler)
	if s, ok := inst.(object.Sampler); ok {
		c.samples = s.VerifySamples()
	}
	return c, nil
}

// registered says which classes are registered, for a message: "the
// built-in classes are bucket, counter", "the registered classes are
// wallet", or that none is.
func (a *app) registered() string {
	names := a.classNames()
	if len(names) == 0 {
		return "no classes are registered (a program registers them with cli.WithClasses)"
	}
	word := "registered"
	if len(a.builtIns) == len(names) {
		word = "built-in"
	}
	return fmt.Sprintf("the %s classes are %s", word, strings.Join(names, ", "))
}

// pickClasses returns the classes named, each once, in the order first
// named; with none named, the classes of the scenario's namespaces when
// there is one, else every registered class.
func (a *app) pickClasses(names []string, sc *scenario.Scenario) ([]verifyClass, error) {
	if len(names) == 0 && sc != nil {
		for _, ns := range sc.Namespaces {
			names = append(names, ns.Class.Name)
		}
	}
	if len(names) == 0 {
		names = a.classNames()
		if len(names) == 0 {
			return nil, usageErrorf("verify: %s", a.registered())
		}
	}
	var out []verifyClass
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		c, err := a.lookupClass(n)
		if err != nil {
			return nil, err
		}
		seen[n] = true
		out = append(out, c)
	}
	return out, nil
}

// checkArgFlags checks that every --args names a method of a class being
// verified (METHOD: of at least one; CLASS.METHOD: of that class), so that
// none is silently ignored.
func (a *app) checkArgFlags(given map[string][]any, classes []verifyClass) error {
	methods := map[string][]string{}
	var verified []string
	for _, c := range classes {
		methods[c.name] = c.methodNames()
		verified = append(verified, fmt.Sprintf("%s (%s)", c.name, strings.Join(methods[c.name], ", ")))
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		cname, m, qualified := strings.Cut(k, ".")
		if !qualified {
			m = k
			found := false
			for _, ms := range methods {
				found = found || slices.Contains(ms, m)
			}
			if !found {
				return usageErrorf("--args %s: no class verified has a method %s; verified are %s", quote.Cut(k), quote.Q(m), strings.Join(verified, "; "))
			}
			continue
		}
		if _, ok := a.classes[cname]; !ok {
			return usageErrorf("--args %s: unknown class %s%s; %s", quote.Cut(k), quote.Q(cname), didYouMean(cname, a.classNames()), a.registered())
		}
		ms, selected := methods[cname]
		if !selected {
			return usageErrorf("--args %s: class %s is not being verified (verified are %s); name it: %s verify %s",
				k, cname, strings.Join(slices.Sorted(maps.Keys(methods)), ", "), a.name, cname)
		}
		if !slices.Contains(ms, m) {
			return usageErrorf("--args %s: class %s has no method %s; it has %s", k, cname, quote.Q(m), strings.Join(ms, ", "))
		}
	}
	return nil
}

// parseArgFlags reads --args METHOD=JSON-ARRAY values; a method given
// twice is refused (the last one silently won).
func parseArgFlags(flags []string) (map[string][]any, error) {
	out := map[string][]any{}
	for _, f := range flags {
		name, raw, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, usageErrorf("--args %s: want METHOD=JSON-ARRAY, such as 'SetQuantity=[\"apple\", 3]'", quote.Q(f))
		}
		if _, dup := out[name]; dup {
			return nil, usageErrorf("--args %s: given twice: give each method's arguments once", quote.Cut(name))
		}
		args, err := decodeArgs(raw)
		if err != nil {
			return nil, usageErrorf("--args %s: %w", quote.Cut(name), err)
		}
		out[name] = args
	}
	return out, nil
}
