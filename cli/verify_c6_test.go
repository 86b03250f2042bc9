package cli_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/cli"
	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// troubled is a user's class whose methods fail, reset the object, or
// lean on its alarm, and which serves Stub.Fetch.
type troubled struct{ st *object.State }

func (c *troubled) Methods() object.Methods {
	return object.Methods{
		"Refuse": object.Retryable(func(ctx context.Context) error { return errors.New("closed\x1b[31m on sundays") }),
		"Block": object.Retryable(func(ctx context.Context) error {
			return c.st.BlockConcurrencyWhile(ctx, func(ctx context.Context) error { return errors.New("migration failed") })
		}),
		"Hit": object.Retryable(func(ctx context.Context) (int, error) {
			if err := c.st.SetAlarm(ctx, c.st.Now().Add(time.Minute)); err != nil {
				return 0, err
			}
			n, _, err := object.GetAs[int](ctx, c.st.Storage(), "hits")
			if err != nil {
				return 0, err
			}
			return n + 1, c.st.Storage().Put(ctx, "hits", n+1)
		}),
	}
}

func (c *troubled) Alarm(ctx context.Context, info object.AlarmInfo) error { return nil }

func (c *troubled) ServeHTTP(w http.ResponseWriter, r *http.Request) {}

var troubledClass = map[string]runtime.Constructor{"troubled": func(st *object.State) object.Object { return &troubled{st: st} }}

// Rule C6: dosim verify shows a call that failed in both runs as
// inconclusive, with "?" for IDEMPOTENT, and lists each failed call with
// its error, escaped; a reset inside a method is a verdict with the
// reset's message, not exit 2; a marked method that sets the alarm and
// counts is DANGER; the fetch handler is listed as not checked.
func TestC6_VerifyShowsFailedCallsResetsAndAlarms(t *testing.T) {
	code, out, errOut := walletsim(t, troubledClass, "verify", "troubled", "--diff")
	assert.Equal(t, 1, code, "Hit is DANGER: %s", errOut)
	assert.Empty(t, errOut)
	assert.Equal(t, `CLASS     METHOD  ARGS  MARKED  IDEMPOTENT  VERDICT
troubled  Block   []    yes     ?           inconclusive: the object was reset
troubled  Hit     []    yes     no          DANGER: marked but not idempotent
troubled  Refuse  []    yes     ?           inconclusive: both runs failed

failed calls:
  troubled.Block   once   migration failed
  troubled.Block   twice  migration failed
  troubled.Refuse  once   object error: closed\u001b[31m on sundays
  troubled.Refuse  twice  object error: closed\u001b[31m on sundays

not checked:
  troubled.ServeHTTP  a fetch handler is never marked Retryable, so a retry never runs it twice (rule S6)

troubled.Block, inconclusive:
  the object was reset during the call (once: migration failed; twice: migration failed): a reset fails the call whatever the method did, so once and twice cannot be compared

troubled.Hit, once vs twice:
  result: once 1, twice 2
  storage "hits": once 1, twice 2

troubled.Refuse, inconclusive:
  the call failed in both runs (once: object error: closed\u001b[31m on sundays; twice: object error: closed\u001b[31m on sundays): a failing call shows nothing of what the method does when it works, so the check proves nothing; call it with arguments and storage under which it succeeds
`, out)

	// Arguments that do not fit are still a usage error (exit 2), with
	// nothing printed on stdout.
	code, out, errOut = walletsim(t, troubledClass, "verify", "troubled", "--args", "Hit=[1]")
	assert.Equal(t, 2, code, "an --args that does not fit Hit is still a usage error")
	assert.Empty(t, out)
	assert.Equal(t, "walletsim: --args Hit: troubled.Hit() takes 0 argument(s), got 1\n", errOut, "checked before anything runs")
}

// Rule C6: inconclusive rows alone exit 0; the row says what was not
// checked.
func TestC6_VerifyInconclusiveAloneExitsZero(t *testing.T) {
	only := map[string]runtime.Constructor{"refuser": func(st *object.State) object.Object { return refuser{} }}
	code, out, errOut := walletsim(t, only, "verify")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "refuser  Refuse  []    yes     ?           inconclusive: both runs failed\n")
	assert.Contains(t, out, "\nfailed calls:\n  refuser.Refuse  once   object error: no\n  refuser.Refuse  twice  object error: no\n")
	_, help, _ := walletsim(t, only, "verify", "--help")
	assert.Contains(t, help, "  inconclusive: REASON               nothing was proven: both runs failed, the\n", "the help lists the verdict")
}

