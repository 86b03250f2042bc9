package examples

import (
	"context"
	"fmt"

	"github.com/dosim/dosim/object"
)

// Mailer sends emails. It shows the classic mistake: Send is marked
// Retryable because it "only sends a message", yet every run sends another
// one. When the reply of a Send is lost, the stub retries, the host lets the
// marked method run again (rule S6), and the customer gets two emails. The
// storage looks the same either way apart from the counter; the trace's
// effects show the second email.
//
// The fix is the one Ledger uses: make the method idempotent (remember what
// was done under a key the caller chooses) before marking it.
type Mailer struct {
	st *object.State
}

// NewMailer is the Mailer constructor for runtime.Namespace.
func NewMailer(st *object.State) object.Object { return &Mailer{st: st} }

// Email is the payload of the "email" effect Send records.
type Email struct {
	To      string `json:"to"`      // the recipient
	Subject string `json:"subject"` // the subject line
}

// Methods lists Mailer's methods.
func (m *Mailer) Methods() object.Methods {
	return object.Methods{
		// The mistake: Send is not idempotent, yet it is marked.
		"Send": object.Retryable(m.Send),
		"Sent": object.Retryable(m.Sent),
	}
}

// Send emails subject to to and returns how many emails the mailer has
// sent so far. Each run sends one more: it is NOT safe to run twice.
func (m *Mailer) Send(ctx context.Context, to, subject string) (int, error) {
	if to == "" {
		return 0, fmt.Errorf("send: no recipient")
	}
	//dosimvet:ok planted bug: Send is marked Retryable, yet every run sends another email (see Mailer's doc)
	if err := m.st.Effect(ctx, "email", Email{To: to, Subject: subject}); err != nil {
		return 0, err
	}
	n, err := m.Sent(ctx)
	if err != nil {
		return 0, err
	}
	n++
	return n, m.st.Storage().Put(ctx, "sent", n)
}

// Sent returns how many emails the mailer has sent.
func (m *Mailer) Sent(ctx context.Context) (int, error) {
	var n int
	_, err := m.st.Storage().Get(ctx, "sent", &n)
	return n, err
}
