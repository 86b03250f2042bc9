package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// Every printed replay line reproduces its verdict (rule C11): it is made
// here, from the summary of the sweep that printed it, and carries every
// option that can change a seed's verdict. A replayed fault that strikes
// nothing is an error, not a pass.

// ErrFaultStruckNothing is wrapped by the error of a replay given a fault
// that no attempt of the run met (rule C11): a call or an attempt the run
// never made, another method than the call's. A typo in a fault set must
// not make a bug look fixed.
var ErrFaultStruckNothing = errors.New("a replayed fault struck nothing")

// ReplayCommand is the command that replays seed of the sweep, with every
// option that can change the seed's verdict (rule C11): for a scenario's
// sweep a dosim explore command line, for an exhaustive search's failing
// placement one that replays its faults, for a function's sweep the
// options to give explore.RunFunc (dosimtest.Func prints a go test
// command instead).
func (s *Summary) ReplayCommand(seed uint64) string {
	switch {
	case s.File == "":
		return s.funcReplay(seed)
	case s.Exhaustive != nil && s.FirstFailing != nil:
		return s.exhaustiveReplay(s.FirstFailing)
	}
	cmd := fmt.Sprintf("dosim explore %s --replay %d --rates %s", s.File, seed, RatesText(s.Rates))
	if s.KeepRules {
		cmd += " --keep-rules"
	}
	return cmd + s.seedFlags(seed) + s.checkFlags()
}

// exhaustiveReplay is the dosim command that replays the first failing
// placement of an exhaustive search: its seed with the shrunk faults only.
func (s *Summary) exhaustiveReplay(f *Failing) string {
	faults := "none"
	if len(f.Shrunk) > 0 {
		faults = FaultSetText(f.Shrunk)
	}
	// The strategy, as a seed's replay carries it.
	return fmt.Sprintf("dosim explore %s --replay %d --replay-faults %s --latency %s", s.File, f.Seed, faults, s.Latency) + s.flags() + s.checkFlags()
}

// checkFlags are the dosim explore flags of the options that change what
// the checks report of a run: the horizon, recurring alarms, the most
// turns cut short a checked history may hold, the linearizability check
// and the turns meant to interleave. Each is left out at its default.
func (s *Summary) checkFlags() string {
	var b strings.Builder
	switch s.Horizon {
	case DefaultHorizon:
	case 0:
		b.WriteString(" --horizon off")
	default:
		b.WriteString(" --horizon " + s.Horizon.String())
	}
	if s.RecurringAlarms {
		b.WriteString(" --recurring-alarms")
	}
	if s.MaxAmbiguous != 0 && s.MaxAmbiguous != DefaultMaxAmbiguous {
		fmt.Fprintf(&b, " --max-ambiguous %d", s.MaxAmbiguous)
	}
	if s.NoLinearizability {
		b.WriteString(" --no-linearizability")
	}
	if len(s.Interleaving) > 0 {
		b.WriteString(" --interleaving " + strings.Join(s.Interleaving, ","))
	}
	return b.String()
}

// funcReplay is how to replay seed of a function's sweep: the same
// function with the sweep's options but for the seeds, or, for an
// exhaustive search's failing placement, the seed with its faults only.
func (s *Summary) funcReplay(seed uint64) string {
	if f := s.FirstFailing; s.Exhaustive != nil && f != nil {
		faults := "none"
		if len(f.Shrunk) > 0 {
			faults = FaultSetText(f.Shrunk)
		}
		return fmt.Sprintf("FuncExplorer.Rerun(&explore.Failing{Seed: %d, Shrunk: FAULTS, Run: explore.RunShrunk}) with the search's options, FAULTS explore.ParseFaultSet(%q) (dosimtest.Func prints the go test command: -dosim.seed=%d -dosim.faults=%s)",
			f.Seed, faults, f.Seed, faults)
	}
	return fmt.Sprintf("explore.RunFunc(explore.Options{First: %d, Seeds: 1, ...the sweep's other options}, fn) (dosimtest.Func prints the go test command: -dosim.seed=%d)", seed, seed)
}

// struckNothing returns an error wrapping ErrFaultStruckNothing that names
// each of rules that no fault fired in calls met, and why, or nil when
// each struck.
func struckNothing(rules []transport.Rule, calls []runtime.CallRecord) error {
	var missed []string
	for _, r := range rules {
		if why := missReason(r, calls); why != "" {
			missed = append(missed, fmt.Sprintf("%d:%d:%s=%s (%s)", r.Call, r.Attempt, r.Method, r.Fault, why))
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: a replay with it would show a run the fault set does not describe", ErrFaultStruckNothing, strings.Join(missed, ", "))
}

// missReason says why rule r struck no attempt of calls ("" when it did).
func missReason(r transport.Rule, calls []runtime.CallRecord) string {
	if r.Call < 1 || r.Call > len(calls) {
		return fmt.Sprintf("the run made %d calls: there is no call %d", len(calls), r.Call)
	}
	c := &calls[r.Call-1]
	if r.Method != "" && r.Method != c.Method {
		return fmt.Sprintf("call %d is %s, not %s", r.Call, c.Method, r.Method)
	}
	i := slices.IndexFunc(c.Attempts, func(a runtime.AttemptRecord) bool { return a.N == r.Attempt })
	switch {
	case i < 0:
		return fmt.Sprintf("call %d (%s) made %d attempt(s): there is no attempt %d", r.Call, c.Method, len(c.Attempts), r.Attempt)
	case c.Attempts[i].Fault != r.Fault:
		return fmt.Sprintf("attempt %d of call %d (%s) met %s", r.Attempt, r.Call, c.Method, c.Attempts[i].Fault)
	}
	return ""
}
