// Package clone copies values across the simulated boundary between a caller
// and an object, and in and out of storage: dosim's analogue of the
// structured clone (rules O4, O5).
//
// Plain data is copied deeply, so that neither side shares memory with the
// other: bools, numbers, strings, time.Time, and slices, arrays, maps,
// structs (their unexported fields too) and pointers and interfaces made of
// them. Parts shared inside a value stay shared in its copy. A value that
// contains itself (a cycle) is refused, and so is one nested deeper than
// MaxDepth. Funcs, channels, unsafe pointers and operating-system handles
// (*os.File, network connections: whatever implements syscall.Conn) are
// never data and are refused under every policy. Readers (io.Reader) and
// whatever the policy's Ref hook claims (stubs and RPC targets) are passed
// by reference when the policy allows it, and they make the request
// one-shot (rule S11); elsewhere they are refused too. Every error names
// the path to the value, as "value.Items[3].Next".
package clone

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// ErrNotCopyable is wrapped by errors for values that are not plain data.
var ErrNotCopyable = errors.New("value cannot be copied")

// ErrTooDeep is wrapped by the error for a value nested more than MaxDepth
// levels deep (a long linked list, say). It also wraps ErrNotCopyable.
var ErrTooDeep = fmt.Errorf("%w: nested too deeply", ErrNotCopyable)

// ErrCycle is wrapped by the error for a value that contains itself: a
// pointer, map or slice met again inside its own contents. It also wraps
// ErrNotCopyable. A part shared without a cycle is not one.
var ErrCycle = fmt.Errorf("%w: it contains itself", ErrNotCopyable)

// MaxDepth is how many pointers, slices, maps and interfaces deep a value
// may nest for Copy. The copy recurses once per level; the limit keeps it
// far from the goroutine stack limit, whose overflow would kill the
// process where no recover can catch it. Ten thousand levels cost about
// ten megabytes of stack, and no plain data a caller passes to an object
// is nested so deep short of a linked list, which should travel as a
// slice.
const MaxDepth = 10000

// Result tells what a copy met on its way.
type Result struct {
	// Refs counts values passed by reference: a request holding any is not
	// replayable.
	Refs int
	// Ref says where the first of them is and what it is, as "value.Body
	// is a reader (*strings.Reader)"; "" when Refs is 0.
	Ref string
}

var (
	readerType = reflect.TypeFor[io.Reader]()
	handleType = reflect.TypeFor[syscall.Conn]()
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
	c := copier{p: p}
	out, err := c.copy(reflect.ValueOf(v))
	if err != nil {
		return nil, c.res, err
	}
	return out.Interface(), c.res, nil
}

// seenKey identifies a pointer, map or slice.
type seenKey struct {
	ptr uintptr
	len int
	typ reflect.Type
}

// seenCopy is the copy made of a pointer, map or slice, and which push on
// the copier's stack of open values began it, and where.
type seenCopy struct {
	out    reflect.Value
	at     int32
	serial uint32 // 0 for a value with no contents to copy, never pushed
}

// opened is a pointer, map or slice whose contents are being copied: which
// push it was, and how long the path to it is.
type opened struct {
	serial uint32
	path   int32
}

// copier is one deep copy. It finds cycles at next to no cost: each
// pointer, map and slice is remembered (in seen, made on first use; the
// top value apart, which is met again only through a cycle) with its push
// on the stack of values being copied; met again, it is a shared part
// unless its place on the stack still holds that push.
type copier struct {
	p      *Policy
	res    Result
	seen   map[seenKey]seenCopy
	top    seenKey  // the top value, when it is a pointer, map or slice
	open   []opened // the pointers, maps and slices being copied, outermost first
	pushes uint32
	path   []step // where the copy is, formatted only for an error
	depth  int    // pointers, slices, maps and interfaces entered
}

// stacks are the copier's first open and path stacks, made in one
// allocation when a value first needs either.
type stacks struct {
	open [8]opened
	path [8]step
}

// grow makes the stacks if they are not made yet.
func (c *copier) grow() {
	if c.path == nil {
		b := new(stacks)
		c.open, c.path = b.open[:0], b.path[:0]
	}
}

