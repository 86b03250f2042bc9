package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"

	"golang.org/x/tools/go/analysis"
)

// This file is what VirtualTime and Scheduler share: each finds escapes,
// nodes of a function that step outside the simulation, reports those of
// object code, and tells the packages that import this one, as a fact per
// function, the first escape each function reaches.

// escape is one node that steps outside the simulation.
type escape struct {
	pos    token.Pos
	what   string // "time.Now", "a go statement"
	advice string // what to do instead
}

// escapeFinder returns the escape n is, if it is one.
type escapeFinder func(info *types.Info, n ast.Node) (escape, bool)

// Reached is the fact an escape analyzer exports for a function: the first
// escape it reaches, and where. Module is the exporting package's module,
// so that only calls within one module are followed.
type Reached struct {
	Module string
	What   string // "time.Now"
	Where  string // "stamp.go:12 in Stamp"
	Advice string
}

// timeFact and schedFact are Reached for VirtualTime and for Scheduler
// (a fact type belongs to one analyzer).
type (
	timeFact  struct{ Reached }
	schedFact struct{ Reached }
)

// AFact marks timeFact as an analysis fact.
func (*timeFact) AFact() {}

// AFact marks schedFact as an analysis fact.
func (*schedFact) AFact() {}

func (f *timeFact) String() string  { return "reaches " + f.What + " at " + f.Where }
func (f *schedFact) String() string { return "reaches " + f.What + " at " + f.Where }

// reachedOf and withReached let factsOf read and make a fact type that
// holds a Reached.
func (f *timeFact) reachedOf() Reached                 { return f.Reached }
func (f *schedFact) reachedOf() Reached                { return f.Reached }
func (*timeFact) withReached(r Reached) analysis.Fact  { return &timeFact{r} }
func (*schedFact) withReached(r Reached) analysis.Fact { return &schedFact{r} }

// factKind is how runEscapes makes, reads and writes one analyzer's facts.
type factKind struct {
	read  func(pass *analysis.Pass, f *types.Func) (Reached, bool)
	write func(pass *analysis.Pass, f *types.Func, r Reached)
}

// reachedFact is a fact type that holds a Reached (timeFact, schedFact).
type reachedFact[T any] interface {
	*T
	analysis.Fact
	reachedOf() Reached
	withReached(Reached) analysis.Fact
}

// factsOf is the factKind of the fact type T.
func factsOf[T any, P reachedFact[T]]() factKind {
	return factKind{
		read: func(pass *analysis.Pass, f *types.Func) (Reached, bool) {
			fact := P(new(T))
			ok := pass.ImportObjectFact(f, fact)
			return fact.reachedOf(), ok
		},
		write: func(pass *analysis.Pass, f *types.Func, r Reached) {
			pass.ExportObjectFact(f, P(new(T)).withReached(r))
		},
	}
}

// runEscapes is the Run of an escape analyzer.
func runEscapes(pass *analysis.Pass, find escapeFinder, facts factKind) (any, error) {
	code := pass.ResultOf[ObjectCode].(*Code)
	if skipped(pass) {
		return nil, nil
	}
	direct := map[*Fn][]escape{}
	calls := map[*Fn][]escape{} // calls of other packages' functions that reach an escape
	for _, fn := range code.Funcs {
		fn.walk(func(n ast.Node) bool {
			if e, ok := find(pass.TypesInfo, n); ok {
				direct[fn] = append(direct[fn], e)
			}
			if e, ok := importedEscape(pass, n, facts); ok {
				calls[fn] = append(calls[fn], e)
			}
			return true
		})
	}
	exportEscapes(pass, code, direct, calls, facts)
	r := newReporter(pass)
	for _, fn := range code.Reached {
		for _, e := range append(direct[fn], calls[fn]...) {
			r.reportf(e.pos, "%s in object code (reached from %s): %s", e.what, fn.Via, e.advice)
		}
	}
	return nil, nil
}

// importedEscape is the escape a reference to another package's function
// reaches, from that package's fact.
func importedEscape(pass *analysis.Pass, n ast.Node, facts factKind) (escape, bool) {
	id, ok := n.(*ast.Ident)
	if !ok {
		return escape{}, false
	}
	f, ok := pass.TypesInfo.Uses[id].(*types.Func)
	if !ok || f.Pkg() == nil || f.Pkg() == pass.Pkg || dosimAPI(f.Pkg().Path()) {
		return escape{}, false
	}
	got, ok := facts.read(pass, f.Origin())
	if !ok || got.Module != moduleOf(pass) {
		return escape{}, false
	}
	return escape{
		pos:    id.Pos(),
		what:   fmt.Sprintf("%s, which reaches %s (%s),", funcName(f), got.What, got.Where),
		advice: got.Advice,
	}, true
}

// exportEscapes exports, for each declared function of the package, the
// first escape it reaches.
func exportEscapes(pass *analysis.Pass, code *Code, direct, calls map[*Fn][]escape, facts factKind) {
	memo := map[*Fn]*Reached{}
	var first func(fn *Fn, depth int) *Reached
	first = func(fn *Fn, depth int) *Reached {
		if r, ok := memo[fn]; ok {
			return r
		}
		memo[fn] = nil // a cycle reaches nothing more
		var r *Reached
		if es := append(direct[fn], calls[fn]...); len(es) > 0 {
			e := es[0]
			p := pass.Fset.Position(e.pos)
			r = &Reached{Module: moduleOf(pass), What: calledWhat(e.what), Advice: e.advice,
				Where: fmt.Sprintf("%s:%d in %s", filepath.Base(p.Filename), p.Line, fn.Name)}
		}
		for _, to := range fn.refs {
			if r != nil || depth > 64 {
				break
			}
			r = first(to, depth+1)
		}
		memo[fn] = r
		return r
	}
	for _, fn := range code.Funcs {
		d, ok := fn.Node.(*ast.FuncDecl)
		if !ok {
			continue
		}
		obj, ok := pass.TypesInfo.Defs[d.Name].(*types.Func)
		if !ok {
			continue
		}
		if r := first(fn, 0); r != nil {
			facts.write(pass, obj, *r)
		}
	}
}

// calledWhat trims the trailing comma importedEscape leaves in a what.
func calledWhat(what string) string {
	if n := len(what); n > 0 && what[n-1] == ',' {
		return what[:n-1]
	}
	return what
}
