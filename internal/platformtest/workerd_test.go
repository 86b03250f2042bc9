// Package platformtest is dosim's differential test against the real
// runtime: it starts workerd, Cloudflare's open-source Workers runtime, on
// 127.0.0.1 with a Worker and two Durable Object classes written for the
// purpose (testdata/worker.js: SqlObject, SQLite-backed, and KvObject,
// KV-backed; compatibility date 2026-11-17; testdata/config.capnp.tmpl),
// runs each platform-observable case there and through dosim (a Go class,
// mirror, written to behave as the JavaScript one), and fails on every
// difference that is not in the documented list of deliberate ones
// (deliberate, after DESIGN's "Where dosim deliberately differs").
//
// The package holds tests only (no library code), so that nothing of it is
// built into a user's binary.
//
// # The workerd it runs
//
// The version is pinned in one place, testdata/workerd/package.json (with
// its package-lock.json). scripts/workerd-install.sh installs exactly that
// (npm ci) into the user cache directory,
// $XDG_CACHE_HOME/dosim/workerd-<version> (os.UserCacheDir), where the test
// looks for it; where there is none the test skips and says so, with the
// install command. `make workerd` runs the script; `.ci/run` runs it, best
// effort.
//
// To run against another binary, a newer workerd for instance, set
// DOSIM_WORKERD to its path:
//
//	npm install --prefix /tmp/wd workerd@latest
//	DOSIM_WORKERD=/tmp/wd/node_modules/.bin/workerd go test ./internal/platformtest -v
//
// The compatibility date stays 2026-11-17, which every later workerd
// supports. To move the pin, change the version in package.json, run
// `npm install --package-lock-only` in testdata/workerd, and run the test:
// each difference it reports is either a change of the platform's that
// dosim must follow or one to add, with its reason, to deliberate.
//
// # The cases
//
// A case is a small program run on both sides (in worker.js's `cases` and
// the storage switch, in Go in cases_test.go) that answers with an
// observation: a JSON object of named results, each {"value": ...} or
// {"error": {message, name, remote, retryable, overloaded,
// durableObjectReset, code}}. Two results agree when their values are
// equal, or when both are errors with the same flags and code and dosim's
// message contains the platform's (dosim puts context before the
// platform's words: the field and its value, the class and its methods);
// the error's JavaScript class (TypeError, RangeError) is compared where
// dosim has one (stub.ErrType, stub.ErrRange).
//
// The alarm case whose alarm always fails waits for every real retry (2
// s·2^k, about two minutes): it runs only with DOSIM_WORKERD_SLOW=1.
// Everything else takes a few seconds.
//
// Cases that differ on purpose until another branch lands are listed in
// awaiting (result → branch); the test logs each one it skips.
package platformtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// installHint is what to run where workerd cannot be found.
const installHint = "scripts/workerd-install.sh (or make workerd), or set DOSIM_WORKERD=/path/to/workerd"

// pinnedVersion reads the workerd version from its one pin,
// testdata/workerd/package.json.
func pinnedVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "workerd", "package.json"))
	if err != nil {
		t.Fatalf("reading the workerd pin: %v", err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("testdata/workerd/package.json: %v", err)
	}
	v := pkg.Dependencies["workerd"]
	if v == "" {
		t.Fatal("testdata/workerd/package.json pins no workerd")
	}
	return v
}

// workerdPath finds the binary: DOSIM_WORKERD, else the pinned version in
// the user cache, where scripts/workerd-install.sh puts it. It skips the
// test when there is none; a DOSIM_WORKERD that is not executable fails it.
func workerdPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOSIM_WORKERD"); p != "" {
		_, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("DOSIM_WORKERD=%q is not an executable workerd: %v", p, err)
		}
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory (%v): install workerd with %s", err, installHint)
	}
	p := filepath.Join(cache, "dosim", "workerd-"+pinnedVersion(t), "node_modules", ".bin", "workerd")
	if _, err := exec.LookPath(p); err != nil {
		t.Skipf("workerd %s is not installed (%s): install it with %s", pinnedVersion(t), p, installHint)
	}
	return p
}

