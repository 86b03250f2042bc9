package render_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dosim/dosim/render"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/transport"
)

// TestU3_UnlabelledCallsShowTheirArguments: a report without labels (an
// function's sweep, explore.RunFunc) shows each call from its record, Method(args), in the
// text timeline, and its arguments and result in JSON; a value JSON cannot
// encode is shown as text rather than failing the output.
func TestU3_UnlabelledCallsShowTheirArguments(t *testing.T) {
	rep := render.Report{Name: "func", Calls: []runtime.CallRecord{
		{Namespace: "WALLET", Object: "alice", Method: "Deposit", Args: []any{"tx-1", 50}, Result: 50, Outcome: transport.OutcomeOK},
		{Namespace: "WALLET", Object: "alice", Method: "Hook", Args: []any{func() {}}, Outcome: transport.OutcomeOK},
	}}
	var text bytes.Buffer
	if err := render.Text(&text, rep, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), `Deposit("tx-1", 50)`) {
		t.Errorf("text timeline lacks the call's arguments:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := render.JSON(&js, rep); err != nil {
		t.Fatalf("JSON of a record holding a func: %v", err)
	}
	var got []struct {
		Calls []struct {
			Args   []any `json:"args"`
			Result any   `json:"result"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	c := got[0].Calls[0]
	if len(c.Args) != 2 || c.Args[0] != "tx-1" || c.Args[1] != float64(50) || c.Result != float64(50) {
		t.Errorf("JSON call = %+v, want args [tx-1 50] and result 50", c)
	}
	labelled := rep
	labelled.Labels = []string{"", ""}
	text.Reset()
	if err := render.Text(&text, labelled, render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), `Deposit("tx-1"`) {
		t.Errorf("a labelled report (a scenario's) must keep the method name for an empty label:\n%s", text.String())
	}
}
