package scenario

// The decoded form of expectations: a call's expect block, the end-state
// blocks (expect, explore.expect) and counts (rule C7).

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// rawCount is a decoded count: an integer, or a mapping of min and max.
type rawCount struct {
	n       *yaml.Node // resolved; nil: absent
	exact   bool       // an integer
	value   val[int64] // the integer, when exact
	shape   *fields    // the bounds' mapping, when it is one
	min     val[int64]
	max     val[int64]
	mapping bool
}

func decodeCount(n *yaml.Node, path string) rawCount {
	rn := resolve(n)
	c := rawCount{n: rn}
	switch {
	case rn == nil:
	case rn.Kind == yaml.ScalarNode && rn.ShortTag() == "!!int":
		c.exact, c.value = true, decodeInt(rn)
	case rn.Kind == yaml.MappingNode:
		c.mapping = true
		if len(rn.Content) > 0 {
			c.shape = decodeFields(rn, path, "min", "max")
			c.min, c.max = decodeInt(c.shape.get("min")), decodeInt(c.shape.get("max"))
		}
	}
	return c
}

// rawCallExpect is a call's decoded expect block.
type rawCallExpect struct {
	shape                             *fields
	outcome, body, duration           val[string]
	calls, attempts, executions, rejs rawCount
	effects                           rawCount
	result                            anyVal
	status                            val[int64]
	err                               *rawErrorExpect
}

func decodeCallExpect(n *yaml.Node, path string) *rawCallExpect {
	e := &rawCallExpect{shape: decodeFields(n, path, callExpectKey...)}
	get := e.shape.get
	e.outcome, e.body, e.duration = decodeStr(get(ExpectOutcome)), decodeStr(get(ExpectBody)), decodeDuration(get(ExpectDuration))
	e.calls, e.attempts = decodeCount(get(ExpectCalls), path+"."+ExpectCalls), decodeCount(get(ExpectAttempts), path+"."+ExpectAttempts)
	e.executions, e.rejs = decodeCount(get(ExpectExecutions), path+"."+ExpectExecutions), decodeCount(get(ExpectRejected), path+"."+ExpectRejected)
	e.effects = decodeCount(get(ExpectEffects), path+"."+ExpectEffects)
	if rn := get(ExpectResult); rn != nil {
		e.result = decodeValue(rn)
	}
	e.status = decodeInt(get(ExpectStatus))
	if en := get(ExpectError); en != nil {
		e.err = decodeErrorExpect(en, path+"."+ExpectError)
	}
	return e
}

// rawErrorExpect is a decoded error expectation: none, or a mapping of
// flags and text.
type rawErrorExpect struct {
	n                          *yaml.Node // resolved
	none                       bool
	shape                      *fields
	retryable, overloaded, rem val[bool]
	contains                   val[string]
}

func decodeErrorExpect(n *yaml.Node, path string) *rawErrorExpect {
	rn := resolve(n)
	e := &rawErrorExpect{n: rn}
	switch {
	case rn.Kind == yaml.ScalarNode && rn.Value == "none":
		e.none = true
	case rn.Kind == yaml.MappingNode:
		e.shape = decodeFields(rn, path, errorKeys...)
		get := e.shape.get
		e.retryable, e.overloaded, e.rem = decodeBool(get("retryable")), decodeBool(get("overloaded")), decodeBool(get("remote"))
		e.contains = decodeStr(get("contains"))
	}
	return e
}

// rawEnd is a decoded end-state block (expect, explore.expect).
type rawEnd struct {
	shape   *fields
	sql     list[*rawSQL]
	storage list[*rawStorage]
	resets  *entries
	rcounts []rawCount // one per reset key
	effects *entries
	ecounts []rawCount // one per effect key
}

func decodeEnd(n *yaml.Node, at string) *rawEnd {
	e := &rawEnd{shape: decodeFields(n, at, endKeys...)}
	get := e.shape.get
	e.sql = decodeList(get("sql"), func(n *yaml.Node, i int) *rawSQL { return decodeSQL(n, fmt.Sprintf("%s.sql[%d]", at, i)) })
	e.storage = decodeList(get("storage"), func(n *yaml.Node, i int) *rawStorage {
		return decodeStorage(n, fmt.Sprintf("%s.storage[%d]", at, i))
	})
	if e.resets = decodeEntries(get("resets"), at+".resets"); e.resets != nil {
		for i, v := range e.resets.vals {
			e.rcounts = append(e.rcounts, decodeCount(v, join(at+".resets", e.resets.keys[i].Value)))
		}
	}
	if e.effects = decodeEntries(get("effects"), at+".effects"); e.effects != nil {
		for i, v := range e.effects.vals {
			e.ecounts = append(e.ecounts, decodeCount(v, join(at+".effects", e.effects.keys[i].Value)))
		}
	}
	return e
}

// rawStorage is a decoded storage expectation.
type rawStorage struct {
	at         *yaml.Node // as written
	shape      *fields
	stub, key  val[string]
	value      anyVal
	valueGiven bool
	absent     val[bool]
}

func decodeStorage(n *yaml.Node, path string) *rawStorage {
	s := &rawStorage{at: n, shape: decodeFields(n, path, storageKeys...)}
	get := s.shape.get
	s.stub, s.key, s.absent = decodeStr(get("stub")), decodeStr(get("key")), decodeBool(get("absent"))
	if vn := get("value"); vn != nil {
		s.value, s.valueGiven = decodeValue(vn), true
	}
	return s
}

// rawSQL is a decoded SQL expectation.
type rawSQL struct {
	at          *yaml.Node // as written
	shape       *fields
	stub, query val[string]
	args        list[*yaml.Node]
	rows        list[list[*yaml.Node]]
}

func decodeSQL(n *yaml.Node, path string) *rawSQL {
	s := &rawSQL{at: n, shape: decodeFields(n, path, sqlKeys...)}
	get := s.shape.get
	s.stub, s.query = decodeStr(get("stub")), decodeStr(get("query"))
	s.args = decodeList(get("args"), nodes)
	s.rows = decodeList(get("rows"), func(r *yaml.Node, _ int) list[*yaml.Node] { return decodeList(r, nodes) })
	return s
}
