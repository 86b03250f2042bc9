package platformtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/agent"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// The Agents SDK's cases: testdata/agents/worker.js runs them in the real
// SDK (agents, pinned in testdata/agents/package.json, bundled by
// scripts/agents-bundle.sh) inside workerd; agentsCases run the same
// programs through package agent.

const agentsHint = "scripts/agents-bundle.sh (needs node and npm)"

// agentsBundle is the bundled Worker scripts/agents-bundle.sh writes; the
// test skips without it.
func agentsBundle(t *testing.T) string {
	t.Helper()
	var pin struct{ Dependencies map[string]string }
	data, err := os.ReadFile(filepath.Join("testdata", "agents", "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &pin)
	}
	if err != nil || pin.Dependencies["agents"] == "" {
		t.Fatalf("testdata/agents/package.json: no agents version: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory (%v): bundle the Agents SDK with %s", err, agentsHint)
	}
	p := filepath.Join(cache, "dosim", "agents-"+pin.Dependencies["agents"], "bundle.js")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the Agents SDK %s is not bundled (%s): bundle it with %s", pin.Dependencies["agents"], p, agentsHint)
	}
	return p
}

// agentsConfig serves the bundle with its agent class SQLite-backed on
// localDisk storage, as an Agents SDK class is.
const agentsConfig = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w), (name = "store", disk = (path = "{{STORE}}", writable = true)) ],
  sockets = [ (name = "http", address = "127.0.0.1:{{PORT}}", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "bundle.js", esModule = embed "bundle.js") ],
  compatibilityDate = "2026-11-17",
  durableObjectNamespaces = [ (className = "Sched", uniqueKey = "sched", enableSql = true) ],
  durableObjectStorage = (localDisk = "store"),
  bindings = [ (name = "Sched", durableObjectNamespace = "Sched") ],
);
`

// startAgents starts workerd serving the bundle.
func startAgents(t *testing.T, bundle string) *platform {
	t.Helper()
	bin := workerdPath(t)
	js, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var lastErr error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		store, err := os.MkdirTemp(dir, "store-")
		if err != nil {
			t.Fatal(err)
		}
		config := strings.NewReplacer("{{PORT}}", fmt.Sprint(port), "{{STORE}}", store).Replace(agentsConfig)
		p, err := serve(t, bin, dir, port, map[string][]byte{"bundle.js": js, "config.capnp": []byte(config)})
		if err == nil {
			out, _ := exec.Command(bin, "--version").Output()
			p.version = strings.TrimSpace(string(out))
			return p
		}
		lastErr = err
	}
	t.Fatalf("workerd did not start: %v", lastErr)
	return nil
}

// sched is the Go side of worker.js's Sched: an agent whose Work is the
// schedules' callback.
type sched struct {
	agent.Agent
	st *object.State
}

func (s *sched) Methods() object.Methods {
	return object.Methods{
		"Work":   object.Func(func(ctx context.Context, payload string) error { return nil }),
		"Dedupe": object.Func(s.dedupe),
		"Bounds": object.Func(s.bounds),
	}
}

// dedupe is worker.js's scheduleDedupe.
func (s *sched) dedupe(ctx context.Context) (map[string]any, error) {
	no := agent.TaskOptions{Idempotent: new(false)}
	yes := agent.TaskOptions{Idempotent: new(true)}
	ids := []string{}
	for _, c := range []struct {
		when    agent.When
		payload string
		opts    agent.TaskOptions
	}{
		{agent.Every(time.Minute), "e", agent.TaskOptions{}}, {agent.Every(time.Minute), "e", agent.TaskOptions{}},
		{agent.Every(2 * time.Minute), "e", agent.TaskOptions{}},
		{agent.Cron("0 9 * * *"), "c", agent.TaskOptions{}}, {agent.Cron("0 9 * * *"), "c", agent.TaskOptions{}},
		{agent.After(time.Minute), "d", agent.TaskOptions{}}, {agent.After(time.Minute), "d", agent.TaskOptions{}},
		{agent.After(time.Minute), "i", yes}, {agent.After(time.Hour), "i", yes},
		{agent.Every(time.Minute), "o", agent.TaskOptions{}}, {agent.Every(time.Minute), "o", agent.TaskOptions{}},
		{agent.Cron("0 10 * * *"), "o", agent.TaskOptions{}}, {agent.Cron("0 10 * * *"), "o", no},
	} {
		task, err := s.Schedule(ctx, c.when, "Work", c.payload, c.opts)
		if err != nil {
			return nil, err
		}
		ids = append(ids, task.ID)
	}
	list, err := s.ListSchedules(ctx)
	if err != nil {
		return nil, err
	}
	v := func(x any) map[string]any { return map[string]any{"value": x} }
	return map[string]any{
		"everySame": v(ids[0] == ids[1]), "everyOtherIntervalSame": v(ids[0] == ids[2]), "cronSame": v(ids[3] == ids[4]),
		"delaySame": v(ids[5] == ids[6]), "delayIdempotentSame": v(ids[7] == ids[8]),
		// dosim refuses Idempotent false on Every (TestA6_AnEveryScheduleCannotOptOut):
		// the SDK ignores it, so the program without it is the same one.
		"everyOptOutSame": v(ids[9] == ids[10]), "optOutSame": v(ids[11] == ids[12]),
		"count": v(len(list)),
	}, nil
}

// bounds is worker.js's scheduleBounds.
func (s *sched) bounds(ctx context.Context) (map[string]any, error) {
	try := func(_ agent.Task, err error) map[string]any {
		if err != nil {
			return map[string]any{"error": err.Error()}
		}
		return map[string]any{"value": "made"}
	}
	return map[string]any{
		"everyTooLong": try(s.Schedule(ctx, agent.Every(2592001*time.Second), "Work", "x")),
		"everyZero":    try(s.Schedule(ctx, agent.Every(0), "Work", "x")),
		"unknown":      try(s.Schedule(ctx, agent.After(time.Minute), "nope", "x")),
	}, nil
}

// agentsCases are the Agents SDK's cases, each a method of sched.
var agentsCases = []struct{ name, method string }{
	{"schedule-dedupe", "Dedupe"},
	{"schedule-bounds", "Bounds"},
}

// runAgentCase runs method of a fresh sched in a runtime of its own.
func runAgentCase(method string) (map[string]any, error) {
	rt := runtime.New(runtime.WithSeed(1))
	defer rt.Close()
	ns := rt.Namespace("SCHED", func(st *object.State) object.Object { return &sched{st: st} })
	var obs map[string]any
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("x")
		if err != nil {
			return err
		}
		v, err := s.Call(ctx, method)
		obs, _ = v.(map[string]any)
		return err
	})
	if err != nil {
		return nil, err
	}
	return normalize(obs)
}

// TestAgentsSDKAgainstWorkerd runs the Agents SDK's cases in the real SDK
// inside workerd and through package agent, and fails on each difference
// not listed as deliberate (issue 34, row 15: the SDK deduplicates
// schedules). An error agrees when dosim's message contains the SDK's.
func TestAgentsSDKAgainstWorkerd(t *testing.T) {
	bundle := agentsBundle(t)
	p := startAgents(t, bundle)
	for _, c := range agentsCases {
		t.Run(c.name, func(t *testing.T) {
			plat, err := p.get(t.Context(), "/"+c.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the SDK: %s", show(plat))
			got, err := runAgentCase(c.method)
			if err != nil {
				t.Fatal(err)
			}
			judge(t, c.name, differences(wrapErrors(plat), wrapErrors(got)))
		})
	}
	t.Logf("%s with the Agents SDK: %d cases", p.version, len(agentsCases))
}

// wrapErrors writes {"error": "text"} results (worker.js's attempt and
// sched's) as the observations' error objects, so that differences
// compares their messages.
func wrapErrors(obs map[string]any) map[string]any {
	for k, v := range obs {
		if m, ok := v.(map[string]any); ok {
			if e, ok := m["error"].(string); ok {
				obs[k] = map[string]any{"error": map[string]any{"message": e}}
			}
		}
	}
	return obs
}
