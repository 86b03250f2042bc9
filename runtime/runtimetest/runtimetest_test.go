package runtimetest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dosim/dosim/dosimtest"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/runtime/runtimetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mailer sends an email per Send: marking it Retryable is the classic mistake.
type mailer struct{ st *object.State }

func (m *mailer) Methods() object.Methods {
	return object.Methods{
		"Send":   object.Retryable(m.Send),
		"Status": object.Func(func(ctx context.Context) (string, error) { return "up", nil }),
	}
}

func (m *mailer) Send(ctx context.Context, to string) error {
	return m.st.Effect(ctx, "email", "hello "+to)
}

// fakeT records what a test would report, so the harness's failures can
// be checked without failing this test.
type fakeT struct {
	testing.TB
	errors, logs []string
	failed       bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Failed() bool { return f.failed }

func TestSeedFromEnvironment(t *testing.T) {
	t.Setenv("DOSIM_SEED", "42")
	assert.Equal(t, uint64(42), runtimetest.Seed(t))
	rt := runtimetest.New(t)
	assert.Equal(t, uint64(42), rt.Seed())
	t.Setenv("DOSIM_SEED", "forty-two")
	ft := &fakeT{TB: t}
	runtimetest.Seed(ft)
	require.Len(t, ft.errors, 1)
	assert.Equal(t, `runtimetest: DOSIM_SEED="forty-two": want an unsigned integer seed`, ft.errors[0])
	t.Setenv("DOSIM_SEED", "")
	assert.Equal(t, runtimetest.DefaultSeed, runtimetest.Seed(t))
}

func TestReportWritesArtifacts(t *testing.T) {
	t.Setenv("DOSIM_ARTIFACTS", t.TempDir())
	rt := runtimetest.New(t, runtime.WithSeed(9))
	ns := rt.Namespace("MAILER", func(st *object.State) object.Object { return &mailer{st: st} })
	runtimetest.Run(t, rt, func(ctx context.Context) error {
		s, err := ns.GetByName("m")
		if err != nil {
			return err
		}
		_, err = s.Call(ctx, "Send", "ada")
		return err
	})
	ft := &fakeT{TB: t}
	runtimetest.Report(ft, rt)
	logs := strings.Join(ft.logs, "\n")
	assert.Contains(t, logs, "dosim: seed 9; replay with: go test ")
	assert.Contains(t, logs, "-run '^TestReportWritesArtifacts$' -count=1 -dosim.seed=9")
	dir, err := runtimetest.WriteArtifacts(t, rt)
	require.NoError(t, err)
	for _, f := range []string{"calls.json", "trace.txt", "timeline.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Contains(t, string(b), "Send", f)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "calls.json"))
	var reports []render.JSONReport // the shape of dosim run --format json (docs/records.md)
	require.NoError(t, json.Unmarshal(js, &reports))
	require.Len(t, reports, 1)
	assert.Equal(t, uint64(9), reports[0].Seed)
	assert.Equal(t, "TestReportWritesArtifacts", reports[0].Scenario)
	require.Len(t, reports[0].Calls, 1)
	assert.Equal(t, "Send", reports[0].Calls[0].Method)
	assert.Contains(t, string(js), `"kind": "email"`)
	assert.Contains(t, string(js), `"startMs": `)
	assert.NotContains(t, string(js), `"RequestID"`, "no Go field names")
}

// shop is docs/explore.md's example class.
type shop struct{ st *object.State }

func NewShop(st *object.State) object.Object { return &shop{st: st} }

func (s *shop) Methods() object.Methods {
	return object.Methods{
		"SetPrice": object.Retryable(func(ctx context.Context, p int) error { return s.st.Storage().Put(ctx, "price", p) }),
		"Price": object.Func(func(ctx context.Context) (int, error) {
			var p int
			_, err := s.st.Storage().Get(ctx, "price", &p)
			return p, err
		}),
		"SendOffer": object.Retryable(func(ctx context.Context, to string) error { return s.st.Effect(ctx, "email", "offer to "+to) }),
	}
}

// TestShopMarks is docs/explore.md's example, kept here so that it compiles
// and passes; the mailer's mistake is checked through a fake T.
func TestShopMarks(t *testing.T) {
	rt := runtimetest.New(t) // seed from -dosim.seed or DOSIM_SEED, logs via t, leak checks
	ns := rt.Namespace("SHOP", NewShop)
	dosimtest.Verify(t, ns, "SetPrice", 12) // marked: fails if running it twice differs from once
	dosimtest.Verify(t, ns, "Price")        // unmarked and idempotent: logged as "could be marked"

	ft := &fakeT{TB: t}
	dosimtest.Verify(ft, ns, "SendOffer", "ada")
	require.Len(t, ft.errors, 1)
	assert.Equal(t, "SHOP.SendOffer is marked Retryable but is not idempotent: a retry after a lost reply changes the outcome.\n"+
		"Once vs twice:\neffects: once 1 [email offer to ada], twice 2 [email offer to ada; email offer to ada]\n", ft.errors[0])
}

// The artifacts' folder outlives the test that wrote it: under
// t.TempDir(), go test removed it when the test ended, so the printed path
// was gone when the user opened it.
func TestH2_ArtifactsOutliveTheTest(t *testing.T) {
	var dir string
	t.Run("failing", func(t *testing.T) {
		rt := runtimetest.New(t)
		ns := rt.Namespace("MAILER", func(st *object.State) object.Object { return &mailer{st: st} })
		runtimetest.Run(t, rt, func(ctx context.Context) error {
			s, err := ns.GetByName("m")
			if err != nil {
				return err
			}
			_, err = s.Call(ctx, "Send", "ada")
			return err
		})
		var err error
		dir, err = runtimetest.WriteArtifacts(t, rt)
		require.NoError(t, err)
	})
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.Remove(filepath.Dir(dir))               // dosim-artifacts/runtimetest, if empty
		os.Remove(filepath.Dir(filepath.Dir(dir))) // dosim-artifacts, if empty
	})
	require.NotEmpty(t, dir)
	assert.True(t, filepath.IsAbs(dir), dir)
	assert.Equal(t, runtimetest.ArtifactsRoot(), filepath.Dir(dir))
	assert.Equal(t, filepath.Join(os.TempDir(), "dosim-artifacts", "runtimetest"), runtimetest.ArtifactsRoot(), "the default")
	for _, f := range []string{"calls.json", "trace.txt", "timeline.html"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err, "%s after the subtest's cleanup ran", f)
	}

	t.Setenv("DOSIM_ARTIFACTS", "rel")
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "rel"), runtimetest.ArtifactsRoot(), "relative to the package's folder")
}

// The flags (defined once by internal/testrun, which this package and
// dosimtest share) win over the environment.
func TestFlagsWinOverTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOSIM_SEED", "42")
	t.Setenv("DOSIM_ARTIFACTS", "elsewhere")
	require.NoError(t, flag.Set("dosim.seed", "5"))
	require.NoError(t, flag.Set("dosim.artifacts", dir))
	t.Cleanup(func() {
		_ = flag.Set("dosim.seed", "")
		_ = flag.Set("dosim.artifacts", "")
	})
	assert.Equal(t, uint64(5), runtimetest.Seed(t))
	assert.Equal(t, dir, runtimetest.ArtifactsRoot())
}
