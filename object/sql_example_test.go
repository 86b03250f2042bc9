package object_test

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// Guestbook keeps its entries in the object's SQL database.
type Guestbook struct{ st *object.State }

func (g *Guestbook) Methods() object.Methods {
	return object.Methods{"Sign": object.Func(g.Sign)}
}

// Sign adds name and returns how many have signed.
func (g *Guestbook) Sign(ctx context.Context, name string) (int, error) {
	c, err := g.st.SQL().Exec(ctx, `
		CREATE TABLE IF NOT EXISTS book (name TEXT NOT NULL);
		INSERT INTO book (name) VALUES (?);
		SELECT count(*) FROM book`, name)
	if err != nil {
		return 0, err
	}
	var n int
	return n, c.One(&n)
}

// Exec runs statements with ? bindings, each atomically, and returns the
// rows of the last one.
func ExampleSQL_Exec() {
	rt := runtime.New()
	defer rt.Close()
	ns := rt.Namespace("BOOK", func(st *object.State) object.Object { return &Guestbook{st} })
	_ = rt.Run(func(ctx context.Context) error {
		s, err := ns.GetByName("lobby")
		if err != nil {
			return err
		}
		for _, who := range []string{"ada", "grace"} {
			n, err := s.Call(ctx, "Sign", who)
			fmt.Println(n, err)
		}
		return nil
	})
	// Output:
	// 1 <nil>
	// 2 <nil>
}
