package examples

import (
	"sort"

	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
)

// The typed stubs of the example classes (examples_stub.go: BoothStub,
// NewBoothStub, FreshBoothStub, and so for each class) are written by
// dosim-gen from their Methods; go generate rewrites them, and a test fails
// when they are stale. A package of many classes keeps the class in each
// name; a package of one class takes -name Stub (see examples/wallet).
//go:generate go run github.com/dosim/dosim/cmd/dosim-gen -type Booth,Bucket,Chat,Chores,Counter,Inventory,Ledger,Mailer,Outbox,Seats,Session,Tally -output examples_stub.go

// Class is a built-in example class: what a scenario's namespace can be
// bound to by name.
type Class struct {
	// Name is how scenarios spell the class: "inventory".
	Name string
	// Doc says in one line what the class shows.
	Doc string
	// New is the class's constructor.
	New runtime.Constructor
	// Samples are example calls of its methods, by name: what dosim verify
	// runs when it is given no arguments.
	Samples map[string]Sample
}

// Sample is an example call of a method: its arguments, and the storage
// the object starts from. Every built-in class also gives its samples as
// an object.Sampler, the way a class of yours can.
type Sample = object.Sample

// The built-in classes' samples: what dosim verify tries.
var (
	bucketSamples = map[string]Sample{"Size": {}}
	chatSamples   = map[string]Sample{"Members": {}}
	boothSamples  = map[string]Sample{
		"Hold":    {Args: []any{"ada-1", 1, "ada"}},
		"Pay":     {Args: []any{"ada-1"}, Storage: boothHeld},
		"Confirm": {Args: []any{"ada-1"}},
		"Holder":  {Args: []any{1}, Storage: boothHeld},
	}
	// boothHeld is a booth where ada holds seat 1 under key ada-1 until a
	// quarter past the epoch, unpaid, as Storage.Snapshot writes an SQL
	// table.
	boothHeld = map[string]any{object.SQLSnapshotPrefix + "holds": map[string]any{
		"type":    "table",
		"schema":  boothSchema,
		"columns": []any{"key", "seat", "holder", "until", "paid", "answer"},
		"rows":    []any{[]any{"ada-1", 1, "ada", "2025-01-01 00:15:00", 0, "seat 1 held by ada until 2025-01-01 00:15:00"}},
	}}
	choresSamples = map[string]Sample{
		"Poison": {Args: []any{false}}, "Deliver": {Args: []any{Parcel{Fine: true}}}, "Watch": {Args: []any{2}}, "WatchForever": {},
		"Sprout": {}, "Grow": {}, "Tend": {}, "Sweep": {}, "Swept": {}, "Kick": {}, "KickOnce": {}, "Arm": {},
	}
	counterSamples   = map[string]Sample{"Increment": {}, "Get": {}, "Reset": {}}
	inventorySamples = map[string]Sample{
		"SetQuantity": {Args: []any{"apple", 3}},
		"AddOne":      {Args: []any{"apple"}, Storage: map[string]any{"apple": 2}},
		"Get":         {Args: []any{"apple"}, Storage: map[string]any{"apple": 2}},
	}
	ledgerSamples = map[string]Sample{
		"Deposit":  {Args: []any{"alice", 100}},
		"Transfer": {Args: []any{"order-42", "alice", "bob", 30}, Storage: map[string]any{"balance/alice": 100}},
		"Balance":  {Args: []any{"alice"}, Storage: map[string]any{"balance/alice": 100}},
	}
	mailerSamples = map[string]Sample{
		"Send": {Args: []any{"ada@example.com", "Your order has shipped"}},
		"Sent": {},
	}
	outboxSamples = map[string]Sample{
		"Post":      {Args: []any{"https://example.com/hook", "hello"}},
		"Deliver":   {Args: []any{Webhook{URL: "https://example.com/hook", Body: "hello"}}},
		"Delivered": {},
	}
	tallySamples = map[string]Sample{"Vote": {}, "VoteFast": {}, "Votes": {Storage: map[string]any{"votes": 2}}}
	seatsSamples = map[string]Sample{
		"Book":   {Args: []any{"b-1", 3, "alice"}},
		"Cancel": {Args: []any{"b-1"}, Storage: seatsBooked},
		"Holder": {Args: []any{3}, Storage: seatsBooked},
		"Booked": {Storage: seatsBooked},
	}
	// seatsBooked is a seat map where alice holds seat 3 under booking
	// b-1, as Storage.Snapshot writes an SQL table.
	seatsBooked = map[string]any{object.SQLSnapshotPrefix + "seats": map[string]any{
		"type":    "table",
		"schema":  seatsSchema,
		"columns": []any{"seat", "holder", "booking"},
		"rows":    []any{[]any{3, "alice", "b-1"}},
	}}
	sessionSamples = map[string]Sample{"Hit": {}, "HitsCached": {}, "Hits": {Storage: map[string]any{"hits": 2}}}
)

// VerifySamples returns the booth's sample calls (object.Sampler).
func (*Booth) VerifySamples() map[string]Sample { return boothSamples }

// VerifySamples returns the bucket's sample calls (object.Sampler).
func (*Bucket) VerifySamples() map[string]Sample { return bucketSamples }

// VerifySamples returns the chat room's sample calls (object.Sampler).
func (*Chat) VerifySamples() map[string]Sample { return chatSamples }