// down adds s to the path; up removes it.
func (c *copier) down(s step) {
	c.grow()
	c.path = append(c.path, s)
}

func (c *copier) up() { c.path = c.path[:len(c.path)-1] }

// step is one element of the path to the value being copied: an index (v
// not valid), a map key (v, with i -1) or a struct's field (v the struct,
// i the field's index). It is formatted only when an error needs it.
type step struct {
	v reflect.Value
	i int
}

// maxKeyText is how much of a map key a path shows.
const maxKeyText = 40

func (s step) String() string {
	switch {
	case !s.v.IsValid():
		return fmt.Sprintf("[%d]", s.i)
	case s.i >= 0:
		return "." + s.v.Type().Field(s.i).Name
	}
	k := fmt.Sprint(s.v)
	if len(k) > maxKeyText {
		k = k[:maxKeyText] + "..."
	}
	return "[" + k + "]"
}

// where names the value n steps down the path, as "value.Field[3]"; a
// very long path keeps its head and tail.
func (c *copier) where(n int) string {
	const head, tail = 8, 4
	path := c.path[:n]
	var b strings.Builder
	b.WriteString("value")
	for i, p := range path {
		if len(path) > head+tail && i == head {
			fmt.Fprintf(&b, "...(%d steps)...", len(path)-head-tail)
		}
		if len(path) > head+tail && i >= head && i < len(path)-tail {
			continue
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// here names the value being copied.
func (c *copier) here() string { return c.where(len(c.path)) }

// enter counts one more level of nesting and fails past MaxDepth.
func (c *copier) enter() error {
	c.depth++
	if c.depth > MaxDepth {
		return fmt.Errorf("%s: %w: more than %d levels of pointers, slices, maps or interfaces (a linked list this long should travel as a slice)", c.here(), ErrTooDeep, MaxDepth)
	}
	return nil
}

// lookup finds the copy already made of the pointer, map or slice key (ok),
// or fails if key is being copied: the value contains itself.
func (c *copier) lookup(key seenKey) (out reflect.Value, ok bool, err error) {
	if s, found := c.seen[key]; found {
		if int(s.at) < len(c.open) && c.open[s.at].serial == s.serial {
			return reflect.Value{}, false, c.cycle(int(s.at))
		}
		return s.out, true, nil
	}
	if len(c.open) > 0 && c.top == key { // the top value, never remembered
		return reflect.Value{}, false, c.cycle(0)
	}
	return reflect.Value{}, false, nil
}

func (c *copier) cycle(at int) error {
	return fmt.Errorf("%s is %s again: %w", c.here(), c.where(int(c.open[at].path)), ErrCycle)
}

// atTop reports whether the copy is at the top value.
func (c *copier) atTop() bool { return len(c.path) == 0 && len(c.open) == 0 }

// remember records out as the copy of key, so that a part shared inside
// the value stays shared in the copy.
func (c *copier) remember(key seenKey, out reflect.Value, serial uint32) {
	if c.seen == nil {
		c.seen = make(map[seenKey]seenCopy)
	}
	c.seen[key] = seenCopy{out: out, at: int32(len(c.open)), serial: serial}
}

// push remembers out as the copy of key and marks key open while its
// contents are copied; pop ends that.
func (c *copier) push(key seenKey, out reflect.Value) {
	c.grow()
	c.pushes++
	if c.atTop() {
		c.top = key // met again only through a cycle, which lookup finds
	} else {
		c.remember(key, out, c.pushes)
	}
	c.open = append(c.open, opened{serial: c.pushes, path: int32(len(c.path))})
}

func (c *copier) pop() { c.open = c.open[:len(c.open)-1] }

// refuse is the error for a value that is never data.
func (c *copier) refuse(what string) error {
	return fmt.Errorf("%s holds %s: %w (only plain data is allowed here)", c.here(), what, ErrNotCopyable)
}

// ref passes v (or r, which replaces it) by reference if the policy
// allows it.
func (c *copier) ref(v, r reflect.Value, what string) (reflect.Value, error) {
	if c.p == nil || !c.p.AllowRefs {
		return reflect.Value{}, c.refuse(what + " (" + v.Type().String() + ")")
	}
	if c.res.Refs == 0 {
		c.res.Ref = c.here() + " is " + what + " (" + v.Type().String() + ")"
	}
	c.res.Refs++
	return r, nil
}

// reader passes a reader by reference; an operating-system handle is
// refused.
func (c *copier) reader(v reflect.Value) (reflect.Value, error) {
	if v.Type().Implements(handleType) {
		return reflect.Value{}, fmt.Errorf("%s is an operating-system handle (%s): %w (a file or a connection is not data: send what it holds)", c.here(), v.Type(), ErrNotCopyable)
	}
	return c.ref(v, v, "a reader")
}

func (c *copier) copy(v reflect.Value) (reflect.Value, error) {
	if !v.IsValid() {
		return v, nil
	}
	t := v.Type()
	k := t.Kind()
	if PlainKind(k) {
		return v, nil // never a reference: Ref is not asked
	}
	if c.p != nil && c.p.Ref != nil && (k == reflect.Pointer || k == reflect.Struct) {
		if r, what, ok := c.p.Ref(v); ok {
			return c.ref(v, r, what)
		}
	}
	switch k {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		if err := c.enter(); err != nil {
			return reflect.Value{}, err
		}
		out, err := c.reference(v, k)
		c.depth--
		return out, err
	case reflect.Array:
		return c.array(v)
	case reflect.Struct:
		return c.structure(v)
	case reflect.Func:
		if c.p != nil && c.p.AllowRefs && c.p.Funcs {
			if v.IsNil() {
				return v, nil
			}
			return c.ref(v, v, "a function")
		}
		return reflect.Value{}, c.refuse("a func")
	case reflect.Chan:
		if c.p != nil && c.p.AllowRefs {
			return reflect.Value{}, c.refuse("a channel (no platform counterpart: send a stream as an io.Reader)")
		}
		return reflect.Value{}, c.refuse("a channel")
	case reflect.UnsafePointer:
		return reflect.Value{}, c.refuse("an unsafe pointer")
	}
	return reflect.Value{}, c.refuse("a " + k.String())
}

// reference copies a pointer, slice, map or interface, one level deeper.
func (c *copier) reference(v reflect.Value, k reflect.Kind) (reflect.Value, error) {
	switch k {
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		return c.copy(v.Elem()) // the caller stores it in its own interface
	case reflect.Pointer:
		return c.pointer(v)
	case reflect.Slice:
		return c.slice(v)
	}
	return c.mapping(v)
}

func (c *copier) pointer(v reflect.Value) (reflect.Value, error) {
	if v.IsNil() {
		return v, nil
	}
	t := v.Type()
	if t.Implements(readerType) {
		return c.reader(v)
	}
	key := seenKey{ptr: v.Pointer(), typ: t}
	if prev, ok, err := c.lookup(key); ok || err != nil {
		return prev, err
	}
	out := reflect.New(t.Elem())
	c.push(key, out)
	inner, err := c.copy(v.Elem())
	c.pop()
	if err != nil {
		return inner, err
	}
	out.Elem().Set(inner)
	return out, nil
}

func (c *copier) slice(v reflect.Value) (reflect.Value, error) {
	if v.IsNil() {
		return v, nil
	}
	t := v.Type()
	if t.Elem().Kind() == reflect.Uint8 {
		return reflect.ValueOf(append([]byte(nil), v.Bytes()...)).Convert(t), nil
	}
	key := seenKey{v.Pointer(), v.Len(), t}
	if prev, ok, err := c.lookup(key); ok || err != nil {
		return prev, err
	}
	out := reflect.MakeSlice(t, v.Len(), v.Len())
	if PlainKind(t.Elem().Kind()) {
		if !c.atTop() {
			c.remember(key, out, 0) // holds nothing that could lead back to it: never open
		}
		reflect.Copy(out, v)
		return out, nil
	}
	c.push(key, out)
	out, err := c.elements(v, out)
	c.pop()
	return out, err
}

func (c *copier) array(v reflect.Value) (reflect.Value, error) {
	out := reflect.New(v.Type()).Elem()
	if PlainKind(v.Type().Elem().Kind()) {
		out.Set(v)
		return out, nil
	}
	return c.elements(v, out)
}

func (c *copier) mapping(v reflect.Value) (reflect.Value, error) {
	if v.IsNil() {
		return v, nil
	}
	t := v.Type()
	key := seenKey{ptr: v.Pointer(), typ: t}
	if prev, ok, err := c.lookup(key); ok || err != nil {
		return prev, err
	}
	out := reflect.MakeMapWithSize(t, v.Len())
	c.push(key, out)
	err := c.entries(v, out)
	c.pop()
	if err != nil {
		return reflect.Value{}, err
	}
	return out, nil
}

// entries copies the keys and values of the map v into out, recording
// each key in the path for error messages.
func (c *copier) entries(v, out reflect.Value) error {
	t := v.Type()
	k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem() // reused: each copy is stored before the next
	var it reflect.MapIter
	it.Reset(v)
	for it.Next() {
		k.SetIterKey(&it)
		e.SetIterValue(&it)
		ck, err := c.copy(k)
		if err != nil {
			return err
		}
		c.down(step{v: k, i: -1})
		ce, err := c.copy(e)
		c.up()
		if err != nil {
			return err
		}
		out.SetMapIndex(ck, ce)
	}
	return nil
}

func (c *copier) structure(v reflect.Value) (reflect.Value, error) {
	t := v.Type()
	p := planOf(t)
	if p.as == asIs {
		return v, nil // scalars only: the caller stores a copy of v, an interface shares its immutable box
	}
	if p.as == asReader {
		return c.reader(v)
	}
	out := reflect.New(t).Elem()
	out.Set(v) // copies every field; reference fields are replaced below
	for _, f := range p.fields {
		dst := out.Field(f.i) // already a shallow copy of v's field
		if !f.exported {
			dst = reflect.NewAt(f.typ, unsafe.Pointer(dst.UnsafeAddr())).Elem()
		}
		c.down(step{v: v, i: f.i})
		e, err := c.copy(dst)
		c.up()
		if err != nil {
			return e, err
		}
		dst.Set(e)
	}
	return out, nil
}

// structPlan is what structure needs to know of a struct type, worked out
// once per type (plans): how it copies, and its fields that are not plain
// scalars, the only ones it walks. A struct of an agent's queued task was
// a tenth of an outbox-queue seed's time, most of it asking the type for
// each field again (BenchmarkCopyStruct).
type structPlan struct {
	as     structCopy
	fields []planField
}

// structCopy is how a struct type copies.
type structCopy uint8

const (
	asFields structCopy = iota // field by field, as fields says
	asIs                       // by assignment: a time, or scalars only
	asReader                   // by reference, as an io.Reader (reader)
)

// planField is one field a struct's copy walks: its index, whether it is
// exported, and its type.
type planField struct {
	i        int
	exported bool
	typ      reflect.Type
}

// plans holds each struct type's structPlan (reflect.Type to *structPlan):
// a process has as many as it has struct types, a few.
var plans sync.Map

// planOf returns struct type t's plan, working it out the first time.
func planOf(t reflect.Type) *structPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan)
	}
	p := &structPlan{as: asIs}
	switch {
	case t == timeType:
	case t.Implements(readerType):
		p.as = asReader
	default:
		for i := range t.NumField() {
			if f := t.Field(i); !PlainKind(f.Type.Kind()) {
				p.fields = append(p.fields, planField{i: i, exported: f.IsExported(), typ: f.Type})
			}
		}
		if len(p.fields) > 0 {
			p.as = asFields
		}
	}
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*structPlan)
}

// elements copies the elements of the slice or array v into out, which has
// v's length, recording each index in the path for error messages.
func (c *copier) elements(v, out reflect.Value) (reflect.Value, error) {
	for i := range v.Len() {
		c.down(step{i: i})
		e, err := c.copy(v.Index(i))
		c.up()
		if err != nil {
			return e, err
		}
		out.Index(i).Set(e)
	}
	return out, nil
}
