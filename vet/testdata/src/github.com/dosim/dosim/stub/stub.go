// Package stub is a stub of dosim's stub package.
package stub

import (
	"context"
	"errors"
	"net/http"
)

type Stub struct{}

func (s *Stub) Call(ctx context.Context, method string, args ...any) (any, error)  { return nil, nil }
func (s *Stub) Fetch(ctx context.Context, r *http.Request) (*http.Response, error) { return nil, nil }
func (s *Stub) Broken() error                                                      { return nil }

func CallAs[T any](ctx context.Context, s *Stub, method string, args ...any) (T, error) {
	var v T
	return v, nil
}

type Error struct{ Remote bool }

func (e *Error) Error() string { return "stub error" }

var ErrRemote = errors.New("object error")
