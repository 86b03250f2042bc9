// Package browsertest starts a real headless Chromium for the tests that
// check HTML in a browser (render's timelines, explore's linearizability
// pages), and skips them cleanly where none is installed.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Bounds of a browser test. They are wall-clock limits that stop a hung
// browser; nothing asserts on speed.
const (
	watchdogLimit = 4 * time.Minute  // the whole test, browser included
	Step          = 45 * time.Second // one page: open, load, read the DOM
	exitLimit     = 10 * time.Second // the browser and its children to exit
)

// Path finds the browser: DOSIM_CHROMIUM, else chromium (Debian's
// package) or Chrome on PATH. It skips the test, saying how to install one,
// when there is none; a DOSIM_CHROMIUM that is not executable fails it.
func Path(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOSIM_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		require.NoError(t, err, "DOSIM_CHROMIUM=%q is not an executable browser", p)
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no Chromium found: apt-get install chromium, or set DOSIM_CHROMIUM=/path")
	return ""
}

// Start starts a headless browser for the test; the test's cleanup
// stops it and checks that none of its processes is left.
func Start(t *testing.T, bin, profile string) context.Context {
	t.Helper()
	watchdog, stopWatchdog := context.WithTimeout(context.Background(), watchdogLimit)
	var output bytes.Buffer // the browser's stdout and stderr, for a failure
	var mu sync.Mutex
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(profile),
		chromedp.CombinedOutput(lockedWriter{&mu, &output}),
	}
	allocCtx, stopAlloc := chromedp.NewExecAllocator(watchdog, opts...)
	browserCtx, stopBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		stopBrowser()
		stopAlloc() // kills the browser and waits for it
		stopWatchdog()
		if left := waitForExit(profile, exitLimit); len(left) > 0 {
			t.Errorf("the browser left %d processes behind (pids %v); they were killed", len(left), left)
		}
	})
	// The first Run starts the browser; it lives as long as browserCtx.
	if err := chromedp.Do(browserCtx); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("starting %s: %v\nits output:\n%s", bin, err, output.String())
	}
	return browserCtx
}

// lockedWriter serialises writes to a buffer.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// waitForExit waits up to limit for every process started with
// --user-data-dir=profile to exit, then kills (by pid) the ones still
// there and returns their pids.
func waitForExit(profile string, limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		left := processesUsing(profile)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesUsing lists the processes whose command line names the profile
// directory: the browser and its children (renderer, zygote, crash handler).
func processesUsing(profile string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil // not Linux: nothing to look at
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && isZombie(stat) {
			continue // exited; its parent has not reaped it yet
		}
		if bytes.Contains(cmdline, []byte(profile)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// isZombie reads the state field of /proc/PID/stat.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
