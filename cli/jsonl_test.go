package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestD2_RunFormatJSONLWritesACallALine checks dosim run --format jsonl:
// one JSON object a line, one line per call of --format json's report,
// each naming its scenario and seed.
func TestD2_RunFormatJSONLWritesACallALine(t *testing.T) {
	const file = "../testdata/scenarios/ambiguous-delivery.yaml"
	code, out, stderr := runCLI(t, "run", "--format", "json", file)
	if code != 0 {
		t.Fatalf("--format json: exit %d: %s", code, stderr)
	}
	var reports []struct {
		Calls []struct {
			RequestID string `json:"requestId"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) != 1 {
		t.Fatalf("--format json: %v (%d reports)", err, len(reports))
	}
	code, out, stderr = runCLI(t, "run", "--format", "jsonl", file)
	if code != 0 {
		t.Fatalf("--format jsonl: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(reports[0].Calls) {
		t.Fatalf("--format jsonl wrote %d lines for %d calls:\n%s", len(lines), len(reports[0].Calls), out)
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var c struct {
			Scenario  string `json:"scenario"`
			Seed      uint64 `json:"seed"`
			N         int    `json:"n"`
			RequestID string `json:"requestId"`
			Outcome   string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, l)
		}
		if c.Scenario != "ambiguous-delivery" || c.N != i+1 || c.RequestID == "" || c.Outcome == "" {
			t.Errorf("line %d: %+v", i+1, c)
		}
		seen[c.RequestID] = true
	}
	for _, c := range reports[0].Calls {
		if !seen[c.RequestID] {
			t.Errorf("call %s of --format json has no jsonl line", c.RequestID)
		}
	}
	if code, _, stderr := runCLI(t, "run", "--format", "xml", file); code != 2 || !strings.Contains(stderr, "jsonl") {
		t.Errorf("--format xml: exit %d, stderr %q: want 2 and the allowed formats, jsonl among them", code, stderr)
	}
}
