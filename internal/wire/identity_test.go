package wire

import (
	"testing"

	"github.com/google/uuid"
)

// TestS5_RenewKeepsEarlierAttemptsIdentities: a call that renews its
// identity (rule S5) keeps each earlier attempt's, and its later attempts
// carry the new one, which is the call's; a call that never renews keeps
// no table.
func TestS5_RenewKeepsEarlierAttemptsIdentities(t *testing.T) {
	a, b := uuid.UUID{1}, uuid.UUID{2}
	c := Call{ID: a}
	a1 := c.NewAttempt(0)
	if c.AttemptID(a1) != a || c.more != nil {
		t.Fatal("a call that never renewed: its one identity, and no table")
	}
	c.Renew(b)
	a2 := c.NewAttempt(1)
	a3 := c.NewAttempt(2)
	if c.ID != b || c.AttemptID(a1) != a || c.AttemptID(a2) != b || c.AttemptID(a3) != b {
		t.Fatalf("identities %v %v %v, call %v; want %v %v %v, call %v",
			c.AttemptID(a1), c.AttemptID(a2), c.AttemptID(a3), c.ID, a, b, b, b)
	}
}
