// Package invoke checks method signatures and calls methods by reflection,
// copying arguments into the parameter types (rule O5).
package invoke

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/dosim/dosim/internal/clone"
)

var (
	ctxType = reflect.TypeFor[context.Context]()
	errType = reflect.TypeFor[error]()
)

// ErrSignature is wrapped by signature errors.
var ErrSignature = errors.New("bad method signature")

// ErrArguments is wrapped by errors for arguments of the wrong count or type.
var ErrArguments = errors.New("bad arguments")

// Sig is a checked method signature, shared by every function of its type.
type Sig struct {
	typ    reflect.Type
	params []reflect.Type // after the context
	result bool           // returns (R, error) rather than error
	err    string         // what is wrong with the signature, "" if nothing
}

// sigs caches signatures by function type; runtimes may run in parallel.
var sigs sync.Map // reflect.Type -> *Sig

func sigOf(t reflect.Type) *Sig {
	if s, ok := sigs.Load(t); ok {
		return s.(*Sig)
	}
	s := &Sig{typ: t}
	const want = "want func(context.Context, args...) (R, error) or func(context.Context, args...) error"
	switch {
	case t.Kind() != reflect.Func:
		s.err = fmt.Sprintf("%s is not a function", t)
	case t.IsVariadic():
		s.err = fmt.Sprintf("%s is variadic; %s", t, want)
	case t.NumIn() == 0 || t.In(0) != ctxType:
		s.err = fmt.Sprintf("%s does not take a context.Context first; %s", t, want)
	case t.NumOut() == 0:
		s.err = fmt.Sprintf("%s returns nothing; %s", t, want)
	case t.Out(t.NumOut()-1) != errType:
		s.err = fmt.Sprintf("%s does not return error last; %s", t, want)
	case t.NumOut() > 2:
		s.err = fmt.Sprintf("%s returns %d values before its error, and a method returns one at most (return a struct of them); %s", t, t.NumOut()-1, want)
	default:
		s.result = t.NumOut() == 2
		for i := 1; i < t.NumIn(); i++ {
			s.params = append(s.params, t.In(i))
		}
	}
	actual, _ := sigs.LoadOrStore(t, s)
	return actual.(*Sig)
}

// Func is a checked method, ready to call.
type Func struct {
	Name string
	fn   reflect.Value
	raw  any // the function itself, for the direct path
	*Sig
}

// Compile checks that fn is func(context.Context, args...) (R, error) or
// func(context.Context, args...) error, and says what is wrong if not.
// Signatures are checked once per function type.
func Compile(name string, fn any) (Func, error) {
	if fn == nil {
		return Func{}, fmt.Errorf("method %q: %w: function is nil", name, ErrSignature)
	}
	v := reflect.ValueOf(fn)
	s := sigOf(v.Type())
	if s.err != "" {
		return Func{}, fmt.Errorf("method %q: %w: %s", name, ErrSignature, s.err)
	}
	if v.IsNil() {
		return Func{}, fmt.Errorf("method %q: %w: function is nil", name, ErrSignature)
	}
	return Func{Name: name, fn: v, raw: fn, Sig: s}, nil
}

// Arity is the number of arguments after the context.
func (f Func) Arity() int { return len(f.params) }

// Args converts the caller's arguments, already copied by the stub, into
// the parameter types, or says which argument does not fit.
func (f Func) Args(ctx context.Context, args []any) ([]reflect.Value, error) {
	if len(args) != len(f.params) {
		return nil, fmt.Errorf("method %q: %w: got %d arguments, want %d (%s)",
			f.Name, ErrArguments, len(args), len(f.params), f.fn.Type())
	}
	in := make([]reflect.Value, 1+len(args))
	in[0] = reflect.ValueOf(&ctx).Elem()
	for i, a := range args {
		v, err := clone.Convert(a, f.params[i])
		if err != nil {
			return nil, fmt.Errorf("method %q: %w: argument %d: %w", f.Name, ErrArguments, i+1, err)
		}
		in[i+1] = v
	}
	return in, nil
}

// CheckPayload reports why payload could not be f's argument as a task
// passes it (rule A6): the one argument, or none when payload is nil and
// f takes none; nil if it could. The error names f, its parameter's type
// and the payload's, and wraps ErrArguments.
func (f Func) CheckPayload(payload any) error {
	switch len(f.params) {
	case 0:
		if payload == nil {
			return nil
		}
		return fmt.Errorf("%w: callback %q takes no argument, but the payload is %s", ErrArguments, f.Name, typeOf(payload))
	case 1:
	default:
		return fmt.Errorf("%w: callback %q takes %d arguments (%s), but a task passes its payload as the only one", ErrArguments, f.Name, len(f.params), f.fn.Type())
	}
	if _, err := clone.Convert(payload, f.params[0]); err != nil {
		return fmt.Errorf("%w: callback %q takes %s, but the payload is %s: %w", ErrArguments, f.Name, article(f.params[0].String()), typeOf(payload), err)
	}
	return nil
}

// typeOf names v's type with its article: "a string", "nil".
func typeOf(v any) string {
	if v == nil {
		return "nil"
	}
	return article(reflect.TypeOf(v).String())
}

func article(name string) string {
	if strings.IndexByte("aeiou", name[0]) >= 0 {
		return "an " + name
	}
	return "a " + name
}

// Panic is a panic raised by a method, with its stack.
type Panic struct {
	Value any
	Stack []byte
}

// Error says what the method panicked with.
func (p *Panic) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Call runs the method with converted arguments. A panic is returned as a *Panic.
func (f Func) Call(in []reflect.Value) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &Panic{Value: r, Stack: debug.Stack()}
		}
	}()
	out := f.fn.Call(in)
	if e := out[len(out)-1]; !e.IsNil() {
		err = e.Interface().(error)
	}
	if f.result {
		result = out[0].Interface()
	}
	return result, err
}
