// Package scenario loads dosim scenarios, YAML files that describe a
// simulation without Go code, and runs them.
//
// A scenario names a seed, namespaces bound to classes, stubs with their
// retry options, the calls to make (in order, at a virtual time, or
// concurrently), a fault plan (rules matched per attempt and random rates)
// and what to expect: each call's outcome, attempts, executions and error
// flags, values left in storage, effects. A count is exact or bounded
// ({max: N}, {min: N}: Count). docs/scenarios.md documents every field.
//
// The classes a file may name are the ones the caller registers, a Go
// constructor per class name (WithClasses): a class of your own, or dosim's
// built-in ones (examples.Constructors), or both. Without any, no class is
// registered.
//
// Load and Parse check everything they can before anything runs: malformed
// YAML, unknown fields, unknown classes, methods or faults, arguments that do
// not fit a method's Go signature, options of the wrong type or out of
// range. Each problem is an *Error that says FILE:LINE: field: what is wrong
// and what is allowed.
// They work in two passes: the YAML is decoded into typed structs that
// keep each value's node (for its line), then one resolve pass checks
// ranges, resolves names (classes, namespaces, stubs, methods) and builds
// the Scenario, reporting every problem in the order of the fields.
//
// A parsed Scenario is immutable and cheap to run many times: Run makes a
// fresh runtime, runs the calls, checks the expectations, closes the runtime
// and returns a Result; a seed and extra faults can be given per run, as a
// fault explorer needs.
//
//	sc, err := scenario.Load("testdata/wallet.yaml",
//		scenario.WithClasses(map[string]runtime.Constructor{"wallet": wallet.New}))
//	if err != nil { ... }            // an *Error per problem, joined
//	res, err := sc.Run(scenario.Seed(42))
//	if err != nil { ... }            // the simulation itself failed (deadlock, panic)
//	for _, f := range res.Failures { fmt.Println(f) }
//
// Configuration is by functional options, in two kinds: those of Load and
// Parse (Option) are named WithX, as a constructor's are across dosim
// (runtime.WithSeed); those of one run (RunOption) are named for what they
// set (Seed, Horizon, StallLimit), as a call's are (stub.MaxRetries), the
// way grpc-go names its dial options WithX and its call options bare.
//
// The amplification of retries by an application's own loop (rule S15) is
// package amplify.
package scenario

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// Scenario is a parsed scenario: everything resolved and checked, ready to
// run any number of times. Treat it as read-only.
type Scenario struct {
	// Name is the scenario's name (by default its file name without .yaml).
	Name string
	// File is the path or name the scenario was loaded from.
	File string
	// Digest is "sha256:" and the hex SHA-256 of the file's bytes, set by
	// Parse and Load (empty for a scenario built in code): explore records
	// it so that shards of different files are never merged.
	Digest string
	// Description says what the scenario shows.
	Description string
	// Seed is the seed runs use unless Run is given another.
	Seed uint64
	// NoEviction is set by "eviction: false": idle objects are never
	// evicted (rule L5; on by default, as on the platform).
	NoEviction bool
	// Namespaces, Stubs and Steps in the order the file lists them.
	Namespaces []*Namespace
	Stubs      []*Stub
	Steps      []*Step
	// Faults is the scenario's fault plan.
	Faults Faults
	// Expect holds the expectations on the end state: storage and effects.
	Expect []Expectation
	// Explore is what dosim explore uses.
	Explore Explore

	calls []*Call // every call of every step, in file order
}

// Calls returns every call of the scenario in file order (the calls of a
// concurrent step in their listed order).
func (s *Scenario) Calls() []*Call { return append([]*Call(nil), s.calls...) }

// Explore is a scenario's explore block: the random fault rates dosim
// explore draws from (when the command line names none) and the
// expectations that must hold under any faults, checked on every seed.
type Explore struct {
	Rates transport.Rates
	// Latency is the link latency of explore's runs; nil: the explorer's
	// default.
	Latency *transport.Latency
	Expect  []Expectation
	// Horizon is how long after the run the explorer lets background work
	// go on, and how long the run may take (rule C8); 0: the explorer's
	// default; negative: off (explore.horizon: off).
	Horizon time.Duration
	// RecurringAlarms says an alarm that re-arms for ever is intended (a
	// heartbeat), not a liveness violation.
	RecurringAlarms bool
	// Strategy is how explore searches the scenario (explore.strategy:
	// runtime.StrategyMix, StrategyRandom or StrategyPCT; empty: the
	// explorer's default), Depth PCT's d (0: the default), Swarm a swarm
	// profile per seed (with the random strategy).
	Strategy runtime.Strategy
	Depth    int
	Swarm    bool
	// Exhaustive makes explore a bounded exhaustive search of up to
	// MaxFaults faults (0: the explorer's default).
	Exhaustive bool
	MaxFaults  int
	// Interleaving names the turns meant to interleave at their awaits
	// (explore.interleaving; explore.Options.Interleaving says how).
	Interleaving []string
	// Lines are the lines of the block's fields, by key ("depth"), for
	// the explorer's errors about them.
	Lines map[string]int
}

