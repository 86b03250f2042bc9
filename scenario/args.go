package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dosim/dosim/internal/clone"
	"github.com/dosim/dosim/internal/quote"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
)

// CheckArgs checks that args, as decoded from YAML or JSON, fit the
// parameters (after its context) of method m, called name: their number,
// and each argument's type and range, as the calls of a scenario file are
// checked when it loads. dosim verify and amplify check their --args with
// it. The error names the method's signature, the argument and what is
// allowed, and wraps runtime.ErrArguments.
func CheckArgs(name string, m object.Method, args []any) error {
	_, err := checkArgs(name, m, args)
	return err
}

// checkArgs is CheckArgs, with the index of the argument that does not
// fit (-1 for their number).
func checkArgs(name string, m object.Method, args []any) (int, error) {
	t := reflect.TypeOf(m.Fn())
	if t == nil || t.Kind() != reflect.Func || t.NumIn() < 1 {
		return -1, &ArgsError{Msg: fmt.Sprintf("%s is not a method: %v", name, t)}
	}
	params := make([]string, 0, t.NumIn())
	for i := 1; i < t.NumIn(); i++ {
		params = append(params, t.In(i).String())
	}
	sig := fmt.Sprintf("%s(%s)", name, strings.Join(params, ", "))
	if len(args) != len(params) {
		return -1, &ArgsError{Msg: fmt.Sprintf("%s takes %d argument(s), got %d", sig, len(params), len(args))}
	}
	for i, a := range args {
		if err := checkArg(a, t.In(i+1)); err != nil {
			return i, &ArgsError{Msg: fmt.Sprintf("%s: argument %d: %v", sig, i+1, err), Arg: i + 1}
		}
	}
	return -1, nil
}

// ArgsError is CheckArgs's error: which argument does not fit (Arg, from
// 1; 0 for their number) and the message. errors.Is(err,
// runtime.ErrArguments) holds.
type ArgsError struct {
	Msg string
	Arg int
}

// Error says what does not fit and what is allowed.
func (e *ArgsError) Error() string { return e.Msg }

// Is makes errors.Is(err, runtime.ErrArguments) hold.
func (e *ArgsError) Is(target error) bool { return target == runtime.ErrArguments }

// checkArg checks that v, an argument as decoded from YAML, fits a
// parameter of type t, and says in the user's terms (a string, a list, an
// integer from A to B) what is wrong when it does not. A number must fit
// the parameter exactly: in range, no fraction for an integer, not
// negative for an unsigned one (a call would otherwise wrap it).
func checkArg(v any, t reflect.Type) error {
	if msg := numberFits(v, t); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if _, err := clone.Convert(v, t); err != nil {
		return fmt.Errorf("%s is of the wrong type: want %s", describeValue(v), clone.Want(t))
	}
	return nil
}

// numberFits says what is wrong when v is a number that does not fit the
// numeric type t; "" when it fits or either is not a number.
func numberFits(v any, t reflect.Type) string {
	var n number
	switch x := v.(type) {
	case int:
		n = number{i: int64(x), kind: 'i', literal: strconv.Itoa(x)}
	case int64:
		n = number{i: x, kind: 'i', literal: strconv.FormatInt(x, 10)}
	case uint64:
		n = number{u: x, kind: 'u', literal: strconv.FormatUint(x, 10)}
	case float64:
		n = number{f: x, kind: 'f', literal: strconv.FormatFloat(x, 'g', -1, 64)}
	default:
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return n.fitsInt(t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return n.fitsUint(t.Bits())
	case reflect.Float32:
		if n.kind == 'f' && !math.IsInf(n.f, 0) && !math.IsNaN(n.f) && math.Abs(n.f) > math.MaxFloat32 {
			return fmt.Sprintf("%s is out of range: want a number from %g to %g", n.literal, -math.MaxFloat32, math.MaxFloat32)
		}
	}
	return ""
}

// number is a number decoded from YAML or JSON: an int64 (kind 'i'), a
// uint64 ('u') or a float64 ('f'), and how the file writes it.
type number struct {
	i       int64
	u       uint64
	f       float64
	kind    byte
	literal string
}

// fitsInt says what is wrong when n does not fit a signed integer of the
// given bits; "" when it fits.
func (n number) fitsInt(bits int) string {
	lo, hi := int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits)
	want := fmt.Sprintf("want an integer from %d to %d", lo, hi)
	switch n.kind {
	case 'i':
		if n.i < lo || n.i > hi {
			return n.literal + " is out of range: " + want
		}
	case 'u':
		if n.u > uint64(hi) {
			return n.literal + " is out of range: " + want
		}
	default:
		if n.f != math.Trunc(n.f) || math.IsInf(n.f, 0) {
			return n.literal + " is not a whole number: " + want
		}
		if n.f < float64(lo) || n.f >= -float64(lo) {
			return n.literal + " is out of range: " + want
		}
	}
	return ""
}

// fitsUint says what is wrong when n does not fit an unsigned integer of
// the given bits; "" when it fits.
func (n number) fitsUint(bits int) string {
	hi := uint64(math.MaxUint64) >> (64 - bits)
	want := fmt.Sprintf("want an integer from 0 to %d", hi)
	switch n.kind {
	case 'i':
		if n.i < 0 {
			return n.literal + " is negative: " + want
		}
		if uint64(n.i) > hi {
			return n.literal + " is out of range: " + want
		}
	case 'u':
		if n.u > hi {
			return n.literal + " is out of range: " + want
		}
	default:
		if n.f != math.Trunc(n.f) || math.IsInf(n.f, 0) {
			return n.literal + " is not a whole number: " + want
		}
		if n.f < 0 {
			return n.literal + " is negative: " + want
		}
		if n.f >= float64(hi)+1 {
			return n.literal + " is out of range: " + want
		}
	}
	return ""
}

// describeValue says what a value decoded from YAML is, in the user's
// terms: "three" (a string), 2.5 (a number), a list, a mapping.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quote.Q(x) + " (a string)"
	case bool:
		return strconv.FormatBool(x) + " (a bool)"
	case int, int64, uint64:
		return fmt.Sprint(x) + " (an integer)"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64) + " (a number)"
	case []any:
		return quote.Cut(render.Value(x)) + " (a list)"
	case map[string]any:
		return "a mapping"
	}
	return "a value"
}
