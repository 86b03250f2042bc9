package brokenstub

import (
	"context"
	"errors"
	"log"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

func Ignored(ctx context.Context, s *stub.Stub) {
	_, _ = s.Call(ctx, "A")
	_, _ = s.Call(ctx, "B") // want `s may be broken here: its call on line 13 can fail with an error nobody checked for Remote.*take a new stub from the namespace`
}

func Logged(ctx context.Context, s *stub.Stub) (int, error) {
	if _, err := s.Call(ctx, "A"); err != nil {
		log.Print(err)
	}
	return stub.CallAs[int](ctx, s, "B") // want `s may be broken here: its call on line 18`
}

func RetryLoop(ctx context.Context, s *stub.Stub) error {
	var err error
	for range 3 {
		if _, err = s.Call(ctx, "A"); err == nil { // want `s may be broken when this call runs again in the loop`
			break
		}
	}
	return err
}

func Returned(ctx context.Context, s *stub.Stub) error {
	if _, err := s.Call(ctx, "A"); err != nil {
		return err
	}
	_, err := s.Call(ctx, "B")
	return err
}

func Remote(ctx context.Context, s *stub.Stub) error {
	_, err := s.Call(ctx, "A")
	var e *stub.Error
	if errors.As(err, &e) && !e.Remote {
		return err
	}
	_, err = s.Call(ctx, "B")
	return err
}

func Fresh(ctx context.Context, ns *runtime.Namespace) error {
	s, err := ns.GetByName("a")
	if err != nil {
		return err
	}
	if _, err := s.Call(ctx, "A"); err != nil {
		s, _ = ns.GetByName("a") // a new stub after a failure
	}
	_, err = s.Call(ctx, "B")
	return err
}

func Branches(ctx context.Context, s *stub.Stub, fetch bool) error {
	var err error
	if fetch {
		_, err = s.Fetch(ctx, nil)
	} else {
		_, err = s.Call(ctx, "A")
	}
	return err
}

func Concurrent(ctx context.Context, s *stub.Stub, run func(func() error)) {
	for range 2 {
		run(func() error { _, err := s.Call(ctx, "A"); return err })
	}
}

type fataler interface{ Fatal(args ...any) }

func Fatal(ctx context.Context, t fataler, s *stub.Stub) {
	_, err := s.Call(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Call(ctx, "B")
}

func Silenced(ctx context.Context, s *stub.Stub) {
	_, _ = s.Call(ctx, "A")
	_, _ = s.Call(ctx, "B") //dosimvet:ok the object is a local fake: no fault can break it
}
