package zoo

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/stub"
)

// Register holds one value. Put and Get are marked Retryable: setting a
// value twice is setting it once.
type Register struct{ st *object.State }

// Methods lists Put and Get, both marked Retryable.
func (r *Register) Methods() object.Methods {
	return object.Methods{"Put": object.Retryable(r.Put), "Get": object.Retryable(r.Get)}
}

// Put sets the value.
func (r *Register) Put(ctx context.Context, v string) error {
	return r.st.Storage().Put(ctx, "v", v)
}

// Get returns the value.
func (r *Register) Get(ctx context.Context) (string, error) {
	var v string
	_, err := r.st.Storage().Get(ctx, "v", &v)
	return v, err
}

// replicatedRead writes v2 to a primary and a backup register, then reads
// the primary, falling back to the backup when the read fails. Buggy, the
// fallback reads the backup even when its write failed: a stale value,
// but only when two faults strike at once (the backup's write and the
// primary's read both fail for good). Fixed, the caller falls back only
// to a backup whose write it saw succeed.
func replicatedRead(fixed bool) Driver {
	return func(ctx context.Context, rt *runtime.Runtime) error {
		ns := rt.Namespace("REGISTER", NewRegister)
		primary, err := ns.GetByName("primary")
		if err != nil {
			return err
		}
		backup, err := ns.GetByName("backup")
		if err != nil {
			return err
		}
		if _, err := primary.Call(ctx, "Put", "v2"); err != nil {
			return nil // the write failed; nothing was promised
		}
		_, errBackup := backup.Call(ctx, "Put", "v2")
		v, err := stub.CallAs[string](ctx, primary, "Get")
		if err != nil {
			if fixed && errBackup != nil {
				return nil // no replica known to be fresh: the read fails
			}
			v, err = readFresh(ctx, ns, "backup")
		}
		if err == nil && v != "v2" {
			return fmt.Errorf("read %q after writing v2: the stale backup answered", v)
		}
		return nil
	}
}

var twoFaults = Bug{
	Name: "two-faults", Kind: "a bug that needs two faults at once",
	Needs: "two faults: the backup's write and the primary's read both fail for good",
	Buggy: replicatedRead(false), Fixed: replicatedRead(true), FoundBy: FoundByRandom,
}

// NewRegister builds a register.
func NewRegister(st *object.State) object.Object { return &Register{st: st} }

// readFresh reads the register name through a fresh stub: one that failed
// stays broken (rule L2).
func readFresh(ctx context.Context, ns *runtime.Namespace, name string) (string, error) {
	s, err := ns.GetByName(name)
	if err != nil {
		return "", err
	}
	return stub.CallAs[string](ctx, s, "Get")
}
