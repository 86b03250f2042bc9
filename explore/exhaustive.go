package explore

// Bounded exhaustive search (Options.Exhaustive): every placement of at
// most Options.MaxFaults faults over a run's delivery decision points,
// instead of faults drawn at random per seed. The tree search is in
// exhaustive_tree.go; this file holds the options, the certificate and
// the text form of a fault set.

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dosim/dosim/transport"
)

// MaxExhaustiveFaults is the largest Options.MaxFaults: the tree grows
// as the decision points to the power of the faults.
const MaxExhaustiveFaults = 4

// ErrSearchTooLarge is wrapped (with ErrOptions) by the error of an
// exhaustive search whose tree of placements holds more runs than
// Options.MaxRuns, found before it grows or as it grows.
var ErrSearchTooLarge = errors.New("the exhaustive search is too large")

// DefaultMaxFaults is Options.MaxFaults when Exhaustive is set and
// MaxFaults is 0.
const DefaultMaxFaults = 2

// DefaultMaxRuns is the most runs an exhaustive search makes by default
// (Options.MaxRuns): a search whose tree needs more is refused, before it
// starts when the fault-free run's decision points already say so, else
// as soon as the tree grows past it.
const DefaultMaxRuns = 100_000

// Certificate is what an exhaustive search ran (Summary.Exhaustive): every
// placement of at most MaxFaults faults, of the Kinds, over the delivery
// decision points (each attempt of each call) that the runs met.
type Certificate struct {
	// MaxFaults is the bound b; Kinds the fault kinds placed, in fault
	// order.
	MaxFaults int      `json:"maxFaults"`
	Kinds     []string `json:"kinds"`
	// Points counts the distinct decision points (call, attempt, method)
	// the runs of the tree met.
	Points int `json:"points"`
	// Runs counts the placements run, one run each, the fault-free one
	// included. Duplicates counts the runs more, of candidate sets in which
	// some fault met no attempt (a fault placed before it ended its call
	// early): each is the same run as a placement counted in Runs, and is
	// neither counted nor searched further.
	Runs       int `json:"runs"`
	Duplicates int `json:"duplicates"`
	// MaxRuns is the limit in force (Options.MaxRuns).
	MaxRuns int `json:"maxRuns"`
	// Hash is PlacementsHash of the placements run, in the order they ran:
	// two searches with the same hash ran the same fault sets.
	Hash string `json:"hash"`
}

// Text is the certificate's line for a person: "every placement of up to 2
// faults over 14 decision points was run: 1,380 runs, clean (sha256
// 8f3a1c2d4e5f6a7b)", with verdict in place of clean.
func (c *Certificate) Text(verdict string) string {
	h, _ := strings.CutPrefix(c.Hash, "sha256:")
	return fmt.Sprintf("every placement of up to %s over %s was run: %s, %s (sha256 %s)",
		plural(c.MaxFaults, "fault"), plural(c.Points, "decision point"), thousands(c.Runs)+" runs", verdict, h[:min(len(h), 16)])
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// placementsVersion starts the text PlacementsHash hashes.
const placementsVersion = "dosim exhaustive 1\n"

// PlacementsHash is the "sha256:HEX" of fault sets in order, each written
// as FaultSetText on a line of its own (the empty set an empty line).
func PlacementsHash(sets [][]transport.Rule) string {
	h := newPlacementHash()
	for _, s := range sets {
		h.add(s)
	}
	return h.sum()
}

type placementHash struct{ b strings.Builder }

func newPlacementHash() *placementHash {
	h := &placementHash{}
	h.b.WriteString(placementsVersion)
	return h
}

func (h *placementHash) add(set []transport.Rule) {
	h.b.WriteString(FaultSetText(set))
	h.b.WriteByte('\n')
}

func (h *placementHash) sum() string {
	s := sha256.Sum256([]byte(h.b.String()))
	return "sha256:" + hex.EncodeToString(s[:])
}

// FaultSetText writes a fault set as --replay-faults reads it:
// CALL:ATTEMPT:METHOD=FAULT, comma-separated, in the set's order.
func FaultSetText(rules []transport.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = fmt.Sprintf("%d:%d:%s=%s", r.Call, r.Attempt, r.Method, r.Fault)
	}
	return strings.Join(parts, ",")
}

// ParseFaultSet reads FaultSetText's form (METHOD may be left out, with its
// colon: CALL:ATTEMPT=FAULT matches any method), or "none" for no fault, as
// rules naming each call and attempt. A call and attempt named twice is
// refused.
func ParseFaultSet(v string) ([]transport.Rule, error) {
	out := []transport.Rule{} // not nil: a nil set draws random faults
	if strings.TrimSpace(v) == "none" {
		return out, nil
	}
	seen := map[[2]int]bool{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		where, fault, ok := strings.Cut(part, "=")
		fields := strings.Split(where, ":")
		if !ok || len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("%w: fault %q: want CALL:ATTEMPT:METHOD=FAULT, such as 2:1:AddOne=lose-response", ErrOptions, part)
		}
		call, err1 := strconv.Atoi(fields[0])
		attempt, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil || call < 1 || attempt < 1 || attempt > 11 {
			return nil, fmt.Errorf("%w: fault %q: want a call from 1 and an attempt from 1 to 11", ErrOptions, part)
		}
		f, err := transport.ParseFault(fault)
		if err != nil || f == transport.None || f.OnConnection() {
			return nil, fmt.Errorf("%w: fault %q: unknown fault %q; allowed are %s", ErrOptions, part, fault, attemptFaultNames())
		}
		if seen[[2]int{call, attempt}] {
			return nil, fmt.Errorf("%w: fault %q: call %d attempt %d given twice: one fault per attempt", ErrOptions, part, call, attempt)
		}
		seen[[2]int{call, attempt}] = true
		r := transport.Rule{Call: call, Attempt: attempt, Fault: f}
		if len(fields) == 3 {
			r.Method = fields[2]
		}
		out = append(out, r)
	}
	return out, nil
}

// comparePoint orders rules by call, attempt, method and fault: the order
// of a placement's faults, and of decision points.
func comparePoint(a, b transport.Rule) int {
	return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.Attempt, b.Attempt),
		strings.Compare(a.Method, b.Method), cmp.Compare(a.Fault, b.Fault))
}

// comparePlacements orders placements of one size by their faults in turn:
// the order of a level of the tree.
func comparePlacements(a, b []transport.Rule) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), slices.CompareFunc(a, b, comparePoint))
}
