package examples

import (
	"context"
	"errors"
	"fmt"

	"github.com/dosim/dosim/object"
)

// Seats is a seat map kept in the object's SQL database (rules Q1-Q4): a
// table of seats with a UNIQUE constraint on the seat, one row per
// booking. Book is marked Retryable and is idempotent by its booking id:
// a retry of a booking that was made finds it and answers the same. Cancel
// is idempotent too, in its answer as in its effect: a tombstone remembers
// each booking it cancelled, so the retry of a cancel whose reply was lost
// answers true again, not false (an idempotency key must remember the
// answer, not only the fact). Holder and Booked only read.
type Seats struct {
	st    *object.State
	ready bool // the seats table exists (a field: a new instance checks again)
	tombs bool // the cancelled table exists (likewise)
}

// NewSeats is the Seats constructor for runtime.Namespace.
func NewSeats(st *object.State) object.Object { return &Seats{st: st} }

// Methods lists Seats' methods.
func (s *Seats) Methods() object.Methods {
	return object.Methods{
		"Book":   object.Retryable(s.Book),
		"Cancel": object.Retryable(s.Cancel),
		"Holder": object.Retryable(s.Holder),
		"Booked": object.Retryable(s.Booked),
	}
}

// ErrSeatTaken is returned by Book for a seat another booking holds.
var ErrSeatTaken = errors.New("seat taken")

const seatsSchema = `CREATE TABLE IF NOT EXISTS seats (
	seat    INTEGER NOT NULL UNIQUE,
	holder  TEXT NOT NULL,
	booking TEXT UNIQUE
)`

// cancelledSchema is Cancel's tombstones: the bookings it cancelled. Cancel
// makes the table on its first run, so an object never cancelled has none.
const cancelledSchema = `CREATE TABLE IF NOT EXISTS cancelled (booking TEXT PRIMARY KEY)`

func (s *Seats) db(ctx context.Context) (*object.SQL, error) {
	db := s.st.SQL()
	if !s.ready {
		if _, err := db.Exec(ctx, seatsSchema); err != nil {
			return nil, err
		}
		s.ready = true
	}
	return db, nil
}

// Book books seat for holder under bookingID and returns "seat N: holder".
// Booking again with the same id (a retry) returns the same answer and
// writes nothing; a seat booked under another id is ErrSeatTaken.
func (s *Seats) Book(ctx context.Context, bookingID string, seat int, holder string) (string, error) {
	db, err := s.db(ctx)
	if err != nil {
		return "", err
	}
	var out string
	err = db.Transaction(ctx, func(ctx context.Context, tx *object.SQL) error {
		c, err := tx.Exec(ctx, "SELECT seat, holder FROM seats WHERE booking = ?", bookingID)
		if err != nil {
			return err
		}
		var b struct {
			Seat   int
			Holder string
		}
		if c.Len() == 1 {
			if err := c.One(&b); err != nil {
				return err
			}
			out = fmt.Sprintf("seat %d: %s", b.Seat, b.Holder)
			return nil
		}
		c, err = tx.Exec(ctx, "SELECT holder FROM seats WHERE seat = ?", seat)
		if err != nil {
			return err
		}
		if c.Len() > 0 {
			return fmt.Errorf("%w: seat %d", ErrSeatTaken, seat)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO seats (seat, holder, booking) VALUES (?, ?, ?)", seat, holder, bookingID); err != nil {
			return err
		}
		out = fmt.Sprintf("seat %d: %s", seat, holder)
		return nil
	})
	return out, err
}

// Cancel deletes the booking bookingID and reports whether there was one
// to cancel: true when it deletes it now or cancelled it before (its
// tombstone says so), false for an id with no booking and no tombstone.
// Running it again for one request (a retry after a lost reply) answers
// the same and writes nothing. A booking id booked again after its cancel
// is cancelled again.
func (s *Seats) Cancel(ctx context.Context, bookingID string) (bool, error) {
	db, err := s.db(ctx)
	if err != nil {
		return false, err
	}
	if !s.tombs {
		if _, err := db.Exec(ctx, cancelledSchema); err != nil {
			return false, err
		}
		s.tombs = true
	}
	var existed bool
	err = db.Transaction(ctx, func(ctx context.Context, tx *object.SQL) error {
		c, err := tx.Exec(ctx, "DELETE FROM seats WHERE booking = ?", bookingID)
		if err != nil {
			return err
		}
		if c.RowsWritten > 0 {
			existed = true
			_, err = tx.Exec(ctx, "INSERT OR IGNORE INTO cancelled (booking) VALUES (?)", bookingID)
			return err
		}
		if c, err = tx.Exec(ctx, "SELECT 1 FROM cancelled WHERE booking = ?", bookingID); err != nil {
			return err
		}
		existed = c.Len() > 0
		return nil
	})
	return existed, err
}

// Holder returns who holds seat ("" if nobody).
func (s *Seats) Holder(ctx context.Context, seat int) (string, error) {
	db, err := s.db(ctx)
	if err != nil {
		return "", err
	}
	c, err := db.Exec(ctx, "SELECT holder FROM seats WHERE seat = ?", seat)
	if err != nil || c.Len() == 0 {
		return "", err
	}
	var h string
	return h, c.One(&h)
}

// Booked returns the number of booked seats.
func (s *Seats) Booked(ctx context.Context) (int, error) {
	db, err := s.db(ctx)
	if err != nil {
		return 0, err
	}
	c, err := db.Exec(ctx, "SELECT count(*) FROM seats")
	if err != nil {
		return 0, err
	}
	var n int
	return n, c.One(&n)
}

// SeatsLeaky is Seats with a planted bug: its Book is marked Retryable
// but inserts without looking for its booking id, so a retry of a booking
// that was made (its reply lost) fails on the UNIQUE constraint: the
// caller is told the seat is taken while the booking is its own.
type SeatsLeaky struct{ Seats }

// NewSeatsLeaky is the SeatsLeaky constructor for runtime.Namespace.
func NewSeatsLeaky(st *object.State) object.Object { return &SeatsLeaky{Seats{st: st}} }

// Methods lists SeatsLeaky's methods: Seats' with the leaky Book.
func (s *SeatsLeaky) Methods() object.Methods {
	ms := s.Seats.Methods()
	ms["Book"] = object.Retryable(s.Book)
	return ms
}

// Book inserts the booking; a seat already booked, by anyone, fails with
// SQLite's UNIQUE constraint error (the planted bug: a retry of its own
// booking fails too).
func (s *SeatsLeaky) Book(ctx context.Context, bookingID string, seat int, holder string) (string, error) {
	db, err := s.db(ctx)
	if err != nil {
		return "", err
	}
	if _, err := db.Exec(ctx, "INSERT INTO seats (seat, holder, booking) VALUES (?, ?, ?)", seat, holder, bookingID); err != nil {
		return "", err
	}
	return fmt.Sprintf("seat %d: %s", seat, holder), nil
}
