package cli

import (
	"errors"
	"fmt"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// options turns the flags into the explorer's options (all but the
// progress callbacks): a flag not given leaves its option to the
// scenario's explore block, else the explorer's default. The ranges and
// the pairs that cannot go together are explore's (explore.CheckOptions,
// rule C11), checked in validate; here only what a flag spells is read.
func (fl *exploreCmd) options() (explore.Options, error) {
	given := fl.given
	opts := explore.Options{First: fl.first, FromSeedZero: fl.first == 0, KeepRules: fl.keepRules, Swarm: fl.swarm, NoShrink: fl.noShrink,
		Horizon: fl.horizon.option(), CheckDeterminism: fl.checkDet, RecurringAlarms: fl.recurring, Interleaving: fl.interleave,
		NoLinearizability: fl.noLinear, FailFast: fl.failFast, Strategy: runtime.Strategy(fl.sched.strategy)}
	if !given("strategy") {
		opts.Strategy = ""
	}
	for _, f := range []struct {
		r  optrange.Int
		to *int
		v  int
	}{{optrange.Seeds, &opts.Seeds, fl.seeds}, {optrange.Workers, &opts.Workers, fl.workers}, {optrange.MaxAmbiguous, &opts.MaxAmbiguous, fl.maxAmbiguous},
		{optrange.Depth, &opts.Depth, fl.sched.depth}, {optrange.MaxFaults, &opts.MaxFaults, fl.exh.maxFaults}, {optrange.MaxRuns, &opts.MaxRuns, fl.exh.maxRuns}} {
		if !given(f.r.Name) {
			continue
		}
		if !f.r.Holds(f.v) { // 0 too, which explore.Options reads as its default
			return opts, outOfRange(f.r.Name, fmt.Sprint(f.v), f.r.Want)
		}
		*f.to = f.v
	}
	if given("exhaustive") {
		opts.Exhaustive = fl.exh.on
		if !fl.exh.on && !given("seeds") {
			opts.Seeds = fl.seeds // --exhaustive=false: a sweep of seeds, whatever the file says
		}
	}
	if given("shrink-time") {
		if !optrange.ShrinkTime.Holds(fl.shrinkTime) {
			return opts, outOfRange("shrink-time", fl.shrinkTime.String(), optrange.ShrinkTime.Want+" (--no-shrink turns shrinking off)")
		}
		opts.ShrinkTime = fl.shrinkTime
	}
	if given("min-checked") {
		if !optrange.MinCheckedHolds(fl.minChecked) {
			return opts, outOfRange("min-checked", fmt.Sprint(fl.minChecked), optrange.MinCheckedWant)
		}
		opts.MinChecked = fl.minChecked
		if fl.minChecked == 0 {
			opts.MinChecked = -1 // no minimum
		}
	}
	var err error
	if fl.rates != "" {
		if opts.Rates, err = parseRates(fl.rates); err != nil {
			return opts, err
		}
	}
	if fl.latency != "" {
		l, err := transport.ParseLatency(fl.latency)
		if err != nil {
			return opts, usageErrorf("--latency: %w", err)
		}
		opts.Latency, opts.NoLatency = l, !l.On()
	}
	if fl.shard != "" {
		if opts.Shard, err = explore.ParseShard(fl.shard); err != nil {
			return opts, usageErrorf("--shard: %w", err)
		}
	}
	return opts, nil
}

// outOfRange is the usage error of a flag out of its range, in explore's
// words (explore.OptionError).
func outOfRange(flag, value, want string) error {
	return usageErrorf("%s", (&explore.OptionError{Option: flag, Value: value, Want: want}).Spelled(explore.FlagName))
}

// checkOptions checks the options as explore will (explore.CheckOptions),
// an error naming the flags and the file's fields, and returns what run
// says on stderr: which of the file's fields a flag overrides.
func (fl *exploreCmd) checkOptions() ([]string, error) {
	overrides, err := explore.CheckOptions(fl.sc, fl.opts)
	var oe *explore.OptionError
	switch {
	case errors.As(err, &oe) && oe.Option == "strategy" && oe.With == "":
		return nil, usageErrorf("%s%s", oe.Spelled(explore.FlagName), didYouMean(oe.Value, explore.StrategyNames()))
	case errors.As(err, &oe):
		return nil, usageErrorf("%s", oe.Spelled(explore.FlagName))
	case err != nil:
		return nil, usageErrorf("%w", err)
	}
	var out []string
	for _, o := range overrides {
		search := o.Option == "exhaustive" || o.Option == "max-faults"
		if search && (fl.isReplay || fl.given("exhaustive")) {
			continue // a replay runs one seed; --exhaustive=false says it
		}
		out = append(out, fmt.Sprintf("%s explore: %s", fl.a.name, o.Spelled(explore.FlagName)))
	}
	return out, nil
}
