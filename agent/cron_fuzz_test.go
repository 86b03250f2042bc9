package agent

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzCron (rule A6): no expression makes the cron parser panic (a panic
// it catches is a failure too: the expression should have been refused
// before); every refusal names the expression; an accepted expression
// names an instant after now, the same each time, and the instant after
// that one is later still.
func FuzzCron(f *testing.F) {
	for _, e := range []string{
		"*/5 * * * *", "0 9 * * *", "@hourly", "@every 90s", "@every -1s", "@every 1000000000h", "@every",
		"@yearly", "@reboot", "@", "", " ", "\t", "TZ=UTC", "CRON_TZ=", "TZ=", "CRON_TZ=UTC 0 9 * * *",
		"TZ=UTC * * * * *", "TZ=Nowhere/Atlantis * * * * *", "TZ=../../etc/passwd * * * * *", "TZ=UTC\t* * * * *",
		"CRON_TZ= * * * * *", "TZ=Local * * * * *", "0 0 30 2 *", "0 0 31 4 *", "* * * * * *", "* * * *",
		"99999999999999999999 * * * *", "-1 * * * *", "*/0 * * * *", "1-0 * * * *", "60 24 32 13 8",
		"NaN * * * *", "0 0 * * MON-FRI", "0 0 ? * 7", "ünïcödé * * * *", "5/ * * * *", "1,,2 * * * *",
		"0-59/9223372036854775807 * * * *", "TZ=UTC @hourly",
	} {
		f.Add(e, int64(0))
	}
	f.Add("*/5 * * * *", int64(1<<33))
	f.Add("0 0 29 2 *", int64(-1))
	f.Fuzz(func(t *testing.T, expr string, sec int64) {
		now := time.Unix(sec%(1<<35), 0).UTC() // years 881 to 3058
		next, err := cronNext(expr, now)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "cron expression "+strconv.Quote(expr)) {
				t.Fatalf("cronNext(%q): error does not name the expression: %q", expr, msg)
			}
			if strings.Contains(msg, "parser failed") || strings.Contains(msg, "panic") {
				t.Fatalf("cronNext(%q): the parser panicked: %q", expr, msg)
			}
			return
		}
		if !next.After(now) {
			t.Fatalf("cronNext(%q, %s) = %s, not after now", expr, now, next)
		}
		again, err := cronNext(expr, now)
		if err != nil || !again.Equal(next) {
			t.Fatalf("cronNext(%q, %s) gave %s, then %s, %v", expr, now, next, again, err)
		}
		if after, err := cronNext(expr, next); err == nil && !after.After(next) {
			t.Fatalf("cronNext(%q, %s) = %s, not after it", expr, next, after)
		}
	})
}
