package examples_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// Guestbook is docs/objects.md's ten-line SQL object, kept here so that it
// compiles and runs (rules Q1, Q4).
type Guestbook struct{ st *object.State }

func (g *Guestbook) Methods() object.Methods { return object.Methods{"Sign": object.Func(g.Sign)} }

func (g *Guestbook) Sign(ctx context.Context, name string) (int, error) {
	c, err := g.st.SQL().Exec(ctx, `CREATE TABLE IF NOT EXISTS book (name TEXT NOT NULL);
		INSERT INTO book (name) VALUES (?); SELECT count(*) FROM book`, name)
	if err != nil {
		return 0, err // bad SQL: ErrSQL with SQLite's message, a Remote error to the caller
	}
	var n int
	return n, c.One(&n)
}

// docs/objects.md's SQL object: each signature is a row, counted by SQL.
func Example_guestbook() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("GUESTBOOK", func(st *object.State) object.Object { return &Guestbook{st: st} })
	err := rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("hall")
		if err != nil {
			return err
		}
		for _, name := range []string{"ada", "grace"} {
			n, err := s.Call(ctx, "Sign", name)
			if err != nil {
				return err
			}
			fmt.Println(name, "signed; signatures:", n)
		}
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// ada signed; signatures: 1
	// grace signed; signatures: 2
	// error: <nil>
}
