// Package typed is what the typed stubs that dosim-gen writes call: a
// Source of stubs (one stub, or a fresh one per call) and Call and Do,
// which call a method by name through it and convert the result.
//
// Generated code is its main user; see cmd/dosim-gen. Written by hand, a
// typed call reads
//
//	n, err := typed.Call[int](ctx, typed.One(s), "Deposit", "tx-1", 50)
//
// which is stub.CallAs[int](ctx, s, "Deposit", "tx-1", 50).
package typed

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/stub"
)

// ErrNoStub is wrapped by the error of a call through a Source that has
// no stub to give: One(nil), or Fresh with a nil namespace.
var ErrNoStub = errors.New("typed: no stub")

// Source gives a typed stub the *stub.Stub each of its calls goes through.
type Source interface {
	// Stub returns the stub for the next call, or why there is none.
	Stub() (*stub.Stub, error)
}

// Namespace is where Fresh takes its stubs: *runtime.Namespace is one.
type Namespace interface {
	GetByName(name string, opts ...stub.Option) (*stub.Stub, error)
}

// One returns the Source whose every call goes through s. After a call
// fails with an error that is not the object's own answer, s is broken
// (rule L2) and so is every later call through it: take a new stub, or
// use Fresh.
func One(s *stub.Stub) Source { return one{s} }

type one struct{ s *stub.Stub }

func (o one) Stub() (*stub.Stub, error) {
	if o.s == nil {
		return nil, fmt.Errorf("%w: the stub is nil", ErrNoStub)
	}
	return o.s, nil
}

// Fresh returns the Source that takes a new stub, ns.GetByName(name,
// opts...), for every call, so that a failure that breaks one call's stub
// (rule L2) does not fail the calls after it. GetByName's error, a bad
// option for one, is the call's error.
func Fresh(ns Namespace, name string, opts ...stub.Option) Source {
	return fresh{ns: ns, name: name, opts: opts}
}

type fresh struct {
	ns   Namespace
	name string
	opts []stub.Option
}

func (f fresh) Stub() (*stub.Stub, error) {
	if f.ns == nil {
		return nil, fmt.Errorf("%w: the namespace is nil (object %q)", ErrNoStub, f.name)
	}
	s, err := f.ns.GetByName(f.name, f.opts...)
	if err != nil {
		return nil, fmt.Errorf("typed: a fresh stub of %q: %w", f.name, err)
	}
	return s, nil
}

// Call calls method with args through src's stub and converts its result
// to T, as stub.CallAs does (an error wrapping stub.ErrType when it does
// not convert). A method whose result is an RPC target gives a *stub.Stub.
func Call[T any](ctx context.Context, src Source, method string, args ...any) (T, error) {
	var zero T
	if src == nil {
		return zero, fmt.Errorf("%w: the source is nil (method %s)", ErrNoStub, method)
	}
	s, err := src.Stub()
	if err != nil {
		return zero, err
	}
	return stub.CallAs[T](ctx, s, method, args...)
}

// Do calls method with args through src's stub, for a method that
// returns only an error.
func Do(ctx context.Context, src Source, method string, args ...any) error {
	if src == nil {
		return fmt.Errorf("%w: the source is nil (method %s)", ErrNoStub, method)
	}
	s, err := src.Stub()
	if err != nil {
		return err
	}
	_, err = s.Call(ctx, method, args...)
	return err
}
