// Package object is a stub of dosim's object package: only what the
// analyzers' tests call.
package object

import (
	"context"
	"time"
)

type Object interface{ Methods() Methods }

type Methods map[string]Method

type Method struct{ fn any }

func Func(fn any) Method      { return Method{fn} }
func Retryable(fn any) Method { return Method{fn} }

type State struct{}

func (s *State) Now() time.Time                                       { return time.Time{} }
func (s *State) Sleep(ctx context.Context, d time.Duration) error     { return nil }
func (s *State) Storage() *Storage                                    { return nil }
func (s *State) SQL() *SQL                                            { return nil }
func (s *State) Effect(ctx context.Context, kind string, p any) error { return nil }
func (s *State) SetAlarm(ctx context.Context, at time.Time) error     { return nil }

type AlarmInfo struct{}

type Storage struct{}

func (s *Storage) Get(ctx context.Context, key string, dst any) (bool, error) { return false, nil }
func (s *Storage) Put(ctx context.Context, key string, v any) error           { return nil }
func (s *Storage) Delete(ctx context.Context, key string) (bool, error)       { return false, nil }
func (s *Storage) Transaction(ctx context.Context, fn func(ctx context.Context, tx *Storage) error) error {
	return fn(ctx, s)
}

func GetAs[T any](ctx context.Context, s *Storage, key string) (T, bool, error) {
	var v T
	return v, false, nil
}

type SQL struct{}

type Cursor struct{ RowsWritten int }

func (c *Cursor) Len() int { return 0 }

func (db *SQL) Exec(ctx context.Context, q string, args ...any) (*Cursor, error) { return nil, nil }
