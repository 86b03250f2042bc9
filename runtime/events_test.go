package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ticker schedules a tick that fails once.
type ticker struct {
	st    *object.State
	fails *int
}

func (tk *ticker) Methods() object.Methods {
	return object.Methods{
		"Start": object.Func(func(ctx context.Context) error {
			_, err := tk.st.Schedule(ctx, object.After(time.Second), "Tick", nil)
			return err
		}),
		"Tick": object.Func(func(ctx context.Context) error {
			if *tk.fails > 0 {
				*tk.fails--
				return errors.New("tick failed")
			}
			return nil
		}),
	}
}

// D1, D2: the typed event log records what tasks did, and Trace shows it.
func TestEventsInTraceD1(t *testing.T) {
	rt := newRuntime(t, runtime.WithSeed(4))
	fails := 1
	ns := rt.Namespace("TICKER", func(st *object.State) object.Object { return &ticker{st: st, fails: &fails} })
	s := mustStub(t, ns, "t")
	run(t, rt, func(ctx context.Context) error {
		if _, err := s.Call(ctx, "Start"); err != nil {
			return err
		}
		return rt.Sleep(ctx, 2*time.Second)
	})
	events := rt.Events()
	require.Len(t, events, 4)
	assert.Equal(t, runtime.Event{At: time.Second, Namespace: "TICKER", Object: "t", Kind: object.EventTaskRun,
		Detail: "task=s1 kind=delayed callback=Tick attempt=1"}, events[0])
	kinds := []string{}
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []string{object.EventTaskRun, object.EventRetry, object.EventTaskRun, object.EventTaskDone}, kinds)
	trace := rt.Trace()
	assert.Contains(t, trace, "event at=1s TICKER/t task.run task=s1 kind=delayed callback=Tick attempt=1\n")
	assert.Equal(t, 4, strings.Count(trace, "\nevent "))
	events[0].Detail = "changed"
	assert.NotEqual(t, "changed", rt.Events()[0].Detail, "Events returns a copy")
}
