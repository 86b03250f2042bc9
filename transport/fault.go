package transport

import (
	"errors"
	"fmt"
	"strings"
)

// Fault is what the simulated link does to one attempt. What each fault
// means (its Stage, whether it is Ambiguous or Retryable, its Message) is
// written once, in one table of this file.
type Fault uint8

// The faults, by the stage at which the link fails.
const (
	// None delivers the request and its reply.
	None Fault = iota
	// NotDelivered: the request never reached the object (restarting or
	// moving), and the caller can tell. Retryable.
	NotDelivered
	// LoseRequest: the request was lost before the object; the caller cannot
	// tell whether it arrived. Retryable.
	LoseRequest
	// LoseWhileRunning: the request reached the object and the link broke
	// while the method ran; the method runs to its end. Retryable.
	LoseWhileRunning
	// LoseResponse: the method finished and its reply was lost. Retryable.
	LoseResponse
	// Overloaded: the object refused the request as overloaded. Never retried.
	Overloaded
	// FailAfterDelivery: the request reached the object, which was then
	// reset (in-memory fields lost, storage kept); the caller is told. Never
	// retried.
	FailAfterDelivery
	// Reset: the object is reset as the method starts, for a reason
	// (Rule.Reason, rule L3): the caller is told at once with the
	// platform's message and does not retry; the method runs on to its end
	// on the stale instance, whose storage refuses it (rule L4); requests
	// queued behind it fail with the same error and are not retried.
	Reset
	// StorageWriteFails: the request reaches the object and runs, and the
	// storage writes pending at the turn's first release point (its reply,
	// an outgoing call, Storage.Sync) fail to become durable (rule L7):
	// they vanish, the object is reset for ResetStorage, and the held
	// reply or call is discarded: the caller is told the reset's message
	// and does not retry. A turn with no write pending at a release point
	// is untouched (its record shows no fault). A write made with
	// AllowUnconfirmed does not hold the reply: it goes, and then the
	// write is lost.
	StorageWriteFails
	// DropConnection strikes a WebSocket connection, not an attempt
	// (Stage OnConnection): as a message is sent either way, the
	// connection drops. That message and every one still on its wire
	// either way are lost; the client's end ends with 1006, the object's
	// WebSocketClose gets 1006 and wasClean false (rule W5). The sender
	// cannot tell whether what it sent before was handled. It is drawn
	// per message at its rate (FaultPlan.DropsConnection), from a hash of
	// its own, so a run's attempts draw as they would without it; it is
	// given as a rate, never in a rule.
	DropConnection

	numFaults
)

// Stage is where on an attempt's way a fault strikes. The stages are in
// the order an attempt passes them.
type Stage uint8

// The stages.
const (
	// Nowhere: the link does not fail; the request and its reply travel
	// (a StorageWriteFails fault strikes in the object's storage).
	Nowhere Stage = iota
	// BeforeObject: the request never reaches the object; no code runs.
	BeforeObject
	// WhileRunning: the request reaches the object and the link breaks as
	// the method starts. The caller learns of the fault at once; the method
	// runs to its end, and its reply goes nowhere.
	WhileRunning
	// AtReply: the method runs to its end and the fault replaces its
	// reply: the caller learns of the fault, not of the method's result.
	AtReply
	// OnConnection: not on an attempt's way but on a WebSocket
	// connection's, as a message is sent (DropConnection).
	OnConnection
)

var stageNames = [...]string{
	Nowhere:      "nowhere",
	BeforeObject: "before the object",
	WhileRunning: "while running",
	AtReply:      "at the reply",
	OnConnection: "on a connection",
}

// String names the stage for a person ("before the object").
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return fmt.Sprintf("stage(%d)", uint8(s))
}

// faultInfo is what one fault means (rules S3, S4 of the design).
type faultInfo struct {
	name  string // as scenarios spell it
	stage Stage  // where it strikes
	// ambiguous: the caller cannot tell whether the request arrived.
	ambiguous bool
	// retryable: the error it causes is marked retryable (S3).
	retryable bool
	// resets: the object is reset before the reply (in-memory state lost,
	// storage kept, rule O4).
	resets bool
	// message is what the caller learns, for a person.
	message string
}

