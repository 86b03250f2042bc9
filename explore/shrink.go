package explore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/transport"
)

// Replay runs one seed with the sweep's random faults, keeping everything
// the artifacts need.
func (e *Explorer) Replay(seed uint64) (*SeedResult, error) { return e.check(seed, nil) }

// ReplayFaults runs one seed with an explicit fault set instead of random
// faults: what a shrunk set replays with.
func (e *Explorer) ReplayFaults(seed uint64, faults []transport.Rule) (*SeedResult, error) {
	return e.check(seed, append([]transport.Rule{}, faults...))
}

// Failing replays a failing seed and shrinks its fault set: it drops each
// fault in turn and keeps the drop when the run still fails the same way,
// until no single drop keeps it failing.
func (e *Explorer) Failing(seed uint64) (*Failing, error) {
	r, err := e.Replay(seed)
	if err != nil {
		return nil, err
	}
	f := &Failing{Seed: seed, Violations: r.Violations, Faults: r.Faults, Shrunk: r.Faults}
	if len(r.Violations) == 0 || e.opts.NoShrink {
		return f, nil
	}
	kind := r.Violations[0].Kind
	fails := func(rules []transport.Rule) bool {
		got, err := e.ReplayFaults(seed, rules)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(got.Violations, func(v Violation) bool { return v.Kind == kind })
	}
	cur := slices.Clone(r.Faults)
	if !fails(cur) {
		// The explicit set does not reproduce the run (a shift in call order);
		// keep the seed's own faults as they were drawn.
		return f, nil
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur); i++ {
			try := slices.Delete(slices.Clone(cur), i, i+1)
			if fails(try) {
				cur, changed = try, true
				i--
			}
		}
	}
	f.Shrunk = cur
	if got, err := e.ReplayFaults(seed, cur); err == nil && len(got.Violations) > 0 {
		f.Violations = got.Violations
	}
	return f, nil
}

// FaultsYAML writes a fault set as a scenario's faults block: paste it
// into the scenario (or run `dosim run`) to replay the shrunk run without
// random faults.
func FaultsYAML(rules []transport.Rule) string {
	var b strings.Builder
	b.WriteString("faults:\n  rules:\n")
	if len(rules) == 0 {
		b.WriteString("    []\n")
	}
	for _, r := range rules {
		fmt.Fprintf(&b, "    - {call: %d, method: %s, attempt: %d, fault: %s}\n", r.Call, r.Method, r.Attempt, r.Fault)
	}
	return b.String()
}

// ReplayCommand is the dosim command that replays seed of a sweep.
func (e *Explorer) ReplayCommand(seed uint64) string { return e.newSummary().ReplayCommand(seed) }

// WriteArtifacts replays a failing seed with its shrunk faults and writes,
// under dir: timeline.html (the run), linearizability-OBJECT.html (porcupine's
// view of each history that failed the check), faults.yaml (the shrunk
// fault set), violations.txt and replay.txt. It returns the files written.
func (e *Explorer) WriteArtifacts(dir string, f *Failing) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := e.ReplayFaults(f.Seed, f.Shrunk)
	if err != nil {
		return nil, err
	}
	var written []string
	write := func(name string, data []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	if r.Result != nil {
		var b bytes.Buffer
		rep := r.Result.Report()
		rep.Name = fmt.Sprintf("%s, seed %d, shrunk faults", rep.Name, f.Seed)
		if err := render.HTML(&b, rep); err != nil {
			return written, err
		}
		if err := write("timeline.html", b.Bytes()); err != nil {
			return written, err
		}
	}
	for _, v := range r.Violations {
		h := r.Linear[v.Object]
		if v.Kind != KindLinearizability || h == nil {
			continue
		}
		var b bytes.Buffer
		if err := h.Visualize(&b); err != nil {
			return written, err
		}
		name := "linearizability-" + strings.NewReplacer("/", "-", " ", "_").Replace(v.Object) + ".html"
		if err := write(name, b.Bytes()); err != nil {
			return written, err
		}
	}
	var vs strings.Builder
	for _, v := range f.Violations {
		vs.WriteString(v.String() + "\n")
	}
	if err := write("violations.txt", []byte(vs.String())); err != nil {
		return written, err
	}
	if err := write("faults.yaml", []byte(FaultsYAML(f.Shrunk))); err != nil {
		return written, err
	}
	if err := write("replay.txt", []byte(e.ReplayCommand(f.Seed)+"\n")); err != nil {
		return written, err
	}
	return written, nil
}
