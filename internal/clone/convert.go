package clone

// Converting a value into the Go type a method or a caller wants (Into,
// Convert): an assignable value as it is, anything else through JSON, and
// a number to another numeric kind only when no value is lost.

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// PlainKind reports whether a value of kind k is plain data with no parts:
// a bool, a number or a string, copied by assignment.
func PlainKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	}
	return false
}

// Into stores a copy of src in the value dst points to, converting between
// compatible types: an exact or assignable type is copied deeply; anything
// else goes through JSON, so an int read back as an int64, or a number
// decoded from YAML into an int, works, while a string into an int fails.
func Into(dst any, src any) error {
	dv := reflect.ValueOf(dst)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return fmt.Errorf("destination must be a non-nil pointer, got %T", dst)
	}
	cp, _, err := Copy(src, nil)
	if err != nil {
		return err
	}
	out, err := Convert(cp, dv.Type().Elem())
	if err != nil {
		return err
	}
	dv.Elem().Set(out)
	return nil
}

// Convert returns src as a value of type t: src itself when its type is
// assignable to t, else a converted value (see Into). It does not copy src:
// copy first when the result must not share memory with it.
func Convert(src any, t reflect.Type) (reflect.Value, error) {
	if src == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
			return reflect.Zero(t), nil
		}
		return reflect.Value{}, fmt.Errorf("cannot use null: want %s", Want(t))
	}
	cp := src
	sv := reflect.ValueOf(cp)
	if st := sv.Type(); st == t {
		return sv, nil
	} else if st.AssignableTo(t) {
		return sv.Convert(t), nil
	}
	if isNumber(sv.Kind()) && isNumber(t.Kind()) {
		return convertNumber(sv, t)
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return reflect.Value{}, fmt.Errorf("cannot use %s: want %s", describe(src), Want(t))
	}
	out := reflect.New(t)
	if err := json.Unmarshal(b, out.Interface()); err != nil {
		return reflect.Value{}, fmt.Errorf("cannot use %s: want %s", describe(src), Want(t))
	}
	return out.Elem(), nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		return fmt.Sprintf("%q (a string)", x)
	case bool:
		return fmt.Sprintf("%v (true or false)", x)
	case int, int64, float64:
		return fmt.Sprintf("%v (a number)", x)
	}
	return Want(reflect.TypeOf(v))
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// convertNumber converts between numeric kinds only when no value is lost.
func convertNumber(v reflect.Value, t reflect.Type) (reflect.Value, error) {
	out := v.Convert(t)
	back := out.Convert(v.Type())
	// A round trip that gives the value back is not enough: a uint64 above
	// MaxInt64 wraps to a negative int64 and back to itself.
	wrapped := (v.CanUint() && out.CanInt() && out.Int() < 0) ||
		(v.CanInt() && v.Int() < 0 && out.CanUint()) ||
		(v.CanFloat() && v.Float() < 0 && out.CanUint())
	if !back.Equal(v) || wrapped {
		return reflect.Value{}, fmt.Errorf("cannot use %v without losing its value: want %s", v, Want(t))
	}
	return out, nil
}
