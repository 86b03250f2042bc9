package explore

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
)

// One validator for a sweep's options (rule C11): the scenario file's
// explore block is merged into the options (an option the caller gives
// overrides the file's field, and says so: Override), then every option
// is checked against its range (internal/optrange, which the file's parser
// and the dosim explore flags read too) and every pair of options that
// cannot mean anything together is refused, naming both and where each
// came from (OptionError).

// OptionError is an option out of its range, or two options that cannot
// go together. It wraps ErrOptions. Options are named as the dosim
// explore flags and the explore block name them ("max-faults");
// Spelled writes them as the caller spells them.
type OptionError struct {
	// Option is the option, and Value its value ("" for a flag that is
	// on); FromFile says the value is the scenario file's.
	Option, Value string
	FromFile      bool
	// With is the other option of a pair that cannot go together (""
	// for a value out of range), as Option is; Without says the pair is
	// Option without With.
	With, WithValue string
	WithFromFile    bool
	Without         bool
	// Want says what is allowed, or why the two do not go together.
	Want string
	// File is the scenario file, and Line and WithLine the lines of its
	// fields, when a value is the file's.
	File           string
	Line, WithLine int
}

// Error spells the options as the fields of Options.
func (e *OptionError) Error() string { return "explore options: " + e.Spelled(GoName) }

// Unwrap returns ErrOptions.
func (e *OptionError) Unwrap() error { return ErrOptions }

// Spelled is the error's text, an option the caller gave spelt by spell
// (FlagName for dosim explore's flags, GoName for the fields of Options)
// and one the scenario file gave as its explore block's key.
func (e *OptionError) Spelled(spell func(option string) string) string {
	one := e.setting(e.Option, e.Value, e.FromFile, e.Line, spell)
	if e.With == "" {
		return fmt.Sprintf("%s: want %s", one, e.Want)
	}
	if e.Without {
		return fmt.Sprintf("%s without %s: %s", one, spell(e.With), e.Want)
	}
	return fmt.Sprintf("%s with %s: %s", one, e.setting(e.With, e.WithValue, e.WithFromFile, e.WithLine, spell), e.Want)
}

// setting spells an option and its value: the caller's by spell, the
// file's by its key and where the file says it.
func (e *OptionError) setting(option, value string, fromFile bool, line int, spell func(string) string) string {
	if !fromFile {
		if value == "" {
			return spell(option)
		}
		return spell(option) + " " + value
	}
	out := "the scenario's " + FileKey(option)
	if value != "" {
		out += ": " + value
	}
	if e.File != "" && line > 0 {
		out += fmt.Sprintf(" (%s:%d)", e.File, line)
	}
	return out
}

// FlagName spells an option as its dosim explore flag: --max-faults.
func FlagName(option string) string { return "--" + option }

