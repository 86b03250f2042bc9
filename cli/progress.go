package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressEvery is how often a long run prints a progress line when stderr
// is not a terminal (a CI log).
const progressEvery = 10 * time.Second

// wallClock is the clock progress lines read to show a rate: display only,
// never a simulated result.
var wallClock = time.Now

// progress reports a long run on stderr: a bar redrawn in place on a
// terminal, otherwise a plain line every interval (and one at the start),
// so that a CI log shows a sweep is alive. Its clock is a field so that a
// test drives the ticks.
type progress struct {
	w     io.Writer
	name  string // the command, such as "explore"
	unit  string // what is counted, such as "seeds"
	total int
	tty   bool
	now   func() time.Time
	every time.Duration

	start, last time.Time
	pct         int // percent drawn last on a terminal
	drawn       bool
}

// newProgress starts reporting a run of total units on w.
func newProgress(w io.Writer, name, unit string, total int) *progress {
	p := &progress{w: w, name: name, unit: unit, total: total, tty: isTerminal(w), now: wallClock, every: progressEvery}
	p.begin()
	return p
}

// begin reads the clock and, off a terminal, says what is about to run.
func (p *progress) begin() {
	p.start = p.now()
	p.last = p.start
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %d %s to run; progress every %s\n", p.name, p.total, p.unit, p.every)
	}
}

// update reports done units; failed, when not negative, is how many
// violations were found so far.
func (p *progress) update(done, failed int) {
	if p == nil {
		return
	}
	pct := 100
	if p.total > 0 {
		pct = int(int64(done) * 100 / int64(p.total))
	}
	if p.tty {
		if p.drawn && pct == p.pct {
			return
		}
		p.drawn, p.pct = true, pct
		const width = 30
		fill := min(max(pct, 0), 100) * width / 100
		fmt.Fprintf(p.w, "\r  [%s%s] %3d%%  %d/%d %s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), pct, done, p.total, p.unit)
		return
	}
	now := p.now()
	if now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	line := fmt.Sprintf("%s: %d/%d %s (%d%%)", p.name, done, p.total, p.unit, pct)
	if secs := now.Sub(p.start).Seconds(); secs > 0 {
		line += fmt.Sprintf(", %.0f %s/s", float64(done)/secs, p.unit)
	}
	if failed >= 0 {
		line += fmt.Sprintf(", %d violation(s) so far", failed)
	}
	fmt.Fprintln(p.w, line)
}

// done clears the bar's line on a terminal.
func (p *progress) done() {
	if p == nil || !p.tty || !p.drawn {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 72))
}

// shrinkLine reports shrinking on stderr: on a terminal one line kept up
// to date after each replay (cleared by done), elsewhere a line each time
// the failing fault set gets smaller.
type shrinkLine struct {
	w    io.Writer
	term bool
	last int
	on   bool
}

func newShrinkLine(w io.Writer) *shrinkLine { return &shrinkLine{w: w, term: isTerminal(w), last: -1} }

func (s *shrinkLine) update(replays, faults int) {
	switch {
	case s.term:
		fmt.Fprintf(s.w, "\r  shrinking: %d replays, smallest failing fault set %d   ", replays, faults)
	case faults != s.last:
		fmt.Fprintf(s.w, "shrinking: %d replays, smallest failing fault set %d\n", replays, faults)
	}
	s.on, s.last = true, faults
}

// done clears the terminal line.
func (s *shrinkLine) done() {
	if s.term && s.on {
		fmt.Fprintf(s.w, "\r%s\r", strings.Repeat(" ", 72))
	}
	s.on = false
}
