// Package wire holds what dosim's public packages share without importing
// each other: the hooks through which package runtime builds values of
// package object and package stub, and the interfaces those values use to
// reach back into the runtime.
package wire

import (
	"context"
	"time"
)

// Host is what an object's State needs from the runtime hosting it.
type Host interface {
	// Sleep waits d of virtual time, yielding the object's input gate.
	Sleep(ctx context.Context, d time.Duration) error
	// Now is the virtual wall clock.
	Now() time.Time
	// Effect records a side effect that leaves the object.
	Effect(ctx context.Context, kind string, payload any) error
}

// Hooks set by package object's init.
var (
	// NewID builds an object.ID.
	NewID func(namespace string, raw [32]byte, name string) any
	// NewState builds an *object.State.
	NewState func(id any, storage any, host Host) any
	// NewStorage builds an empty *object.Storage.
	NewStorage func() any
)
