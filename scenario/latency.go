package scenario

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dosim/dosim/transport"
)

var latencyKeys = []string{"p50", "p99"}

// rawLatency is a decoded latency block: {p50: 5ms, p99: 200ms}.
type rawLatency struct {
	shape    *fields
	p50, p99 val[string]
}

func decodeLatency(n *yaml.Node, path string) *rawLatency {
	if n == nil {
		return nil
	}
	l := &rawLatency{shape: decodeFields(n, path, latencyKeys...)}
	l.p50, l.p99 = decodeDuration(l.shape.get("p50")), decodeDuration(l.shape.get("p99"))
	return l
}

// latency resolves a latency block at path; ok is false when it is bad
// (and reported).
func (p *parser) latency(l *rawLatency, at string) (transport.Latency, bool) {
	if !p.shape(l.shape) {
		return transport.Latency{}, false
	}
	if !p.require(l.shape, "p99", l.shape.at) {
		return transport.Latency{}, false
	}
	var out transport.Latency
	var ok50, ok99 bool
	if l.p50.given() {
		out.P50, ok50 = p.duration(l.p50, join(at, "p50"))
	} else {
		ok50 = true
	}
	out.P99, ok99 = p.duration(l.p99, join(at, "p99"))
	if !ok50 || !ok99 {
		return transport.Latency{}, false
	}
	if err := out.Validate(); err != nil {
		msg := strings.TrimPrefix(err.Error(), transport.ErrInvalid.Error()+": ")
		p.errorf(resolve(l.p99.n), at, err, "%s: want p50 <= p99 <= %v, such as {p50: 5ms, p99: 200ms}; p99: 0 turns latency off", msg, transport.MaxLatency)
		return transport.Latency{}, false
	}
	return out, true
}