// VerifySamples returns the chores' sample calls (object.Sampler).
func (*Chores) VerifySamples() map[string]Sample { return choresSamples }

// VerifySamples returns the counter's sample calls (object.Sampler).
func (*Counter) VerifySamples() map[string]Sample { return counterSamples }

// VerifySamples returns the inventory's sample calls (object.Sampler).
func (*Inventory) VerifySamples() map[string]Sample { return inventorySamples }

// VerifySamples returns the ledger's sample calls (object.Sampler).
func (*Ledger) VerifySamples() map[string]Sample { return ledgerSamples }

// VerifySamples returns the mailer's sample calls (object.Sampler).
func (*Mailer) VerifySamples() map[string]Sample { return mailerSamples }

// VerifySamples returns the outbox's sample calls (object.Sampler).
func (*Outbox) VerifySamples() map[string]Sample { return outboxSamples }

// VerifySamples returns the seat map's sample calls (object.Sampler).
func (*Seats) VerifySamples() map[string]Sample { return seatsSamples }

// VerifySamples gives verify the arguments and storage to try Session's methods with.
func (*Session) VerifySamples() map[string]Sample { return sessionSamples }

// VerifySamples gives verify the arguments and storage to try Tally's methods with.
func (*Tally) VerifySamples() map[string]Sample { return tallySamples }

// classes returns the built-in classes, sorted by name: a function, not a
// package variable, so that a program importing package examples for one
// name (cli does, for WithBuiltInClasses) links no class it never asks for.
func classes() []Class {
	return []Class{
		{Name: "booth", Doc: "a ticket booth in SQL: Hold and Pay marked Retryable and idempotent by their keys, holds that run out (datetime('now')), an alarm that releases them, a confirmation queued after each payment (rules C1, C2)", New: NewBooth,
			Samples: boothSamples},
		{Name: "booth-leaky", Doc: "booth with a planted bug: its marked Pay charges before it looks whether the hold is paid, so a retry charges the card again", New: NewBoothLeaky,
			Samples: boothSamples},
		{Name: "bucket", Doc: "a blob store served by a fetch handler (http.Handler): PUT, GET, DELETE /NAME", New: NewBucket,
			Samples: bucketSamples},
		{Name: "chat", Doc: "a chat room of WebSockets after the platform's hibernation example: GET /join?name=NAME connects a member (its name in the socket's attachment), each message is broadcast to every member, a leave is announced (rules W1-W5)", New: NewChat,
			Samples: chatSamples},
		{Name: "chores", Doc: "background work that never settles, each beside its fix: a queue that never drains (Poison(true)), an alarm that re-arms for ever (WatchForever), schedules that keep growing (Sprout), an alarm retried for ever (Kick); rule C8", New: NewChores,
			Samples: choresSamples},
		{Name: "counter", Doc: "Increment (not marked), Get and Reset (marked Retryable)", New: NewCounter,
			Samples: counterSamples},
		{Name: "inventory", Doc: "SetQuantity (marked Retryable), AddOne (not marked), Get", New: NewInventory,
			Samples: inventorySamples},
		{Name: "ledger", Doc: "Transfer made safe to retry by an idempotency key (the fix), Deposit (not marked), Balance", New: NewLedger,
			Samples: ledgerSamples},
		{Name: "mailer", Doc: "Send marked Retryable although each run sends another email (the classic mistake)", New: NewMailer,
			Samples: mailerSamples},
		{Name: "outbox", Doc: "Post queues a webhook; the queue retries Deliver with backoff and dead-letters what fails (rule A6)", New: NewOutbox,
			Samples: outboxSamples},
		{Name: "seats", Doc: "a seat map in SQL (UNIQUE seat): Book marked Retryable and idempotent by its booking id, Cancel, Holder, Booked", New: NewSeats,
			Samples: seatsSamples},
		{Name: "seats-leaky", Doc: "seats with a planted bug: Book marked Retryable inserts without its booking id, so a retry fails on UNIQUE", New: NewSeatsLeaky,
			Samples: seatsSamples},
		{Name: "session", Doc: "Hit counts in storage and in a field cache; HitsCached trusts the cache (wrong after an eviction), Hits reloads it (the fix)", New: NewSession,
			Samples: sessionSamples},
		{Name: "tally", Doc: "Vote replies once its write is durable (the output gate); VoteFast replies before (AllowUnconfirmed: a lost write the caller was told succeeded)", New: NewTally,
			Samples: tallySamples},
	}
}

// Classes returns the built-in classes, sorted by name.
func Classes() []Class { return classes() }

// LookupClass returns the built-in class called name.
func LookupClass(name string) (Class, bool) {
	classes := classes()
	i := sort.Search(len(classes), func(i int) bool { return classes[i].Name >= name })
	if i < len(classes) && classes[i].Name == name {
		return classes[i], true
	}
	return Class{}, false
}

// ClassNames returns the names of the built-in classes, sorted.
func ClassNames() []string {
	classes := classes()
	out := make([]string, len(classes))
	for i, c := range classes {
		out[i] = c.Name
	}
	return out
}

// Constructors returns the built-in classes as a registry, a constructor
// per class name: what dosim gives scenario.WithBuiltInClasses, and what
// a program of yours can merge its own classes into. The map is new on
// every call.
func Constructors() map[string]runtime.Constructor {
	classes := classes()
	out := make(map[string]runtime.Constructor, len(classes))
	for _, c := range classes {
		out[c.Name] = c.New
	}
	return out
}
