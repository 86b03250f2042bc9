package scheduler

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dosim/dosim/object"
)

type Mill struct {
	st    *object.State
	mu    sync.Mutex
	ready atomic.Bool
	jobs  chan int
}

func (m *Mill) Methods() object.Methods { // want Methods:"reaches a go statement"
	return object.Methods{
		"Spawn":  object.Func(m.Spawn),
		"Lock":   object.Func(m.Lock),
		"Select": object.Func(m.Select),
		"Spin":   object.Func(m.Spin),
		"Quiet":  object.Func(m.Quiet),
		"Hooked": object.Func(m.Hooked),
		"Exit":   object.Func(func(ctx context.Context) error { runtime.Goexit(); return nil }), // want `runtime.Goexit in object code`
	}
}

func (m *Mill) Spawn(ctx context.Context) (int, error) { // want Spawn:"reaches a go statement"
	var wg sync.WaitGroup
	done := make(chan int, 1)
	wg.Add(1)
	go func() { // want `a go statement in object code \(reached from Mill.Spawn \(a Methods entry\)\): a goroutine runs outside the scheduler`
		defer wg.Done()
		done <- 1 // want `a channel send in object code`
	}()
	wg.Wait()          // want `sync.WaitGroup.Wait in object code`
	return <-done, nil // want `a channel receive in object code`
}

func (m *Mill) Lock(ctx context.Context) error { // want Lock:"reaches sync.Mutex.Lock"
	m.mu.Lock() // want `sync.Mutex.Lock in object code .*rule O3`
	defer m.mu.Unlock()
	return m.st.Sleep(ctx, 0)
}

func (m *Mill) Select(ctx context.Context) error { // want Select:"reaches a select"
	select { // want `a select in object code`
	case <-ctx.Done(): // want `a channel receive in object code`
	default:
	}
	for j := range m.jobs { // want `a range over a channel in object code`
		_ = j
	}
	return nil
}

func (m *Mill) Spin(ctx context.Context) error { // want Spin:"reaches a spin-wait"
	for !m.ready.Load() { // want `a spin-wait on a sync/atomic load in object code`
		runtime.Gosched() // want `runtime.Gosched in object code`
	}
	return nil
}

func (m *Mill) Quiet(ctx context.Context) error { // want Quiet:"reaches a go statement"
	go func() {}() //dosimvet:ok a test double: the goroutine touches nothing of the simulation
	return nil
}

// Pool is not object code: goroutines, channels and locks are fine here.
func Pool(n int) int { // want Pool:"reaches a go statement"
	var mu sync.Mutex
	out := make(chan int)
	for i := range n {
		go func() { out <- i }()
	}
	sum := 0
	for range n {
		mu.Lock()
		sum += <-out
		mu.Unlock()
	}
	return sum
}

// startHook is a func kept in a package variable: object code that calls
// it reaches its go statement (issue 36: it was missed).
var startHook = func() {
	go func() {}() // want `a go statement in object code \(reached from Mill.Hooked \(a Methods entry\)\)`
}

func (m *Mill) Hooked(ctx context.Context) error { // want Hooked:"reaches a go statement"
	startHook()
	return nil
}
