package stub_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// probe is the object the stub tests call: each method exercises one kind
// of outcome.
type probe struct {
	st     *object.State
	fields int // in-memory state, lost on a reset
}

func newProbe(st *object.State) object.Object { return &probe{st: st} }

func (p *probe) Methods() object.Methods {
	return object.Methods{
		"Add":     object.Func(p.Add),
		"Set":     object.Retryable(p.Set),
		"Fail":    object.Func(p.Fail),
		"Panic":   object.Func(p.Panic),
		"Slow":    object.Func(p.Slow),
		"Take":    object.Func(p.Take),
		"Session": object.Func(p.Session),
		"Fields":  object.Func(p.Fields),
	}
}

// Add adds one to "n" and returns it.
func (p *probe) Add(ctx context.Context) (int, error) {
	p.fields++
	var n int
	if _, err := p.st.Storage().Get(ctx, "n", &n); err != nil {
		return 0, err
	}
	n++
	return n, p.st.Storage().Put(ctx, "n", n)
}

// Set stores v under "v": idempotent, marked.
func (p *probe) Set(ctx context.Context, v int) error { return p.st.Storage().Put(ctx, "v", v) }

// Fail returns an object error.
func (p *probe) Fail(ctx context.Context) error { return errors.New("out of stock") }

// Panic panics.
func (p *probe) Panic(ctx context.Context) error { panic("kaboom") }

// Slow sleeps for d, then adds one.
func (p *probe) Slow(ctx context.Context, d time.Duration) (int, error) {
	if err := p.st.Sleep(ctx, d); err != nil {
		return 0, err
	}
	return p.Add(ctx)
}

// Take accepts any argument and counts the call.
func (p *probe) Take(ctx context.Context, v any) (int, error) { return p.Add(ctx) }

// Session returns an RPC target that lives in this object.
func (p *probe) Session(ctx context.Context, user string) (*session, error) {
	return &session{p: p, user: user}, nil
}

// Fields returns the in-memory counter.
func (p *probe) Fields(ctx context.Context) (int, error) { return p.fields, nil }

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/500" {
		http.Error(w, "broken", http.StatusInternalServerError)
		return
	}
	b, _ := io.ReadAll(r.Body)
	n, _ := p.Add(r.Context())
	fmt.Fprintf(w, "%s #%d", b, n)
}

// session is an RPC target: it travels by reference.
type session struct {
	object.RpcTarget
	p    *probe
	user string
}

func (s *session) Methods() object.Methods {
	return object.Methods{
		"Whoami": object.Func(func(ctx context.Context) (string, error) { return s.user, nil }),
		"Add":    object.Func(func(ctx context.Context) (int, error) { return s.p.Add(ctx) }),
	}
}

// world is one runtime with a PROBE namespace.
type world struct {
	rt *runtime.Runtime
	ns *runtime.Namespace
}

func newWorld(t testing.TB, seed uint64, rules ...transport.Rule) *world {
	t.Helper()
	rt := runtime.New(runtime.WithSeed(seed), runtime.WithLogger(zaptest.NewLogger(t)), runtime.WithFaults(transport.Plan(rules...)))
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	return &world{rt: rt, ns: rt.Namespace("PROBE", newProbe)}
}

func (w *world) stub(t testing.TB, opts ...stub.Option) *stub.Stub {
	t.Helper()
	s, err := w.ns.GetByName("p", opts...)
	require.NoError(t, err)
	return s
}

// stored reads an int from the probe's storage.
func (w *world) stored(t testing.TB, key string) int {
	t.Helper()
	var n int
	_, err := w.ns.Storage(w.ns.IDFromName("p")).Get(context.Background(), key, &n)
	require.NoError(t, err)
	return n
}
