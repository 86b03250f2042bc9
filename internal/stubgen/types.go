package stubgen

import (
	"fmt"
	"go/types"

	"golang.org/x/tools/go/packages"
)

// checkTypes checks that the typed stub can spell, in the class's package,
// every parameter type of sig after ctx and its first result (unless that
// is an RPC target, which the stub returns as a *stub.Stub), and that each
// can cross a call: dosim copies arguments and results as plain data
// (internal/clone), so a func, a channel or an unsafe pointer in them,
// outside a stub or an RPC target, fails every call at run time. The error
// names the parameter or result and its type.
func checkTypes(pkg *packages.Package, sig *types.Signature, target bool) error {
	p := sig.Params()
	for i := 1; i < p.Len(); i++ {
		v := p.At(i)
		if err := typeProblem(pkg, v.Type()); err != nil {
			what := fmt.Sprintf("parameter %d", i+1)
			if v.Name() != "" && v.Name() != "_" {
				what += " (" + v.Name() + ")"
			}
			return fmt.Errorf("%s of type %s: %w", what, types.TypeString(v.Type(), nil), err)
		}
	}
	if r := sig.Results(); r.Len() == 2 && !target {
		if err := typeProblem(pkg, r.At(0).Type()); err != nil {
			return fmt.Errorf("result of type %s: %w", types.TypeString(r.At(0).Type(), nil), err)
		}
	}
	return nil
}

// typeProblem says why the stub cannot type t, or nil.
func typeProblem(pkg *packages.Package, t types.Type) error {
	c := typeChecker{pkg: pkg, seen: map[types.Type]bool{}}
	return c.check(t)
}

type typeChecker struct {
	pkg  *packages.Package
	seen map[types.Type]bool // named types already walked: recursive types end
}

func (c *typeChecker) check(t types.Type) error {
	if c.seen[t] {
		return nil
	}
	if isRef(c.pkg, t) {
		return nil // a stub or an RPC target travels by reference
	}
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		c.seen[t] = true
		if err := c.named(t); err != nil {
			return err
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			if err := c.check(t.TypeArgs().At(i)); err != nil {
				return err
			}
		}
		return c.check(t.Underlying())
	case *types.TypeParam:
		return fmt.Errorf("the type parameter %s has no type outside its function; want a concrete type", t)
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return fmt.Errorf("an unsafe pointer cannot cross a call (dosim copies arguments and results as plain data)")
		}
		return nil
	case *types.Signature:
		return nil // a func crosses by reference, as the platform's function stub (rule S11)
	case *types.Chan:
		return fmt.Errorf("a channel cannot cross a call (dosim copies arguments and results as plain data)")
	case *types.Pointer:
		return c.check(t.Elem())
	case *types.Slice:
		return c.check(t.Elem())
	case *types.Array:
		return c.check(t.Elem())
	case *types.Map:
		if err := c.check(t.Key()); err != nil {
			return err
		}
		return c.check(t.Elem())
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if err := c.check(t.Field(i).Type()); err != nil {
				return fmt.Errorf("field %s: %w", t.Field(i).Name(), err)
			}
		}
	}
	return nil // interfaces: any value of them is checked when it is sent
}

// named checks that the generated file, in pkg, can name t.
func (c *typeChecker) named(t *types.Named) error {
	obj := t.Obj()
	switch {
	case obj.Pkg() == nil: // error, comparable: the universe's
		return nil
	case obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope():
		return fmt.Errorf("%s is declared inside a function, so the stub's file cannot name it; declare it at package level", obj.Name())
	case obj.Pkg() != c.pkg.Types && !obj.Exported():
		return fmt.Errorf("%s is unexported in package %s, so the stub's file cannot name it; export it or use another type", obj.Name(), obj.Pkg().Path())
	}
	return nil
}

// isRef reports whether t travels by reference: a stub (*stub.Stub) or
// an RPC target (object.Target).
func isRef(pkg *packages.Package, t types.Type) bool {
	if types.TypeString(t, nil) == "*github.com/dosim/dosim/stub.Stub" {
		return true
	}
	obj := findObject(pkg.Types)
	if obj == nil {
		return false
	}
	for _, name := range []string{"Target"} {
		tn, ok := obj.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		if iface, ok := tn.Type().Underlying().(*types.Interface); ok && types.Implements(t, iface) {
			return true
		}
	}
	return false
}
