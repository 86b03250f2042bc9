package virtualtime

import (
	"context"
	crand "crypto/rand"
	"math/rand"
	"net/http"
	"os"
	"time"

	"example.com/virtualtime/clockutil"
	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
)

type Clock struct {
	st  *object.State
	env string
}

func NewClock(st *object.State) object.Object { // want NewClock:"reaches os.Getenv"
	return &Clock{st: st, env: os.Getenv("MODE")} // want `os.Getenv in object code \(reached from NewClock \(a constructor\)\): the environment differs`
}

func (c *Clock) Methods() object.Methods { // want Methods:"reaches time.Now"
	return object.Methods{
		"Stamp":  object.Func(c.Stamp),
		"Nap":    object.Retryable(c.Nap),
		"Lucky":  object.Func(func(ctx context.Context) (int, error) { return rand.Intn(6), nil }), // want `rand.Intn \(math/rand\) in object code`
		"Fair":   object.Func(c.Fair),
		"Fetch":  object.Func(c.Fetch),
		"Quiet":  object.Func(c.Quiet),
		"Helper": object.Func(c.Helper),
		"Timed":  object.Func(c.Timed),
	}
}

func (c *Clock) Stamp(ctx context.Context) (string, error) { // want Stamp:"reaches time.Now"
	return time.Now().String(), nil // want `time.Now in object code \(reached from Clock.Stamp \(a Methods entry\)\): use st.Now\(\)`
}

func (c *Clock) Nap(ctx context.Context) error { // want Nap:"reaches time.Sleep"
	nap()
	return c.st.Sleep(ctx, time.Second) // the virtual sleep: fine
}

func nap() { // want nap:"reaches time.Sleep"
	time.Sleep(50 * time.Millisecond) // want `time.Sleep in object code \(reached from Clock.Nap \(a Methods entry\)\): use st.Sleep`
}

// Fair draws from a source it seeds: fine; crypto/rand is not.
func (c *Clock) Fair(ctx context.Context) (int, error) { // want Fair:"reaches crypto/rand.Read"
	r := rand.New(rand.NewSource(7))
	b := make([]byte, 4)
	crand.Read(b) // want `crypto/rand.Read in object code`
	return r.Intn(6), nil
}

func (c *Clock) Fetch(ctx context.Context, url string) (int, error) { // want Fetch:"reaches http.Get"
	resp, err := http.Get(url) // want `http.Get in object code .*call another object through a stub`
	if err != nil {
		return 0, err
	}
	b, err := os.ReadFile("/etc/hostname") // want `os.ReadFile in object code .*st.Storage\(\)`
	return resp.StatusCode + len(b), err
}

func (c *Clock) Quiet(ctx context.Context) (string, error) { // want Quiet:"reaches time.Now"
	//dosimvet:ok the stamp only goes to a log line, never into an answer
	return time.Now().String(), nil
}

func (c *Clock) Helper(ctx context.Context) (string, error) { // want Helper:"reaches clockutil.Stamp, which reaches time.Now"
	return clockutil.Stamp() + clockutil.Pure("x"), nil // want `clockutil.Stamp, which reaches time.Now \(clockutil.go:8 in Stamp\), in object code`
}

func (c *Clock) Alarm(ctx context.Context, _ object.AlarmInfo) error { // want Alarm:"reaches context.WithTimeout"
	ctx, cancel := context.WithTimeout(ctx, time.Second) // want `context.WithTimeout in object code \(reached from Clock.Alarm \(an object's Alarm\)\): use runtime.WithTimeout`
	defer cancel()
	return agent.Retry(ctx, func(ctx context.Context, attempt int) error {
		<-time.After(time.Millisecond) // want `time.After in object code \(reached from a func literal in Clock.Alarm \(an agent.Retry callback\)\)`
		return nil
	}, agent.RetryOptions{})
}

// Timed passes a wall-clock timeout to the virtual sleep: the sleep skips
// through virtual time, so the timeout never fires (issue 25's case).
func (c *Clock) Timed(ctx context.Context) error { // want Timed:"reaches context.WithTimeout"
	tctx, cancel := context.WithTimeout(ctx, time.Second) // want `context.WithTimeout in object code \(reached from Clock.Timed \(a Methods entry\)\): use runtime.WithTimeout\(ctx, d\), which fires in virtual time`
	defer cancel()
	return c.st.Sleep(tctx, time.Minute)
}

// Outside is not object code: the same calls are fine here.
func Outside() time.Duration { // want Outside:"reaches time.Now"
	start := time.Now()
	time.Sleep(time.Millisecond)
	_ = rand.Intn(3)
	return time.Since(start)
}

// Retried is a callback given to agent.Retry from root code: object code.
func Retried(ctx context.Context) error { // want Retried:"reaches time.Now"
	return agent.Retry(ctx, tick, agent.RetryOptions{})
}

func tick(ctx context.Context, attempt int) error { // want tick:"reaches time.Now"
	_ = time.Now() // want `time.Now in object code \(reached from tick \(an agent.Retry callback\)\)`
	return nil
}