// GoName spells an option as its field of Options: MaxFaults.
func GoName(option string) string {
	if n, ok := goNames[option]; ok {
		return n
	}
	var b strings.Builder
	for _, w := range strings.Split(option, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// goNames are the fields of Options whose name is not the option's in
// camel case.
var goNames = map[string]string{"failfast": "FailFast", "first": "First", "latency": "Latency"}

// FileKey is the key of an option in a scenario's explore block:
// explore.random for the rates, explore.NAME for the others.
func FileKey(option string) string {
	if option == "rates" {
		return "explore.random"
	}
	return "explore." + option
}

// Override is a field of the scenario file's explore block that an option
// the caller gave replaced: the file's Option Value gives way to By
// ByValue (the same option, or one that changes the search, such as seeds
// for the file's exhaustive search).
type Override struct {
	Option, Value string
	By, ByValue   string
}

// Spelled says what the override did, By spelt by spell.
func (o Override) Spelled(spell func(option string) string) string {
	by := spell(o.By)
	if o.ByValue != "" {
		by += " " + o.ByValue
	}
	return fmt.Sprintf("%s overrides the scenario's %s: %s", by, FileKey(o.Option), o.Value)
}

// CheckOptions merges the scenario's explore block into opts and checks
// every option as New does, without running anything: the error is an
// *OptionError for an option out of range or a pair that cannot go
// together; the overrides say which of the file's fields opts replaced.
func CheckOptions(sc *scenario.Scenario, opts Options) ([]Override, error) {
	return opts.resolve(sc)
}

// merger merges a scenario's explore block into options, keeping where
// each value came from.
type merger struct {
	o         *Options
	sc        *scenario.Scenario // nil for a function
	file      map[string]bool    // options whose value is the file's
	overrides []Override
}

// given reports whether o's value of option is the caller's (set, and not
// the file's).
func (m *merger) given(option string) bool { return !m.file[option] && m.set(option) }

// set reports whether option has a value other than its zero.
func (m *merger) set(option string) bool {
	o := m.o
	switch option {
	case "strategy":
		return o.Strategy != ""
	case "swarm":
		return o.Swarm
	case "exhaustive":
		return o.Exhaustive
	case "seeds":
		return o.Seeds != 0
	case "depth":
		return o.Depth != 0
	case "max-faults":
		return o.MaxFaults != 0
	}
	return false
}

// value is option's value as messages quote it ("" for a flag that is on).
func (m *merger) value(option string) string {
	o := m.o
	switch option {
	case "strategy":
		return string(o.Strategy)
	case "seeds":
		return fmt.Sprint(o.Seeds)
	case "depth":
		return fmt.Sprint(o.Depth)
	case "max-faults":
		return fmt.Sprint(o.MaxFaults)
	case "max-runs":
		return fmt.Sprint(o.MaxRuns)
	case "shard":
		return o.Shard.String()
	case "horizon":
		return horizonText(o.Horizon)
	}
	return ""
}

// horizonText is a horizon as the flag and the file spell it: off for
// none.
func horizonText(d time.Duration) string {
	if d < 0 {
		return "off"
	}
	return d.String()
}

// take sets option from the file, unless the caller gave it another value
// (then the file's is overridden by it) or an option in by that replaces
// it (the first given one overrides it).
func (m *merger) take(option, fileValue string, apply func(), by ...string) {
	if m.given(option) {
		if v := m.value(option); v != fileValue && fileValue != "true" { // a flag that is on is on in both
			m.overrides = append(m.overrides, Override{Option: option, Value: fileValue, By: option, ByValue: v})
		}
		return
	}
	for _, b := range by {
		if m.given(b) {
			m.overrides = append(m.overrides, Override{Option: option, Value: fileValue, By: b, ByValue: m.value(b)})
			return
		}
	}
	apply()
	m.file[option] = true
}

// merge takes the explore block's fields into the options.
func (m *merger) merge(x scenario.Explore) {
	o := m.o
	if x.Horizon != 0 {
		switch {
		case o.Horizon == 0:
			o.Horizon, m.file["horizon"] = x.Horizon, true
		case o.Horizon != x.Horizon:
			m.overrides = append(m.overrides, Override{Option: "horizon", Value: horizonText(x.Horizon), By: "horizon", ByValue: horizonText(o.Horizon)})
		}
	}
	o.RecurringAlarms = o.RecurringAlarms || x.RecurringAlarms
	if x.Rates != nil {
		switch {
		case o.Rates == nil:
			o.Rates, m.file["rates"] = x.Rates, true
		case !maps.Equal(o.Rates, x.Rates):
			m.overrides = append(m.overrides, Override{Option: "rates", Value: RatesText(rateNames(x.Rates)), By: "rates", ByValue: RatesText(rateNames(o.Rates))})
		}
	}
	if x.Latency != nil {
		switch {
		case !o.Latency.On() && !o.NoLatency:
			o.Latency, o.NoLatency = *x.Latency, !x.Latency.On()
		case o.NoLatency != !x.Latency.On() || (o.Latency.On() && o.Latency != *x.Latency):
			given := o.Latency.String()
			if o.NoLatency {
				given = "off"
			}
			m.overrides = append(m.overrides, Override{Option: "latency", Value: x.Latency.String(), By: "latency", ByValue: given})
		}
	}
	m.mergeSearch(x)
}

// mergeSearch takes the file's search: the caller's exhaustive search,
// seeds, strategy or swarm replace the file's search, and what only it
// takes.
func (m *merger) mergeSearch(x scenario.Explore) {
	o := m.o
	if x.Exhaustive {
		m.take("exhaustive", "true", func() { o.Exhaustive = true }, "seeds", "strategy", "swarm")
		if x.MaxFaults != 0 {
			m.take("max-faults", fmt.Sprint(x.MaxFaults), func() { o.MaxFaults = x.MaxFaults }, "seeds", "strategy", "swarm")
		}
	} else if x.MaxFaults != 0 {
		m.take("max-faults", fmt.Sprint(x.MaxFaults), func() { o.MaxFaults = x.MaxFaults })
	}
	if x.Strategy != "" {
		m.take("strategy", string(x.Strategy), func() { o.Strategy = x.Strategy }, "swarm", "exhaustive")
	}
	if x.Swarm {
		m.take("swarm", "true", func() { o.Swarm = true }, "strategy", "exhaustive")
	}
	if x.Depth != 0 {
		// The caller's options that leave no PCT to take a depth.
		var by []string
		if o.Strategy == runtime.StrategyRandom {
			by = append(by, "strategy")
		}
		if o.Strategy == "" || o.Strategy == runtime.StrategyRandom {
			by = append(by, "swarm")
		}
		m.take("depth", fmt.Sprint(x.Depth), func() { o.Depth = x.Depth }, append(by, "exhaustive")...)
	}
}

// resolve merges the scenario's explore block into o, checks every option
// and every pair, and fills in the defaults.
func (o *Options) resolve(sc *scenario.Scenario) ([]Override, error) {
	if o.Strategy == runtime.StrategySwarm { // one strategy type: swarm is the random strategy's swarm
		o.Strategy, o.Swarm = runtime.StrategyRandom, true
	}
	m := &merger{o: o, sc: sc, file: map[string]bool{}}
	if sc != nil {
		m.merge(sc.Explore)
	}
	if err := m.checkRanges(); err != nil {
		return nil, err
	}
	if err := m.checkPairs(); err != nil {
		return nil, err
	}
	return m.overrides, o.fill(sc)
}

// outOf is the error of option, out of its range.
func (m *merger) outOf(option, value, want string) error {
	return m.located(&OptionError{Option: option, Value: value, FromFile: m.file[option], Want: want})
}

// located sets where the file gave e's values.
func (m *merger) located(e *OptionError) *OptionError {
	if m.sc != nil && (e.FromFile || e.WithFromFile) {
		key := func(option string) string { return strings.TrimPrefix(FileKey(option), "explore.") }
		e.File, e.Line, e.WithLine = m.sc.File, m.sc.Explore.Lines[key(e.Option)], m.sc.Explore.Lines[key(e.With)]
	}
	return e
}

// checkRanges checks each option the caller or the file set against its
// range.
func (m *merger) checkRanges() error {
	o := m.o
	ints := []struct {
		r optrange.Int
		v int
	}{{optrange.Seeds, o.Seeds}, {optrange.Workers, o.Workers}, {optrange.MaxAmbiguous, o.MaxAmbiguous},
		{optrange.Depth, o.Depth}, {optrange.MaxFaults, o.MaxFaults}, {optrange.MaxRuns, o.MaxRuns}}
	for _, c := range ints {
		if c.v != 0 && !c.r.Holds(c.v) {
			return m.outOf(c.r.Name, fmt.Sprint(c.v), c.r.Want)
		}
	}
	switch {
	case o.Horizon > 0 && !optrange.Horizon.Holds(o.Horizon):
		return m.outOf("horizon", o.Horizon.String(), optrange.Horizon.Want)
	case o.ShrinkTime != 0 && !optrange.ShrinkTime.Holds(o.ShrinkTime):
		return m.outOf("shrink-time", o.ShrinkTime.String(), optrange.ShrinkTime.Want)
	case o.MinChecked > 0 && !optrange.MinCheckedHolds(o.MinChecked), o.MinChecked != o.MinChecked:
		return m.outOf("min-checked", fmt.Sprint(o.MinChecked), optrange.MinCheckedWant+"; a negative value in Options sets none")
	case o.Shard != (Shard{}) && (o.Shard.Count < 1 || o.Shard.Index < 0 || o.Shard.Index >= o.Shard.Count):
		return m.outOf("shard", o.Shard.String(), "I/N with 0 <= I < N, such as 0/4")
	}
	switch o.Strategy {
	case "", runtime.StrategyMix, runtime.StrategyRandom, runtime.StrategyPCT:
	default:
		return m.outOf("strategy", string(o.Strategy), "mix, random, swarm or pct")
	}
	return nil
}

// pair is two options that cannot go together: when holds says both are
// set, the error names both and says why.
type pair struct {
	a, b  string
	holds func(o *Options) bool
	why   string
}

// pairs are the combinations of options that cannot mean anything, the
// first that holds refused.
var pairs = []pair{
	{"seeds", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.Seeds != 0 && o.Seeds != 1 },
		"an exhaustive search runs the tree of one seed (first), whose draws set only what is not a fault (backoff jitter, latency, tie-breaks)"},
	{"swarm", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.Swarm },
		"an exhaustive search places every fault kind of the rates itself, it draws no profile"},
	{"strategy", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.Strategy != "" && o.Strategy != runtime.StrategyRandom },
		"an exhaustive search runs one seed's tree with the random tie-break: there are no seeds to mix, and no PCT priorities to draw"},
	{"depth", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.Depth != 0 },
		"a depth is PCT's, and an exhaustive search runs the random tie-break"},
	{"keep-rules", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.KeepRules },
		"an exhaustive search places its own faults at every decision point; the scenario's rules would move them"},
	{"shard", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.Shard.Count > 1 },
		"an exhaustive search is one tree, which does not split into shards of seeds"},
	{"check-determinism", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.CheckDeterminism },
		"run the search twice and compare the certificates' hashes instead"},
	{"failfast", "exhaustive", func(o *Options) bool { return o.Exhaustive && o.FailFast },
		"an exhaustive search already stops at the end of the level of its first failing placement"},
	{"max-faults", "exhaustive", func(o *Options) bool { return !o.Exhaustive && o.MaxFaults != 0 },
		"it bounds an exhaustive search only, and would do nothing"},
	{"max-runs", "exhaustive", func(o *Options) bool { return !o.Exhaustive && o.MaxRuns != 0 },
		"it bounds an exhaustive search only, and would do nothing"},
	{"depth", "strategy", func(o *Options) bool { return o.Strategy == runtime.StrategyRandom && o.Depth != 0 },
		"only pct and mix take a depth (PCT's d)"},
	{"depth", "swarm", func(o *Options) bool { return o.Strategy == "" && o.Swarm && o.Depth != 0 },
		"swarm runs the random strategy, and only pct and mix take a depth (PCT's d)"},
	{"swarm", "strategy", func(o *Options) bool { return o.Strategy == runtime.StrategyMix && o.Swarm },
		"a mix draws a swarm profile for its own share of the seeds; for swarm on every seed, take strategy random"},
}

// checkPairs refuses the first pair of options that cannot go together.
func (m *merger) checkPairs() error {
	for _, p := range pairs {
		if !p.holds(m.o) {
			continue
		}
		return m.located(&OptionError{Option: p.a, Value: m.value(p.a), FromFile: m.file[p.a], With: p.b, WithValue: m.value(p.b), WithFromFile: m.file[p.b],
			Without: p.b == "exhaustive" && !m.o.Exhaustive, Want: p.why})
	}
	return nil
}
