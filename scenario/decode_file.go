package scenario

// The decoded form of a scenario file: one struct per mapping the file
// may hold, as docs/scenarios.md describes them, filled by decodeFile.
// Names are not resolved and ranges not checked here (resolve.go).

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The fields each mapping allows, in the order messages list them.
var (
	fileKeys      = []string{"name", "description", "seed", "eviction", "namespaces", "stubs", "faults", "calls", "expect", "explore"}
	stubKeys      = []string{"namespace", "object", "options", "reuse"}
	optionKeys    = []string{"maxRetries", "timeoutMs", "retry"}
	retryKeys     = []string{"maxRetries", "timeoutMs"}
	faultsKeys    = []string{"rules", "random", "latency"}
	ruleKeys      = []string{"namespace", "object", "method", "call", "attempt", "fault", "delay", "reason"}
	exploreKeys   = []string{"random", "latency", "expect", "horizon", "recurring-alarms", "strategy", "depth", "swarm", "exhaustive", "max-faults", "interleaving"}
	callKeys      = []string{"stub", "method", "args", "fetch", "at", "outer", "expect"}
	fetchKeys     = []string{"method", "path", "body", "streaming", "websocket"}
	socketKeys    = []string{"socket", "send", "receive", "close", "disconnect", "within"}
	receiveKeys   = []string{"closed"}
	closeKeys     = []string{"code", "reason"}
	endKeys       = []string{"storage", "effects", "resets", "sql"}
	storageKeys   = []string{"stub", "key", "value", "absent"}
	namespaceKeys = []string{"class", "storage", "bindings"}
	sqlKeys       = []string{"stub", "query", "args", "rows"}
	errorKeys     = []string{"retryable", "overloaded", "remote", "contains"}
	callExpectKey = []string{ExpectOutcome, ExpectAttempts, ExpectExecutions, ExpectRejected, ExpectCalls,
		ExpectEffects, ExpectResult, ExpectStatus, ExpectBody, ExpectError, ExpectDuration}
)

// rawFile is a decoded scenario file.
type rawFile struct {
	shape      *fields
	name, desc val[string]
	seed       val[uint64]
	eviction   val[bool]
	namespaces *entries
	classes    []val[string] // the namespaces' classes, one per key
	nsShapes   []*fields     // the namespaces' mapping form, nil where a class name is given
	storages   []val[string] // the namespaces' storage (mapping form only)
	bindings   []*entries    // the namespaces' bindings (mapping form only; nil: none)
	stubs      *entries
	stubDefs   []*rawStub // one per key
	faults     *rawFaults
	calls      list[*rawStep]
	expect     *rawEnd
	explore    *rawExplore
}

func decodeFile(root *yaml.Node) *rawFile {
	f := &rawFile{shape: decodeFields(root, "", fileKeys...)}
	if f.shape.bad {
		return f
	}
	get := f.shape.get
	f.name, f.desc = decodeStr(get("name")), decodeStr(get("description"))
	f.seed, f.eviction = decodeUint(get("seed")), decodeBool(get("eviction"))
	if f.namespaces = decodeEntries(get("namespaces"), "namespaces"); f.namespaces != nil {
		for i, v := range f.namespaces.vals {
			var shape *fields
			if r := resolve(v); r != nil && r.Kind == yaml.MappingNode {
				shape = decodeFields(v, join("namespaces", f.namespaces.keys[i].Value), namespaceKeys...)
				f.classes = append(f.classes, decodeStr(shape.get("class")))
			} else {
				f.classes = append(f.classes, decodeStr(v))
			}
			f.nsShapes = append(f.nsShapes, shape)
			f.storages = append(f.storages, decodeStr(shape.get("storage")))
			var b *entries
			if shape != nil {
				b = decodeEntries(shape.get("bindings"), join(join("namespaces", f.namespaces.keys[i].Value), "bindings"))
			}
			f.bindings = append(f.bindings, b)
		}
	}
	if f.stubs = decodeEntries(get("stubs"), "stubs"); f.stubs != nil {
		for i, v := range f.stubs.vals {
			f.stubDefs = append(f.stubDefs, decodeStub(v, join("stubs", f.stubs.keys[i].Value)))
		}
	}
	if n := get("faults"); n != nil {
		f.faults = decodeFaults(n)
	}
	f.calls = decodeList(get("calls"), func(n *yaml.Node, i int) *rawStep { return decodeStep(n, fmt.Sprintf("calls[%d]", i)) })
	if n := get("expect"); n != nil {
		f.expect = decodeEnd(n, "expect")
	}
	if n := get("explore"); n != nil {
		f.explore = decodeExplore(n)
	}
	return f
}

