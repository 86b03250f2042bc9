package clone

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// Number is the one reader of untyped numbers (issue 10): what JSON, YAML
// and Go make is a number; strings, bools, nil and containers are not.
func TestNumberReadsUntypedInput(t *testing.T) {
	type named float32
	yes := []struct {
		v    any
		want float64
	}{
		{3.0, 3}, {json.Number("3"), 3}, {json.Number("2.5"), 2.5}, {json.Number("-0"), 0},
		{int(7), 7}, {int8(-8), -8}, {int64(math.MaxInt64), math.MaxInt64}, {uint64(math.MaxUint64), math.MaxUint64},
		{uint8(9), 9}, {float32(0.5), 0.5}, {time.Duration(11), 11}, {named(1.5), 1.5},
		{json.Number("1e400"), math.Inf(1)}, {json.Number("-1e400"), math.Inf(-1)},
	}
	for _, c := range yes {
		got, ok := Number(c.v)
		if !ok || got != c.want {
			t.Errorf("Number(%#v) = %v, %v; want %v, true", c.v, got, ok, c.want)
		}
	}
	for _, v := range []any{"3", json.Number(""), json.Number("three"), json.Number("0x10"), true, nil, []any{1}, map[string]any{"a": 1}, struct{}{}} {
		if got, ok := Number(v); ok {
			t.Errorf("Number(%#v) = %v, true; want not a number", v, got)
		}
	}
}