// faults is the link's table: one row per fault.
var faults = [numFaults]faultInfo{
	None: {name: "none", stage: Nowhere,
		message: "failed (none)"},
	NotDelivered: {name: "not-delivered", stage: BeforeObject, retryable: true,
		message: "not delivered (not-delivered): the object was restarting or moving; the request never reached it"},
	LoseRequest: {name: "lose-request", stage: BeforeObject, ambiguous: true, retryable: true,
		message: "connection lost (lose-request): the caller cannot tell whether the request reached the object (it did not)"},
	LoseWhileRunning: {name: "lose-while-running", stage: WhileRunning, ambiguous: true, retryable: true,
		message: "connection lost while the method ran (lose-while-running): the caller cannot tell whether it ran (it runs to its end)"},
	LoseResponse: {name: "lose-response", stage: AtReply, ambiguous: true, retryable: true,
		message: "reply lost (lose-response): the caller cannot tell whether the method ran (it did)"},
	Overloaded: {name: "overloaded", stage: BeforeObject,
		message: "Durable Object is overloaded. Too many requests queued."}, // the platform's words (real workerd 1.20261117.1)
	FailAfterDelivery: {name: "fail-after-delivery", stage: AtReply, resets: true,
		message: "object reset after delivery (fail-after-delivery): its in-memory state was lost"},
	Reset: {name: "reset", stage: WhileRunning, resets: true,
		message: "object reset (reset): " + ResetCodeUpdate.Message()},
	StorageWriteFails: {name: "storage-write-fails", stage: Nowhere, resets: true,
		message: "storage write failed (storage-write-fails): " + ResetStorage.Message()},
	DropConnection: {name: "drop-connection", stage: OnConnection, ambiguous: true,
		message: "connection dropped (drop-connection): the WebSocket closed with 1006; what was on its wire either way is lost"},
}

// faultNames lists the names in Fault order, for error messages.
var faultNames = func() []string {
	out := make([]string, numFaults)
	for i, f := range faults {
		out[i] = f.name
	}
	return out
}()

// info returns f's row; a fault outside the table means no fault.
func (f Fault) info() *faultInfo {
	if f < numFaults {
		return &faults[f]
	}
	return &faults[None]
}

// Faults lists every fault but None, in declaration order.
func Faults() []Fault {
	out := make([]Fault, 0, numFaults-1)
	for f := NotDelivered; f < numFaults; f++ {
		out = append(out, f)
	}
	return out
}

// AttemptFaults lists the faults that strike an attempt (every fault but
// None and the connection faults), in declaration order: what a rule may
// name.
func AttemptFaults() []Fault {
	out := make([]Fault, 0, numFaults-1)
	for _, f := range Faults() {
		if !f.OnConnection() {
			out = append(out, f)
		}
	}
	return out
}

// String returns the fault's name as scenarios spell it (lose-response).
func (f Fault) String() string {
	if f < numFaults {
		return faults[f].name
	}
	return fmt.Sprintf("fault(%d)", uint8(f))
}

// ErrUnknownFault is wrapped by ParseFault's error.
var ErrUnknownFault = errors.New("unknown fault")

// ParseFault reads a fault name as String writes it.
func ParseFault(s string) (Fault, error) {
	for i, n := range faultNames {
		if s == n {
			return Fault(i), nil
		}
	}
	return None, fmt.Errorf("%w %q: allowed are %s", ErrUnknownFault, s, strings.Join(faultNames, ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (f Fault) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Fault) UnmarshalText(b []byte) error {
	v, err := ParseFault(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// Stage says where the fault strikes: BeforeObject (the request never
// reaches the object), WhileRunning, AtReply, OnConnection for a
// WebSocket's fault, or Nowhere for None.
func (f Fault) Stage() Stage { return f.info().stage }

// OnConnection reports whether the fault strikes a WebSocket connection
// rather than an attempt (DropConnection): it is drawn per message at its
// rate, never for an attempt, and a rule cannot name it.
func (f Fault) OnConnection() bool { return f.info().stage == OnConnection }

// Reaches reports whether an attempt with this fault reaches the object.
func (f Fault) Reaches() bool { return f.info().stage != BeforeObject }

// Ambiguous reports whether the caller cannot tell if the request arrived.
func (f Fault) Ambiguous() bool { return f.info().ambiguous }

// Retryable reports whether the error the fault causes is marked retryable
// (rule S3): the request never reached the object and the caller is told
// so, or the caller cannot tell whether it did.
func (f Fault) Retryable() bool { return f.info().retryable }

// Resets reports whether the object is reset (in-memory state lost,
// storage kept) before the fault replaces its reply.
func (f Fault) Resets() bool { return f.info().resets }

// Message says what the caller learns of the fault, for a person: what
// happened, the fault's name in parentheses, and what it means
// ("reply lost (lose-response): the caller cannot tell whether the method
// ran (it did)").
func (f Fault) Message() string {
	if f >= numFaults {
		return "failed (" + f.String() + ")"
	}
	return faults[f].message
}

// LinkText says what the link did to an attempt that had this fault, as a
// record shows it: "delivered", "in flight" (not arrived yet), "cancelled
// in flight" (a retry the caller gave up on before it arrived, which
// never arrives, rule S9), or the fault's name, with ", cancelled" when
// the caller stopped waiting.
func (f Fault) LinkText(delivered, cancelled bool) string {
	s := f.String()
	if f == None {
		s = "delivered"
		if !delivered {
			if cancelled {
				return "cancelled in flight"
			}
			s = "in flight"
		}
	}
	if cancelled {
		s += ", cancelled"
	}
	return s
}