// rawStub is a decoded stub definition.
type rawStub struct {
	shape             *fields
	namespace, object val[string]
	reuse             val[bool]
	options           *rawOptions
}

func decodeStub(n *yaml.Node, path string) *rawStub {
	s := &rawStub{shape: decodeFields(n, path, stubKeys...)}
	if s.shape == nil || s.shape.bad {
		return s
	}
	get := s.shape.get
	s.namespace, s.object, s.reuse = decodeStr(get("namespace")), decodeStr(get("object")), decodeBool(get("reuse"))
	if on := get("options"); on != nil {
		s.options = decodeOptions(on, path+".options")
	}
	return s
}

// rawOptions is a stub's decoded options: each a scalar, read as any
// value for stub.ParseOptions; retry is the platform's form of the same
// fields (retry: {maxRetries, timeoutMs}), nil when not given.
type rawOptions struct {
	shape *fields
	vals  [2]anyVal // by retryKeys; n nil when not given
	retry *rawOptions
}

func decodeOptions(n *yaml.Node, path string) *rawOptions {
	o := &rawOptions{shape: decodeFields(n, path, optionKeys...)}
	o.decodeValues()
	if rn := o.shape.get("retry"); rn != nil {
		o.retry = &rawOptions{shape: decodeFields(rn, path+".retry", retryKeys...)}
		o.retry.decodeValues()
	}
	return o
}

// decodeValues reads the fields maxRetries and timeoutMs of o's mapping.
func (o *rawOptions) decodeValues() {
	for i, k := range retryKeys {
		vn := o.shape.get(k)
		if vn == nil {
			continue
		}
		o.vals[i] = anyVal{n: vn}
		if resolve(vn).Kind == yaml.ScalarNode {
			o.vals[i] = decodeValue(vn)
		}
	}
}

// rawFaults is the decoded faults block.
type rawFaults struct {
	shape   *fields
	rules   list[*rawRule]
	random  *rawRates
	latency *rawLatency
}

func decodeFaults(n *yaml.Node) *rawFaults {
	f := &rawFaults{shape: decodeFields(n, "faults", faultsKeys...)}
	f.rules = decodeList(f.shape.get("rules"), func(n *yaml.Node, i int) *rawRule { return decodeRule(n, fmt.Sprintf("faults.rules[%d]", i)) })
	f.random = decodeRates(f.shape.get("random"), "faults.random")
	f.latency = decodeLatency(f.shape.get("latency"), "faults.latency")
	return f
}

// rawRule is a decoded fault rule.
type rawRule struct {
	shape                                        *fields
	namespace, object, method, fault, delay, why val[string]
	call, attempt                                val[int64]
}

func decodeRule(n *yaml.Node, path string) *rawRule {
	r := &rawRule{shape: decodeFields(n, path, ruleKeys...)}
	get := r.shape.get
	r.namespace, r.object, r.method = decodeStr(get("namespace")), decodeStr(get("object")), decodeStr(get("method"))
	r.call, r.attempt = decodeInt(get("call")), decodeInt(get("attempt"))
	r.fault, r.delay, r.why = decodeStr(get("fault")), decodeDuration(get("delay")), decodeStr(get("reason"))
	return r
}

// rawRates is a decoded FAULT: rate mapping.
type rawRates struct {
	entries *entries
	rates   []val[float64] // one per key
}

func decodeRates(n *yaml.Node, path string) *rawRates {
	e := decodeEntries(n, path)
	if e == nil {
		return nil
	}
	r := &rawRates{entries: e}
	for _, v := range e.vals {
		r.rates = append(r.rates, decodeRate(v))
	}
	return r
}

// rawExplore is the decoded explore block.
type rawExplore struct {
	shape     *fields
	horizon   val[string]
	recurring val[bool]
	random    *rawRates
	latency   *rawLatency
	expect    *rawEnd
	strategy  val[string]
	depth     val[int64]
	swarm     val[bool]
	exh       val[bool]
	maxFaults val[int64]
	// interleaving names the turns meant to interleave at their awaits.
	interleaving list[val[string]]
}

func decodeExplore(n *yaml.Node) *rawExplore {
	e := &rawExplore{shape: decodeFields(n, "explore", exploreKeys...)}
	get := e.shape.get
	e.horizon, e.recurring = decodeDuration(get("horizon")), decodeBool(get("recurring-alarms"))
	e.random = decodeRates(get("random"), "explore.random")
	e.latency = decodeLatency(get("latency"), "explore.latency")
	e.strategy, e.depth, e.swarm = decodeStr(get("strategy")), decodeInt(get("depth")), decodeBool(get("swarm"))
	e.exh, e.maxFaults = decodeBool(get("exhaustive")), decodeInt(get("max-faults"))
	e.interleaving = decodeList(get("interleaving"), func(n *yaml.Node, _ int) val[string] { return decodeStr(n) })
	if en := get("expect"); en != nil {
		e.expect = decodeEnd(en, "explore.expect")
	}
	return e
}