// Namespace is a namespace bound to a registered class.
type Namespace struct {
	Name  string     // as the file names it
	Class NamedClass // the class it is bound to
	// Storage is the class's storage: SQLite-backed unless the file says
	// storage: key-value (rule L8).
	Storage object.Backend
	// Bindings maps a binding's name to the namespace it names, as the
	// file's bindings: say (runtime.WithBinding); nil when there are none.
	Bindings map[string]string
	Line     int // where the file defines it

	methods object.Methods
	fetch   bool
}

// Options are the runtime options that define the namespace as the file
// does: its storage and its bindings.
func (ns *Namespace) Options() []runtime.NamespaceOption {
	var opts []runtime.NamespaceOption
	if ns.Storage == object.KeyValueBacked {
		opts = append(opts, runtime.KeyValueBacked())
	}
	for _, b := range slices.Sorted(maps.Keys(ns.Bindings)) {
		opts = append(opts, runtime.WithBinding(b, ns.Bindings[b]))
	}
	return opts
}

// Methods returns the class's methods, as an instance lists them.
func (n *Namespace) Methods() object.Methods { return n.methods }

// HasFetch reports whether the class serves Stub.Fetch (it is an http.Handler).
func (n *Namespace) HasFetch() bool { return n.fetch }

// Stub is a stub the calls go through: an object of a namespace, and the
// stub's retry options. It is a recipe: each call through it gets a stub
// of its own, fresh from the namespace (as the platform advises), unless
// Reuse is set: then one stub serves every call of the run, in order
// (rule L1) and broken by the first failure that breaks it (rule L2).
type Stub struct {
	Name      string     // as the file names it
	Namespace *Namespace // the namespace of its object
	Object    string     // the object's name (Namespace.IDFromName)
	// MaxRetries and TimeoutMs are the options in force (the defaults
	// unless the scenario set them); Options are the same as stub options.
	MaxRetries int
	TimeoutMs  int
	Options    []stub.Option
	// Reuse: one stub for every call through it (the file's reuse: true).
	Reuse bool
	Line  int // where the file defines it
}

// Step is one entry of the scenario's calls: a call, a concurrent block of
// calls, or a pause.
type Step struct {
	Line int // where the file lists it
	// Calls holds one call, or the calls of a concurrent block.
	Calls      []*Call
	Concurrent bool
	// Sleep is the pause of a sleep step (which has no calls).
	Sleep time.Duration
	// Socket is a socket step's action on a WebSocket a fetch opened
	// (which has no calls).
	Socket *SocketStep
}

// SocketStep is one thing a scenario does on a WebSocket that a fetch
// opened (Fetch.WebSocket), rules W1-W5: send a message, receive the next
// one and compare it, close the connection or drop it.
type SocketStep struct {
	Path string // "calls[3]"
	Line int
	Name string // the socket, as its fetch named it
	// Send sends Text as a text message.
	Send bool
	// Receive waits for the next message, at most Within, and expects
	// Text, or, when Closed is not 0, the connection's close with that
	// code.
	Receive bool
	Text    string
	Closed  int
	Within  time.Duration
	// Close closes the connection with Code and Reason; Disconnect drops
	// it without a close.
	Close      bool
	Code       int
	Reason     string
	Disconnect bool
}

// Call is one call the scenario makes: a method call or a fetch, through a
// stub, possibly at a set virtual time, possibly inside an application loop
// that makes it again while it fails (Outer).
type Call struct {
	// Path names the call in messages: "calls[2]" or "calls[2].concurrent[0]".
	Path string
	Line int // where the file lists it
	// Index is the call's position in Scenario.Calls.
	Index  int
	Stub   *Stub  // the stub it goes through
	Method string // "fetch" for a fetch
	Args   []any  // the arguments, as decoded from YAML and checked
	Fetch  *Fetch // the request, for a fetch
	// At, when HasAt, is the virtual time the call starts at, at the
	// earliest: if the steps before it run past At, it starts when they end.
	At    time.Duration
	HasAt bool
	// Outer is the number of attempts of the application's own loop: the
	// call is made again, as a new call with a new request identity, while
	// it fails, up to Outer times (rule S15). 1 makes it once.
	Outer  int
	Expect []Expectation // what the call is expected to do

	label string
}

