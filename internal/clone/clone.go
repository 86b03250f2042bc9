// Package clone copies values across the simulated boundary between a caller
// and an object, and in and out of storage: dosim's analogue of the
// structured clone (rules O4, O5).
//
// Plain data (numbers, strings, bools, slices, arrays, maps, structs and
// pointers to them, time values) is copied deeply, so that neither side
// shares memory with the other. Values that cannot be copied meaningfully
// (funcs, channels, io.Readers, and whatever the caller's Ref hook claims,
// such as stubs and RPC targets) are passed by reference when the policy
// allows it, and they make the request one-shot (rule S11).
package clone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// ErrNotCopyable is wrapped by errors for values that cannot be stored.
var ErrNotCopyable = errors.New("value cannot be copied")

// ErrTooDeep is wrapped by the error for a value nested more than MaxDepth
// levels deep (a long linked list, say). It also wraps ErrNotCopyable.
var ErrTooDeep = fmt.Errorf("%w: nested too deeply", ErrNotCopyable)

// MaxDepth is how many pointers, slices, maps and interfaces deep a value
// may nest for Copy. The copy recurses once per level; the limit keeps it
// far from the goroutine stack limit, whose overflow would kill the
// process where no recover can catch it. A cycle does not count: a
// pointer already copied is not followed again. Ten thousand levels cost
// about ten megabytes of stack, and no plain data a caller passes to an
// object is nested so deep short of a linked list, which should travel as
// a slice.
const MaxDepth = 10000

// Policy says how to treat values that are not plain data.
type Policy struct {
	// AllowRefs passes funcs, channels, readers and Ref values by reference
	// instead of failing.
	AllowRefs bool
	// Ref, if set, may replace a by-reference value (for example a stub by a
	// non-retrying stub) and reports whether v is such a value. It is never
	// asked about a value of a plain scalar kind (bool, number, string):
	// those are always copied.
	Ref func(v reflect.Value) (reflect.Value, bool)
}

// Result tells what a copy met on its way.
type Result struct {
	// Refs counts values passed by reference: a request holding any is not
	// replayable.
	Refs int
}

var (
	readerType = reflect.TypeFor[io.Reader]()
	timeType   = reflect.TypeFor[time.Time]()
)

// Immutable reports whether v is a value of a type that cannot be changed
// through it (nil, strings, numbers, bools, durations, times), which
// copies need not duplicate.
func Immutable(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, time.Duration, time.Time:
		return true
	}
	return false
}

// Copy returns a deep copy of v under policy p.
func Copy(v any, p *Policy) (any, Result, error) {
	if Immutable(v) {
		return v, Result{}, nil
	}
	c := copier{p: p, seen: map[seenKey]reflect.Value{}}
	out, err := c.copy(reflect.ValueOf(v))
	if err != nil {
		return nil, c.res, err
	}
	return out.Interface(), c.res, nil
}

// seenKey identifies a pointer, map or slice already copied.
type seenKey struct {
	ptr uintptr
	len int
	typ reflect.Type
}

type copier struct {
	p     *Policy
	res   Result
	seen  map[seenKey]reflect.Value // what was copied already: shared parts stay shared, cycles end
	path  []step                    // where the copy is, formatted only for an error
	depth int                       // pointers, slices, maps and interfaces entered
}

// step is one element of the path to the value being copied: an index, a
// map key or a field name. It is formatted only when an error needs it.
type step struct {
	index int
	key   reflect.Value // a map key, when valid
	field string        // a field name, when set
}

func (s step) String() string {
	switch {
	case s.field != "":
		return "." + s.field
	case s.key.IsValid():
		return fmt.Sprintf("[%v]", s.key)
	}
	return fmt.Sprintf("[%d]", s.index)
}