// rawStep is a decoded entry of calls: a call, a concurrent block or a
// sleep.
type rawStep struct {
	line       int
	shape      *fields // of a concurrent block or a sleep
	concurrent bool
	subs       list[*rawCall]
	sleep      val[string]
	isSleep    bool
	call       *rawCall
	socket     *rawSocket
}

// rawSocket is a decoded socket step: one thing done on a WebSocket.
type rawSocket struct {
	at                 *yaml.Node
	shape              *fields
	name, send, within val[string]
	receive            val[string] // a text
	receiveN           *yaml.Node  // as written: a text or {closed: CODE}
	closed             val[int64]
	receiveShape       *fields
	closeN             *yaml.Node
	closeShape         *fields
	code               val[int64]
	reason             val[string]
	disconnect         val[bool]
}

func decodeSocket(n *yaml.Node, path string) *rawSocket {
	s := &rawSocket{at: n, shape: decodeFields(n, path, socketKeys...)}
	get := s.shape.get
	s.name, s.send, s.within, s.disconnect = decodeStr(get("socket")), decodeStr(get("send")), decodeDuration(get("within")), decodeBool(get("disconnect"))
	if s.receiveN = get("receive"); s.receiveN != nil {
		if rn := resolve(s.receiveN); rn.Kind == yaml.MappingNode {
			s.receiveShape = decodeFields(rn, path+".receive", receiveKeys...)
			s.closed = decodeInt(s.receiveShape.get("closed"))
		} else {
			s.receive = decodeStr(s.receiveN)
		}
	}
	if s.closeN = get("close"); s.closeN != nil {
		s.closeShape = decodeFields(s.closeN, path+".close", closeKeys...)
		s.code, s.reason = decodeInt(s.closeShape.get("code")), decodeStr(s.closeShape.get("reason"))
	}
	return s
}

func decodeStep(n *yaml.Node, path string) *rawStep {
	n = resolve(n)
	s := &rawStep{line: n.Line}
	switch {
	case hasKey(n, "concurrent"):
		s.concurrent, s.shape = true, decodeFields(n, path, "concurrent")
		s.subs = decodeList(s.shape.get("concurrent"), func(c *yaml.Node, j int) *rawCall {
			return decodeCall(c, fmt.Sprintf("%s.concurrent[%d]", path, j))
		})
	case hasKey(n, "socket"):
		s.socket = decodeSocket(n, path)
	case hasKey(n, "sleep"):
		s.isSleep, s.shape = true, decodeFields(n, path, "sleep")
		s.sleep = decodeDuration(s.shape.get("sleep"))
	default:
		s.call = decodeCall(n, path)
	}
	return s
}

// rawCall is a decoded call.
type rawCall struct {
	at        *yaml.Node // the call as written
	path      string
	shape     *fields
	stub      val[string]
	method    val[string]
	args      list[anyVal]
	fetch     *rawFetch
	start     val[string]
	outer     val[int64]
	expect    *rawCallExpect
	argsNode  *yaml.Node
	fetchNode *yaml.Node
}

func decodeCall(n *yaml.Node, path string) *rawCall {
	c := &rawCall{at: n, path: path, shape: decodeFields(n, path, callKeys...)}
	if c.shape.bad {
		return c
	}
	get := c.shape.get
	c.stub, c.method = decodeStr(get("stub")), decodeStr(get("method"))
	c.argsNode = get("args")
	c.args = decodeList(c.argsNode, func(n *yaml.Node, _ int) anyVal { return decodeValue(n) })
	if c.fetchNode = get("fetch"); c.fetchNode != nil {
		c.fetch = decodeFetch(c.fetchNode, path+".fetch")
	}
	c.start, c.outer = decodeDuration(get("at")), decodeInt(get("outer"))
	if en := get("expect"); en != nil {
		c.expect = decodeCallExpect(en, path+".expect")
	}
	return c
}

// rawFetch is a call's decoded fetch request.
type rawFetch struct {
	at                 *yaml.Node // as written
	shape              *fields
	method, path, body val[string]
	streaming          val[bool]
	websocket          val[string]
}

func decodeFetch(n *yaml.Node, path string) *rawFetch {
	f := &rawFetch{at: n, shape: decodeFields(n, path, fetchKeys...)}
	get := f.shape.get
	f.method, f.path, f.body, f.streaming = decodeStr(get("method")), decodeStr(get("path")), decodeStr(get("body")), decodeBool(get("streaming"))
	f.websocket = decodeStr(get("websocket"))
	return f
}
