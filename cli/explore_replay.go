package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/scenario"
	"github.com/dosim/dosim/transport"
)

// replaySeed runs one seed and shows its timeline and violations.
func replaySeed(w io.Writer, sc *scenario.Scenario, opts explore.Options, seed uint64, rules []transport.Rule, arts string, shrinking *shrinkLine) error {
	e, err := explore.New(sc, opts)
	if err != nil {
		return usageErrorf("%w", err)
	}
	r, err := replayRun(e, seed, rules)
	switch {
	case errors.Is(err, explore.ErrFaultStruckNothing):
		return usageErrorf("--replay-faults: %w", err)
	case err != nil:
		return internalError("", err)
	}
	if r.Result != nil {
		rep := r.Result.Report()
		rep.Name = fmt.Sprintf("%s, explore seed %d", rep.Name, seed)
		rep.Failures, rep.Expectations = nil, 0 // the file's expectations are for its own faults
		if err := render.Text(w, rep, render.TextOptions{}); err != nil {
			return err
		}
	}
	// Which run this is (rule C5): the seed's own, or its run with exactly
	// the faults given.
	which := fmt.Sprintf("seed %d (its own run: the %s it drew)", seed, plural(len(r.Faults), "fault"))
	if rules != nil {
		which = fmt.Sprintf("seed %d with the faults --replay-faults gave only (%d)", seed, len(rules))
	}
	if len(r.Violations) == 0 {
		fmt.Fprintf(w, "\n%s: no violation\n", which)
		return nil
	}
	fmt.Fprintf(w, "\n%s violates:\n", which)
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  %s\n", render.Escape(v.String()))
	}
	if arts != "" {
		f, err := replayFailing(e, seed, rules)
		shrinking.done()
		if err != nil {
			return internalError("", err)
		}
		files, err := e.WriteArtifacts(filepath.Clean(arts), f)
		if err != nil {
			return artifactsError(arts, err, len(r.Violations))
		}
		fmt.Fprintf(w, "artifacts: %s\n", strings.Join(files, ", "))
	}
	return &codeError{code: exitExpect}
}

// horizonValue is --horizon: a virtual duration in explore's range
// (internal/optrange, as explore.horizon), or off; not given, the
// scenario's explore.horizon, else the default.
type horizonValue struct {
	d   time.Duration
	off bool
}

func (h *horizonValue) String() string {
	switch {
	case h.off:
		return "off"
	case h.d == 0:
		return "" // not given
	}
	return h.d.String()
}

func (h *horizonValue) Set(v string) error {
	if v == "off" {
		*h = horizonValue{off: true}
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || !optrange.Horizon.Holds(d) {
		return fmt.Errorf("%q: want %s", v, optrange.Horizon.Want)
	}
	*h = horizonValue{d: d}
	return nil
}

func (h *horizonValue) Type() string { return "duration" }

// option is the horizon as explore.Options.Horizon takes it.
func (h *horizonValue) option() time.Duration {
	if h.off {
		return -1
	}
	return h.d
}