// dosim runs the command line of cmd/dosim (the built-in classes).
func dosim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := cli.Main(args, cli.WithBuiltInClasses(), cli.WithOutput(&out, &errb))
	return code, out.String(), errb.String()
}

type refuser struct{}

func (refuser) Methods() object.Methods {
	return object.Methods{"Refuse": object.Retryable(func(ctx context.Context) error { return errors.New("no") })}
}

// planted lists the methods of the built-in classes whose doc comments
// plant an idempotency bug, and only those: dosim verify must call them
// DANGER and nothing else.
//   - mailer.Send: "Send marked Retryable although each run sends another
//     email (the classic mistake)".
//   - seats-leaky.Book: "a planted bug: Book marked Retryable inserts
//     without its booking id, so a retry fails on UNIQUE".
//   - booth-leaky.Pay: "its marked Pay charges before it looks whether
//     the hold is paid, so a retry charges the card again".
//
// chores plants liveness bugs (rule C8), not idempotency bugs: its
// planted methods are rightly unmarked.
//
// The other classes' bugs are not idempotency bugs, so verify must not
// flag them: session.HitsCached trusts a field an eviction empties (rule
// L5; it reads the same twice), tally.VoteFast replies before its write is
// durable (rule L7; unmarked), outbox.Post and Deliver, counter.Increment,
// inventory.AddOne and ledger.Deposit are rightly unmarked.
var planted = map[string]bool{"mailer.Send": true, "seats-leaky.Book": true, "booth-leaky.Pay": true}

var verifyRow = regexp.MustCompile(`^(\S+)\s+(\S+)\s+.*\s(yes|no)\s+(yes|no|\?)\s+(ok|DANGER: marked but not idempotent|could be marked|inconclusive: .*)$`)

// Rules C6 and S6: dosim verify of every shipped built-in class gives
// DANGER for the planted methods only, no inconclusive row and no failed
// call; bare dosim verify exits 1 because of them, and verifying each
// class alone exits 1 only for the classes that plant one.
func TestC6_VerifyEveryBuiltInClassFlagsOnlyThePlantedBugs(t *testing.T) {
	code, out, errOut := dosim(t, "verify")
	require.Equal(t, 1, code, "the planted bugs: %s", errOut)
	rows := map[string]string{}
	table, _, _ := strings.Cut(out, "\n\n")
	for _, line := range strings.Split(table, "\n")[1:] {
		m := verifyRow.FindStringSubmatch(line)
		require.NotNil(t, m, "a row of the table: %q", line)
		rows[m[1]+"."+m[2]] = m[5]
	}
	danger := map[string]bool{}
	for name, verdict := range rows {
		assert.NotContains(t, verdict, "inconclusive", name)
		if strings.HasPrefix(verdict, "DANGER") {
			danger[name] = true
		}
	}
	assert.Equal(t, planted, danger)
	_, failed, found := strings.Cut(out, "\nfailed calls:\n")
	require.True(t, found, out)
	failed, _, _ = strings.Cut(failed, "\n\n")
	lines := strings.Split(failed, "\n")
	require.Len(t, lines, 1, "no built-in call fails but the planted Book's retry:\n%s", failed)
	assert.True(t, strings.HasPrefix(lines[0], "  seats-leaky.Book  twice  object error: sql:"), lines[0])

	for _, c := range examples.ClassNames() {
		want := 0
		for name := range planted {
			if strings.HasPrefix(name, c+".") {
				want = 1
			}
		}
		methods := 0
		for name := range rows {
			if strings.HasPrefix(name, c+".") {
				methods++
			}
		}
		assert.Positive(t, methods, "class %s is in bare verify's table", c)
		code, _, errOut := dosim(t, "verify", c)
		assert.Equal(t, want, code, "verify %s: %s", c, errOut)
	}
}

// Rule U2: the same check from a program of yours that registers the
// built-ins beside its own classes.
func TestC6_VerifyBuiltInsBesideUserClasses(t *testing.T) {
	var b, e strings.Builder
	code := cli.Main([]string{"verify", "seats", "mailer"}, cli.WithBuiltInClasses(), cli.WithClasses(troubledClass), cli.WithOutput(&b, &e))
	assert.Equal(t, 1, code, e.String())
	assert.Contains(t, b.String(), "seats   Cancel  [\"b-1\"]")
	assert.NotContains(t, b.String(), "seats.Cancel, once vs twice", "seats' Cancel is idempotent in its answer too")
}
