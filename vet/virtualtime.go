package vet

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// VirtualTime reports object code that reads the wall clock, waits in real
// time, draws from an unseeded or the machine's random source, reads the
// environment, or does file or network I/O: what makes a run depend on the
// machine (rule D1) and what virtual time skips past (rule H1).
var VirtualTime = &analysis.Analyzer{
	Name: "virtualtime",
	Doc: `report wall-clock time, unseeded randomness, the environment and I/O in dosim object code

Object code (methods, Alarm, OnError, ServeHTTP, constructors and what they
call) runs in virtual time from one seed. time.Now, time.Sleep, time.After,
timers, tickers, context.WithTimeout/WithDeadline, math/rand's top-level
functions, crypto/rand, os.Getenv and file or network I/O step outside it.
Each report names dosim's replacement: st.Now(), st.Sleep, st.SetAlarm,
runtime.WithTimeout, a seeded *rand.Rand, st.Storage(), a stub.`,
	Requires:  []*analysis.Analyzer{ObjectCode},
	FactTypes: []analysis.Fact{new(timeFact)},
	Run: func(pass *analysis.Pass) (any, error) {
		return runEscapes(pass, findTimeEscape, factsOf[timeFact]())
	},
}

// The replacements VirtualTime's reports name.
const (
	adviceNow     = "use st.Now(), the virtual clock (rt.Now() in root code)"
	adviceSince   = "subtract from st.Now(), the virtual clock"
	adviceSleep   = "use st.Sleep(ctx, d), which waits in virtual time"
	adviceTimer   = "wait with st.Sleep(ctx, d), or run the work later with st.SetAlarm or the agent's Schedule: they fire in virtual time"
	adviceTimeout = "use runtime.WithTimeout(ctx, d), which fires in virtual time; a wall-clock deadline almost never fires in a simulation, and when it does it depends on the machine"
	adviceRand    = "it draws from the process's own source, not the run's seed: use a *rand.Rand you seed (rand.New(rand.NewPCG(seed, 0)), the seed from rt.Seed() or from the request)"
	adviceCrypto  = "it reads the machine's entropy, different on every run: use a *rand.Rand you seed, or take the bytes as an argument"
	adviceEnv     = "the environment differs between machines: give the class its settings in its constructor (a closure over them) or as arguments"
	adviceFile    = "files live outside the simulation: keep the object's data in st.Storage() or st.SQL(), and read input files before the run"
	adviceNet     = "the network lives outside the simulation: call another object through a stub (s.Call, s.Fetch) and record what leaves the simulation with st.Effect"
)

// timeEscapes maps pkg.Name and pkg.Recv.Name to advice.
var timeEscapes = map[string]string{
	"time.Now": adviceNow, "time.Since": adviceSince, "time.Until": adviceSince,
	"time.Sleep": adviceSleep, "time.After": adviceTimer, "time.AfterFunc": adviceTimer,
	"time.Tick": adviceTimer, "time.NewTimer": adviceTimer, "time.NewTicker": adviceTimer,

	"context.WithTimeout": adviceTimeout, "context.WithDeadline": adviceTimeout,
	"context.WithTimeoutCause": adviceTimeout, "context.WithDeadlineCause": adviceTimeout,

	"os.Getenv": adviceEnv, "os.LookupEnv": adviceEnv, "os.Environ": adviceEnv, "os.Hostname": adviceEnv,

	"os.Open": adviceFile, "os.OpenFile": adviceFile, "os.Create": adviceFile, "os.CreateTemp": adviceFile,
	"os.ReadFile": adviceFile, "os.WriteFile": adviceFile, "os.ReadDir": adviceFile, "os.Remove": adviceFile,
	"os.RemoveAll": adviceFile, "os.Mkdir": adviceFile, "os.MkdirAll": adviceFile, "os.MkdirTemp": adviceFile,
	"os.Rename": adviceFile, "os.Stat": adviceFile, "os.Lstat": adviceFile, "os.Getwd": adviceFile,
	"os.Chdir": adviceFile, "os.DirFS": adviceFile,
	"io/ioutil.ReadFile": adviceFile, "io/ioutil.WriteFile": adviceFile, "io/ioutil.ReadDir": adviceFile,
	"io/ioutil.TempFile": adviceFile, "io/ioutil.TempDir": adviceFile,

	"net.Dial": adviceNet, "net.DialTimeout": adviceNet, "net.Listen": adviceNet, "net.ListenPacket": adviceNet,
	"net.LookupHost": adviceNet, "net.LookupIP": adviceNet, "net.Dialer.Dial": adviceNet, "net.Dialer.DialContext": adviceNet,
	"net/http.Get": adviceNet, "net/http.Post": adviceNet, "net/http.Head": adviceNet, "net/http.PostForm": adviceNet,
	"net/http.ListenAndServe": adviceNet, "net/http.Serve": adviceNet,
	"net/http.Client.Do": adviceNet, "net/http.Client.Get": adviceNet, "net/http.Client.Post": adviceNet,
	"net/http.Client.Head": adviceNet, "net/http.Client.PostForm": adviceNet,
	"net/http.Transport.RoundTrip": adviceNet,
}

// seededRand is what math/rand and math/rand/v2 export that is not a draw
// from the process's source.
var seededRand = map[string]bool{"New": true, "NewSource": true, "NewZipf": true, "NewPCG": true, "NewChaCha8": true}

// findTimeEscape is VirtualTime's escapeFinder: any reference to one of
// timeEscapes, to math/rand's top-level draws, to crypto/rand, or to
// http.DefaultClient.
func findTimeEscape(info *types.Info, n ast.Node) (escape, bool) {
	id, ok := n.(*ast.Ident)
	if !ok {
		return escape{}, false
	}
	obj := info.Uses[id]
	if obj == nil || obj.Pkg() == nil {
		return escape{}, false
	}
	pkg := obj.Pkg().Path()
	name := pkg + "." + obj.Name()
	if v, ok := obj.(*types.Var); ok && !v.IsField() && v.Parent() == obj.Pkg().Scope() {
		switch name {
		case "crypto/rand.Reader":
			return escape{pos: id.Pos(), what: name, advice: adviceCrypto}, true
		case "net/http.DefaultClient":
			return escape{pos: id.Pos(), what: name, advice: adviceNet}, true
		}
		return escape{}, false
	}
	f, ok := obj.(*types.Func)
	if !ok {
		return escape{}, false
	}
	if r := recvNamed(f); r != "" {
		name = pkg + "." + r + "." + f.Name()
	}
	short := strings.TrimPrefix(strings.TrimPrefix(name, "net/"), "io/")
	switch {
	case timeEscapes[name] != "":
		return escape{pos: id.Pos(), what: short, advice: timeEscapes[name]}, true
	case (pkg == "math/rand" || pkg == "math/rand/v2") && recvNamed(f) == "" && !seededRand[f.Name()]:
		return escape{pos: id.Pos(), what: "rand." + f.Name() + " (" + pkg + ")", advice: adviceRand}, true
	case pkg == "crypto/rand":
		return escape{pos: id.Pos(), what: "crypto/rand." + f.Name(), advice: adviceCrypto}, true
	}
	return escape{}, false
}
