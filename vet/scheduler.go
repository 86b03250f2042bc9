package vet

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// Scheduler reports object code that blocks or runs outside dosim's
// cooperative scheduler: rule H1's list, which the watchdog finds only
// when a run stalls past its limit.
var Scheduler = &analysis.Analyzer{
	Name: "scheduler",
	Doc: `report goroutines, channels, select, locks and waits in dosim object code

One task runs at a time and yields only at a simulation blocking point
(st.Sleep, a stub call, storage, Promise.Await). A go statement, a channel
send or receive, select, a sync.Mutex or RWMutex lock, sync.WaitGroup.Wait,
sync.Cond.Wait, a spin on a sync/atomic load, runtime.Gosched and
runtime.Goexit step outside it (rule H1): the watchdog ends such a run only
once it stalls past its limit, and a short block is never caught.`,
	Requires:  []*analysis.Analyzer{ObjectCode},
	FactTypes: []analysis.Fact{new(schedFact)},
	Run: func(pass *analysis.Pass) (any, error) {
		return runEscapes(pass, findSchedEscape, factsOf[schedFact]())
	},
}

// The replacements Scheduler's reports name.
const (
	adviceGo      = "a goroutine runs outside the scheduler (rule H1): it cannot call a stub (ErrNotInTask) and when it runs depends on the machine; start concurrent calls with s.Start and Await them in the turn"
	adviceChan    = "it blocks outside the scheduler and the watchdog ends the run (rule H1): wait with st.Sleep, a stub call or Promise.Await"
	adviceLock    = "a turn runs alone already (rule O3) and a lock held across a blocking point blocks outside the scheduler (rule H1): drop the lock, or use st.BlockConcurrencyWhile"
	adviceWait    = "it blocks outside the scheduler (rule H1): start concurrent calls with s.Start and wait with Promise.Await"
	adviceSpin    = "a spin-wait never lets another task run (rule H1): wait with st.Sleep, a stub call or Promise.Await"
	adviceGoexit  = "it ends the task and fails the run (rule H1): return an error instead"
	adviceGosched = "it yields the goroutine, not the task: nothing else in the simulation runs; use st.Sleep(ctx, d)"
)

// schedMethods maps pkg.Recv.Name to advice.
var schedMethods = map[string]string{
	"sync.Mutex.Lock": adviceLock, "sync.RWMutex.Lock": adviceLock, "sync.RWMutex.RLock": adviceLock,
	"sync.Locker.Lock": adviceLock, "sync.WaitGroup.Wait": adviceWait, "sync.Cond.Wait": adviceWait,
}

// findSchedEscape is Scheduler's escapeFinder.
func findSchedEscape(info *types.Info, n ast.Node) (escape, bool) {
	switch x := n.(type) {
	case *ast.GoStmt:
		return escape{pos: x.Go, what: "a go statement", advice: adviceGo}, true
	case *ast.SendStmt:
		return escape{pos: x.Arrow, what: "a channel send", advice: adviceChan}, true
	case *ast.UnaryExpr:
		if x.Op == token.ARROW {
			return escape{pos: x.OpPos, what: "a channel receive", advice: adviceChan}, true
		}
	case *ast.SelectStmt:
		return escape{pos: x.Select, what: "a select", advice: adviceChan}, true
	case *ast.RangeStmt:
		if _, ok := types.Unalias(info.TypeOf(x.X)).Underlying().(*types.Chan); ok {
			return escape{pos: x.For, what: "a range over a channel", advice: adviceChan}, true
		}
	case *ast.ForStmt:
		if x.Cond != nil && atomicLoad(info, x.Cond) {
			return escape{pos: x.For, what: "a spin-wait on a sync/atomic load", advice: adviceSpin}, true
		}
	case *ast.Ident:
		f, ok := info.Uses[x].(*types.Func)
		if !ok || f.Pkg() == nil {
			return escape{}, false
		}
		switch {
		case isFunc(f, "runtime", "Goexit"):
			return escape{pos: x.Pos(), what: "runtime.Goexit", advice: adviceGoexit}, true
		case isFunc(f, "runtime", "Gosched"):
			return escape{pos: x.Pos(), what: "runtime.Gosched", advice: adviceGosched}, true
		}
		name := f.Pkg().Path() + "." + recvNamed(f) + "." + f.Name()
		if a := schedMethods[name]; a != "" {
			return escape{pos: x.Pos(), what: name, advice: a}, true
		}
	}
	return escape{}, false
}

// atomicLoad reports whether e calls a sync/atomic load.
func atomicLoad(info *types.Info, e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		if f := callee(info, call); f != nil && f.Pkg() != nil && f.Pkg().Path() == "sync/atomic" &&
			(f.Name() == "Load" || len(f.Name()) > 4 && f.Name()[:4] == "Load") {
			found = true
		}
		return !found
	})
	return found
}