// where names the value being copied, as "value.Field[3]"; a very long
// path keeps its head and tail.
func (c *copier) where() string {
	const head, tail = 8, 4
	var b strings.Builder
	b.WriteString("value")
	for i, p := range c.path {
		if len(c.path) > head+tail && i == head {
			fmt.Fprintf(&b, "...(%d steps)...", len(c.path)-head-tail)
		}
		if len(c.path) > head+tail && i >= head && i < len(c.path)-tail {
			continue
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// enter counts one more level of nesting and fails past MaxDepth.
func (c *copier) enter() error {
	c.depth++
	if c.depth > MaxDepth {
		return fmt.Errorf("%s: %w: more than %d levels of pointers, slices, maps or interfaces (a linked list this long should travel as a slice)", c.where(), ErrTooDeep, MaxDepth)
	}
	return nil
}

func (c *copier) ref(v reflect.Value, what string) (reflect.Value, error) {
	if c.p == nil || !c.p.AllowRefs {
		return reflect.Value{}, fmt.Errorf("%s holds a %s: %w (only plain data is allowed here)", c.where(), what, ErrNotCopyable)
	}
	c.res.Refs++
	return v, nil
}

func (c *copier) copy(v reflect.Value) (reflect.Value, error) {
	if !v.IsValid() {
		return v, nil
	}
	t := v.Type()
	if plainKind(t.Kind()) {
		return v, nil // never a reference: Ref is not asked
	}
	if c.p != nil && c.p.Ref != nil {
		if r, ok := c.p.Ref(v); ok {
			return c.ref(r, "reference ("+t.String()+")")
		}
	}
	if t == timeType {
		return v, nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		if err := c.enter(); err != nil {
			return reflect.Value{}, err
		}
		defer func() { c.depth-- }()
	}
	switch t.Kind() {
	case reflect.Func:
		return c.ref(v, "func")
	case reflect.Chan:
		return c.ref(v, "channel")
	case reflect.UnsafePointer:
		return c.ref(v, "unsafe pointer")
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		inner, err := c.copy(v.Elem())
		if err != nil {
			return inner, err
		}
		out := reflect.New(t).Elem()
		out.Set(inner)
		return out, nil
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		if t.Implements(readerType) {
			return c.ref(v, "io.Reader")
		}
		if prev, ok := c.seen[seenKey{v.Pointer(), 0, t}]; ok {
			return prev, nil
		}
		out := reflect.New(t.Elem())
		c.seen[seenKey{v.Pointer(), 0, t}] = out
		inner, err := c.copy(v.Elem())
		if err != nil {
			return inner, err
		}
		out.Elem().Set(inner)
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return v, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return reflect.ValueOf(append([]byte(nil), v.Bytes()...)).Convert(t), nil
		}
		key := seenKey{v.Pointer(), v.Len(), t}
		if prev, ok := c.seen[key]; ok {
			return prev, nil
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		c.seen[key] = out
		if plainKind(t.Elem().Kind()) {
			reflect.Copy(out, v)
			return out, nil
		}
		return c.elements(v, out)
	case reflect.Array:
		out := reflect.New(t).Elem()
		if plainKind(t.Elem().Kind()) {
			out.Set(v)
			return out, nil
		}
		return c.elements(v, out)
	case reflect.Map:
		if v.IsNil() {
			return v, nil
		}
		key := seenKey{v.Pointer(), 0, t}
		if prev, ok := c.seen[key]; ok {
			return prev, nil
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		c.seen[key] = out
		it := v.MapRange()
		for it.Next() {
			key, err := c.copy(it.Key())
			if err != nil {
				return key, err
			}
			c.path = append(c.path, step{key: it.Key()})
			val, err := c.copy(it.Value())
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return val, err
			}
			out.SetMapIndex(key, val)
		}
		return out, nil
	case reflect.Struct:
		if t.Implements(readerType) {
			return c.ref(v, "io.Reader")
		}
		out := reflect.New(t).Elem()
		out.Set(v) // copies every field; reference fields are replaced below
		for i := range t.NumField() {
			f := t.Field(i)
			if plainKind(f.Type.Kind()) {
				continue
			}
			dst := out.Field(i) // already a shallow copy of v's field
			if !f.IsExported() {
				dst = reflect.NewAt(f.Type, unsafe.Pointer(dst.UnsafeAddr())).Elem()
			}
			c.path = append(c.path, step{field: f.Name})
			e, err := c.copy(dst)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return e, err
			}
			dst.Set(e)
		}
		return out, nil
	}
	return c.ref(v, t.Kind().String())
}

func plainKind(k reflect.Kind) bool {
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

// elements copies the elements of the slice or array v into out, which has
// v's length, recording each index in the path for error messages.
func (c *copier) elements(v, out reflect.Value) (reflect.Value, error) {
	for i := range v.Len() {
		c.path = append(c.path, step{index: i})
		e, err := c.copy(v.Index(i))
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return e, err
		}
		out.Index(i).Set(e)
	}
	return out, nil
}
