package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/scenario"
)

// decodeArgs reads a method's arguments given as a JSON array (verify and
// amplify --args); anything else, null and an object included, is
// refused, saying so. Whole numbers keep every digit (int64, or uint64
// above it); other numbers are float64, as from any JSON decoder.
func decodeArgs(raw string) ([]any, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil { // its messages are the familiar ones
		return nil, fmt.Errorf("%s is not a JSON array: %w", quote.Q(raw), err)
	}
	if _, ok := v.([]any); !ok {
		return nil, fmt.Errorf("%s is not a JSON array: want the method's arguments as one, such as [\"apple\", 3] ([] for none)", quote.Q(raw))
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s is not a JSON array: %w", quote.Q(raw), err)
	}
	return numbers(v).([]any), nil
}

// numbers turns the json.Numbers in v into int64, uint64 or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return u
			}
		}
		f, _ := x.Float64() // out of range: ±Inf, which no parameter takes
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

// checkArgs says, before anything runs, why args do not fit method m of
// class (from where, such as "--args SetQuantity"): their number, an
// argument's type or range (scenario.CheckArgs, as a scenario file's
// calls are checked).
func checkArgs(where, class, method string, m object.Method, args []any) error {
	if err := scenario.CheckArgs(method, m, args); err != nil {
		return usageErrorf("%s: %s.%w", where, class, err)
	}
	return nil
}
