package maporder

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/dosim/dosim/object"
)

type Roster struct {
	st    *object.State
	names map[string]int
}

func (r *Roster) Methods() object.Methods {
	return object.Methods{
		"Names":    object.Func(r.Names),
		"Sorted":   object.Func(r.Sorted),
		"Keys":     object.Func(r.Keys),
		"Save":     object.Func(r.Save),
		"Announce": object.Func(r.Announce),
		"Total":    object.Func(r.Total),
		"Joined":   object.Func(r.Joined),
		"Quiet":    object.Func(r.Quiet),
	}
}

func (r *Roster) Names(ctx context.Context) ([]string, error) {
	var out []string
	for name := range r.names { // want `range over a map builds out, which is returned with no sort of it`
		out = append(out, name)
	}
	return out, nil
}

func (r *Roster) Sorted(ctx context.Context) ([]string, error) {
	var out []string
	for name := range r.names {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

func (r *Roster) Keys(ctx context.Context) ([]string, error) {
	out := []string{}
	for _, name := range slices.Sorted(maps.Keys(r.names)) {
		out = append(out, name)
	}
	return out, nil
}

func (r *Roster) Save(ctx context.Context) error {
	var keys []string
	for name := range r.names { // want `range over a map builds keys, which is stored or sent with no sort of it`
		keys = append(keys, "name/"+name)
	}
	return r.st.Storage().Put(ctx, "index", keys)
}

func (r *Roster) Announce(ctx context.Context) error {
	for name := range r.names { // want `range over a map calls object.State.Effect in map order`
		if err := r.st.Effect(ctx, "email", name); err != nil {
			return err
		}
	}
	return nil
}

// Total's order does not matter: a sum is the same in any order.
func (r *Roster) Total(ctx context.Context) (int, error) {
	n := 0
	for _, v := range r.names {
		n += v
	}
	return n, nil
}

func (r *Roster) Joined(ctx context.Context) (s string, err error) {
	for name := range r.names { // want `range over a map builds s, which is returned`
		s += name + ","
	}
	return s, nil
}

func (r *Roster) Quiet(ctx context.Context) ([]string, error) {
	var out []string
	//dosimvet:ok the caller sorts: documented in the method's contract
	for name := range r.names {
		out = append(out, name)
	}
	return out, nil
}

// List is not object code: map order is not the simulation's business here.
func List(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