// Label says what the call is, for a person: `AddOne("apple")`.
func (c *Call) Label() string { return c.label }

// Fetch is an HTTP request a call sends with Stub.Fetch.
type Fetch struct {
	Method string // GET, PUT...
	Path   string // starts with /
	Body   string // "" for none
	// Streaming sends the body as a plain io.Reader that cannot be rewound,
	// so the request is never retried (rule S11).
	Streaming bool
	// WebSocket, when not "", names the WebSocket this GET opens: the
	// request asks for the upgrade, and a 101 response's client end is
	// the socket the later socket steps of that name use.
	WebSocket string
}

// Request builds the request; each call needs its own, since a body is read
// once.
func (f *Fetch) Request() (*http.Request, error) {
	var body io.Reader
	switch {
	case f.Streaming:
		body = struct{ io.Reader }{strings.NewReader(f.Body)} // hides the type: no GetBody
	case f.Body != "":
		body = strings.NewReader(f.Body) // http.NewRequest sets GetBody: replayable
	}
	req, err := http.NewRequest(f.Method, "http://dosim.invalid"+f.Path, body)
	if err == nil && f.WebSocket != "" {
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Connection", "Upgrade")
	}
	return req, err
}

// Expectation is one thing a scenario expects: of a call (Kind outcome,
// attempts, executions, rejected, calls, effects, result, status, body,
// error) or of the end state (Kind storage, effects-of-kind, resets, sql).
type Expectation struct {
	Line int // where the file writes it
	// Path names the expectation: "calls[1].expect.executions".
	Path string
	Kind string // one of the Expect... constants
	// Want is what is expected: a Count for the kinds that count (calls,
	// attempts, executions, rejected, effects, resets, effects-of-kind;
	// an int there is read as exactly that many), a string, an int (a
	// status), a time.Duration, a value decoded from YAML, or an
	// ErrorExpectation.
	Want any
	// Stub and Key locate a stored value (Kind storage); Absent expects
	// the key not to be there. Key is the effect kind for effects-of-kind.
	Stub   *Stub
	Key    string
	Absent bool
	// Args are bound to the query's ? marks (Kind sql, where Key is the
	// query and Want the rows, each a list of values).
	Args []any

	canon any // Want as JSON would give it, for comparisons
}

// ErrorExpectation is what a call's error is expected to be. None expects
// no error; otherwise each flag that is set must match.
type ErrorExpectation struct {
	None                          bool   // the call succeeds
	Retryable, Overloaded, Remote *bool  // each flag of the *stub.Error, when set
	Contains                      string // text the error must contain, when set
}

// Faults is a fault plan in parts, so that plans can be combined: rules
// matched in order, then random rates (see transport.FaultPlan).
type Faults struct {
	Rules []transport.Rule // matched in order; the first match decides
	Rates transport.Rates  // random faults, drawn when no rule names one
	// Latency is random link latency on every attempt and reply (off when
	// zero).
	Latency transport.Latency
}

// Plan builds the transport plan; nil when there are no rules, no rates
// and no latency.
func (f Faults) Plan() *transport.FaultPlan {
	if len(f.Rules) == 0 && len(f.Rates) == 0 && !f.Latency.On() {
		return nil
	}
	p := transport.Plan(f.Rules...)
	if len(f.Rates) > 0 {
		p = p.WithRandom(f.Rates)
	}
	if f.Latency.On() {
		p = p.WithLatency(f.Latency)
	}
	return p
}

// ErrInvalid is wrapped by every *Error: the scenario is not valid.
var ErrInvalid = errors.New("invalid scenario")

// Error is one problem with a scenario file, located by line.
type Error struct {
	File  string // as given to Load or Parse
	Line  int    // from 1
	Field string // "calls[2].method", or "yaml" for a syntax error
	Msg   string // what is wrong and what is allowed
	Err   error  // the cause, if any (stub.ErrRange, transport.ErrUnknownFault...)
}

// Error returns FILE:LINE: field: message, with any control character of
// the field or the message escaped (render.Escape).
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, render.Escape(e.Field), render.Escape(e.Msg))
}

// Unwrap returns ErrInvalid and the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// Errors is every problem found in one file, in the order of the file.
type Errors []*Error

// Error returns the problems, one a line.
func (es Errors) Error() string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
