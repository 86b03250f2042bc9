// Package wire holds the records dosim's public packages share without
// importing each other: a call's record and its attempts (Call, Attempt),
// what a stub sends on each attempt and what comes back (Request, Reply),
// the names of the object an attempt is for (Target), and an object's
// lanes (Lane). It holds records only: an attempt in flight is the
// runtime's (its flight and its line), the retry policy the stub's, and the
// one crosses to the other as values through stub.Conn.
package wire

// Lane is one of an object's background timers. Each lane runs its work
// one turn at a time, through the object's input gate.
type Lane uint8

// The lanes of an object.
const (
	LaneAlarm    Lane = iota // the user's alarm (rule O6)
	LaneSchedule             // scheduled tasks (rule A6)
	LaneQueue                // queued tasks (rule A6)
	Lanes                    // how many lanes there are
)