// platform is a running workerd serving testdata/worker.js.
type platform struct {
	base    string // http://127.0.0.1:port
	version string // what workerd --version printed
	client  *http.Client
}

// startWorkerd starts workerd on a free port of 127.0.0.1, with the config
// and the Worker copied into a temporary directory, waits until it
// answers, and stops it when the test ends.
func startWorkerd(t *testing.T) *platform {
	t.Helper()
	bin := workerdPath(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	dir := t.TempDir()
	var lastErr error
	for try := 0; try < 3; try++ {
		p, err := serveOnce(t, bin, dir)
		if err == nil {
			p.version = strings.TrimSpace(string(out))
			t.Logf("platform: %s at %s", p.version, p.base)
			return p
		}
		lastErr = err
	}
	t.Fatalf("workerd did not start: %v", lastErr)
	return nil
}

// serveOnce writes the config for a port free a moment ago and starts
// workerd on it; the port may be taken meanwhile, hence the retries.
func serveOnce(t *testing.T, bin, dir string) (*platform, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	worker, err := os.ReadFile(filepath.Join("testdata", "worker.js"))
	if err != nil {
		t.Fatalf("reading the Worker: %v", err)
	}
	tmpl, err := os.ReadFile(filepath.Join("testdata", "config.capnp.tmpl"))
	if err != nil {
		t.Fatalf("reading the config: %v", err)
	}
	store, err := os.MkdirTemp(dir, "store-")
	if err != nil {
		return nil, err
	}
	config := strings.NewReplacer("{{PORT}}", fmt.Sprint(port), "{{WORKER}}", "worker.js", "{{STORE}}", store).Replace(string(tmpl))
	return serve(t, bin, dir, port, map[string][]byte{"worker.js": worker, "config.capnp": []byte(config)})
}

// serve writes files (config.capnp among them) into dir and starts
// workerd serving the config on port, stopped when the test ends.
func serve(t *testing.T, bin, dir string, port int, files map[string][]byte) (*platform, error) {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, "serve", "config.capnp")
	cmd.Dir = dir
	cmd.SysProcAttr = procAttr()
	logs := &lineLog{t: t}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// done is closed once workerd has exited, with its error in exitErr:
	// a wait that failed on start and the cleanup both read it (a channel
	// of one value, read twice, hung the test for its whole -timeout when
	// workerd refused its config).
	var exitErr error
	done := make(chan struct{})
	go func() { exitErr = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	p := &platform{base: fmt.Sprintf("http://127.0.0.1:%d", port), client: &http.Client{Timeout: 5 * time.Minute}}
	if err := p.waitReady(done, func() error { return exitErr }); err != nil {
		stop()
		return nil, err
	}
	t.Cleanup(stop)
	return p, nil
}

// freePort asks the kernel for a port of 127.0.0.1 that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls /version until workerd answers, it exits, or 20 s pass.
func (p *platform) waitReady(exited <-chan struct{}, exitErr func() error) error {
	deadline := time.Now().Add(20 * time.Second)
	quick := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("workerd exited: %v", exitErr())
		default:
		}
		resp, err := quick.Get(p.base + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("workerd did not answer within 20s")
}

// observe runs a case on workerd and returns its observation.
func (p *platform) observe(ctx context.Context, name, class string) (map[string]any, error) {
	return p.get(ctx, "/case/"+name+"?class="+class)
}

// get asks workerd for path and reads its answer, a JSON object.
func (p *platform) get(ctx context.Context, path string) (map[string]any, error) {
	name := path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("case %s: workerd answered %s: %s", name, resp.Status, body)
	}
	var obs map[string]any
	if err := json.Unmarshal(body, &obs); err != nil {
		return nil, fmt.Errorf("case %s: %w: %s", name, err, body)
	}
	return obs, nil
}

// lineLog hands workerd's output to the test log, a line at a time
// (exec calls Write from one goroutine: Stdout and Stderr are the same
// lineLog).
type lineLog struct {
	t    *testing.T
	rest []byte
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.rest = append(l.rest, b...)
	for {
		i := bytes.IndexByte(l.rest, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.t.Log("workerd: " + string(l.rest[:i]))
		l.rest = l.rest[i+1:]
	}
}
