package scenario_test

import (
	"testing"
	"time"

	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLatency_ScenarioFields: faults.latency and explore.latency read
// into the scenario; a run with faults.latency delays its calls, a run
// without has none (latency is off by default for dosim run).
func TestLatency_ScenarioFields(t *testing.T) {
	file := "namespaces: {INVENTORY: inventory}\nstubs: {shop: {namespace: INVENTORY, object: s}}\n" +
		"faults: {latency: {p50: 5ms, p99: 200ms}}\n" +
		"calls: [{stub: shop, method: AddOne, args: [a]}, {stub: shop, method: Get, args: [a]}]\n" +
		"explore: {latency: {p99: 0s}}\n"
	sc, err := scenario.Parse("lat.yaml", []byte(file), builtIns)
	require.NoError(t, err)
	assert.Equal(t, transport.Latency{P50: 5 * time.Millisecond, P99: 200 * time.Millisecond}, sc.Faults.Latency)
	require.NotNil(t, sc.Explore.Latency)
	assert.False(t, sc.Explore.Latency.On(), "p99: 0 turns explore's latency off")

	res, err := sc.Run()
	require.NoError(t, err)
	require.Len(t, res.Calls, 2)
	assert.Positive(t, res.Calls[1].End-res.Calls[0].Start, "the calls took virtual time on the link")

	plain, err := scenario.Parse("plain.yaml", []byte("namespaces: {INVENTORY: inventory}\nstubs: {shop: {namespace: INVENTORY, object: s}}\ncalls: [{stub: shop, method: AddOne, args: [a]}]\n"), builtIns)
	require.NoError(t, err)
	res, err = plain.Run()
	require.NoError(t, err)
	assert.Zero(t, res.Calls[0].End-res.Calls[0].Start, "no latency unless the file asks")
	assert.Nil(t, plain.Explore.Latency)
}

// TestLatency_BadScenarioFields: a bad latency block names the field and
// what is allowed.
func TestLatency_BadScenarioFields(t *testing.T) {
	const hd = "namespaces: {INVENTORY: inventory}\nstubs: {shop: {namespace: INVENTORY, object: s}}\ncalls: [{stub: shop, method: Get, args: [a]}]\n"
	requireInvalid(t, hd+"faults: {latency: {p50: 5ms, p90: 9ms}}\n", []string{
		"bad.yaml:4: faults.latency.p90: unknown field (did you mean \"p50\" or \"p99\"?); allowed are p50, p99",
		"bad.yaml:4: faults.latency.p99: missing: this field is required",
	})
	requireInvalid(t, hd+"explore: {latency: {p50: 50ms, p99: 5ms}}\n", []string{
		"bad.yaml:4: explore.latency: latency p99 is 5ms, must be at least p50 (50ms): want p50 <= p99 <= 10s, such as {p50: 5ms, p99: 200ms}; p99: 0 turns latency off",
	})
	requireInvalid(t, hd+"explore: {latency: {p50: 5ms}}\n", []string{
		"bad.yaml:4: explore.latency.p99: missing: this field is required",
	})
	requireInvalid(t, hd+"faults: {latency: {p99: soon}}\n", []string{
		`bad.yaml:4: faults.latency.p99: "soon" is not a duration: want a duration such as 0, 250ms, 1.5s or 2m`,
	})
}
