package examples

import (
	"context"
	"fmt"
	"time"

	"github.com/dosim/dosim/agent"

	"github.com/dosim/dosim/object"
)

// Booth sells seats for a show, as a Durable Object of yours would: in
// its SQL database, with an idempotency key per request, the time a hold
// runs out stored beside it, an alarm that releases the holds nobody paid
// for, and a confirmation queued after each payment. It is what rules C1
// and C2 are for: its answers depend on the clock (datetime('now') and
// st.Now), and half of its work runs after the call that asked for it, in
// its alarm and its queue, yet dosim explore checks all of it.
//
//   - Hold(key, seat, holder), marked Retryable: holds a free seat for 15
//     minutes; the key makes a retry answer the same and hold nothing more.
//   - Pay(key), marked Retryable: charges the hold once (a charge effect),
//     marks it paid and queues its confirmation; a retry answers the same
//     and charges nothing.
//   - Confirm(key), the queue's callback: emails the confirmation.
//   - Alarm: releases the unpaid holds whose time ran out, and is set
//     again for the next one to run out.
//   - Holder(seat): who holds the seat, if anybody.
//
// BoothLeaky plants a bug: its Pay charges before it looks whether the
// hold is paid, so a retry after a lost reply charges the card again.
type Booth struct {
	agent.Agent // Queue
	st          *object.State
	chargeFn    func(ctx context.Context, b *Booth, key string) (bool, error)
}

// NewBooth is the Booth constructor for runtime.Namespace.
func NewBooth(st *object.State) object.Object { return &Booth{st: st, chargeFn: chargeOnce} }

// NewBoothLeaky is Booth with the planted double charge.
func NewBoothLeaky(st *object.State) object.Object { return &Booth{st: st, chargeFn: chargeFirst} }

// HoldFor is how long a hold lasts unpaid.
const HoldFor = 15 * time.Minute

const boothSchema = `CREATE TABLE IF NOT EXISTS holds (
	key    TEXT PRIMARY KEY,
	seat   INTEGER NOT NULL UNIQUE,
	holder TEXT NOT NULL,
	until  TEXT NOT NULL,
	paid   INTEGER NOT NULL DEFAULT 0,
	answer TEXT NOT NULL
)`

// Methods lists Booth's methods.
func (b *Booth) Methods() object.Methods {
	return object.Methods{
		"Hold":    object.Retryable(b.Hold),
		"Pay":     object.Retryable(b.Pay),
		"Confirm": object.Func(b.Confirm),
		"Holder":  object.Retryable(b.Holder),
	}
}

func (b *Booth) db(ctx context.Context) (*object.SQL, error) {
	db := b.st.SQL()
	_, err := db.Exec(ctx, boothSchema)
	return db, err
}

// Hold holds seat for holder under key for HoldFor, and answers "seat N
// held by H until T"; a seat held by another unexpired hold answers
// "seat N is taken". The same key answers what it answered first.
func (b *Booth) Hold(ctx context.Context, key string, seat int, holder string) (string, error) {
	db, err := b.db(ctx)
	if err != nil {
		return "", err
	}
	var answer string
	err = db.Transaction(ctx, func(ctx context.Context, tx *object.SQL) error {
		c, err := tx.Exec(ctx, "SELECT answer FROM holds WHERE key = ?", key)
		if err != nil {
			return err
		}
		if c.Len() == 1 {
			return c.One(&answer) // a retry: the first answer
		}
		// A hold whose time ran out unpaid frees its seat, alarm or not.
		if _, err := tx.Exec(ctx, "DELETE FROM holds WHERE seat = ? AND paid = 0 AND until <= datetime('now')", seat); err != nil {
			return err
		}
		if c, err = tx.Exec(ctx, "SELECT holder FROM holds WHERE seat = ?", seat); err != nil {
			return err
		}
		if c.Len() > 0 {
			answer = fmt.Sprintf("seat %d is taken", seat)
			return nil
		}
		c, err = tx.Exec(ctx, "SELECT datetime('now', '+15 minutes')")
		if err != nil {
			return err
		}
		var until string
		if err := c.One(&until); err != nil {
			return err
		}
		answer = fmt.Sprintf("seat %d held by %s until %s", seat, holder, until)
		_, err = tx.Exec(ctx, "INSERT INTO holds (key, seat, holder, until, answer) VALUES (?, ?, ?, ?, ?)", key, seat, holder, until, answer)
		return err
	})
	if err != nil {
		return "", err
	}
	return answer, b.armForNext(ctx)
}

// Pay charges the hold of key once, marks it paid and queues its
// confirmation; it answers "paid for seat N". An unknown key, or a hold
// that ran out, is an error.
func (b *Booth) Pay(ctx context.Context, key string) (string, error) {
	db, err := b.db(ctx)
	if err != nil {
		return "", err
	}
	var seat int
	c, err := db.Exec(ctx, "SELECT seat FROM holds WHERE key = ? AND (paid = 1 OR until > datetime('now'))", key)
	if err != nil {
		return "", err
	}
	if c.Len() == 0 {
		return "", fmt.Errorf("no hold %q to pay: unknown, or its time ran out", key)
	}
	if err := c.One(&seat); err != nil {
		return "", err
	}
	charged, err := b.chargeFn(ctx, b, key)
	if err != nil || !charged {
		return fmt.Sprintf("paid for seat %d", seat), err
	}
	if _, err := b.Queue(ctx, "Confirm", key); err != nil {
		return "", err
	}
	return fmt.Sprintf("paid for seat %d", seat), nil
}

// chargeOnce charges key's hold unless it is paid already, and marks it
// paid: the retry of a payment finds it paid and charges nothing.
func chargeOnce(ctx context.Context, b *Booth, key string) (bool, error) {
	c, err := b.st.SQL().Exec(ctx, "UPDATE holds SET paid = 1 WHERE key = ? AND paid = 0", key)
	if err != nil || c.RowsWritten == 0 {
		return false, err
	}
	return true, b.st.Effect(ctx, "charge", key)
}

// chargeFirst is the planted bug: it charges, then looks whether the hold
// was paid already. A retry charges the card again.
func chargeFirst(ctx context.Context, b *Booth, key string) (bool, error) {
	if err := b.st.Effect(ctx, "charge", key); err != nil {
		return false, err
	}
	c, err := b.st.SQL().Exec(ctx, "UPDATE holds SET paid = 1 WHERE key = ? AND paid = 0", key)
	if err != nil {
		return false, err
	}
	return c.RowsWritten > 0, nil
}

// Confirm emails the confirmation of the payment of key.
func (b *Booth) Confirm(ctx context.Context, key string) error {
	return b.st.Effect(ctx, "email", "your seat is confirmed: "+key)
}

// Holder returns who holds seat, "" if nobody (a hold whose time ran out
// unpaid holds nothing).
func (b *Booth) Holder(ctx context.Context, seat int) (string, error) {
	db, err := b.db(ctx)
	if err != nil {
		return "", err
	}
	c, err := db.Exec(ctx, "SELECT holder FROM holds WHERE seat = ? AND (paid = 1 OR until > datetime('now'))", seat)
	if err != nil || c.Len() == 0 {
		return "", err
	}
	var h string
	return h, c.One(&h)
}

// Alarm releases the unpaid holds whose time ran out, then is set again
// for the next one to run out.
func (b *Booth) Alarm(ctx context.Context, _ object.AlarmInfo) error {
	db, err := b.db(ctx)
	if err != nil {
		return err
	}
	if _, err := db.Exec(ctx, "DELETE FROM holds WHERE paid = 0 AND until <= datetime('now')"); err != nil {
		return err
	}
	return b.armForNext(ctx)
}

// armForNext sets the alarm for when the next unpaid hold runs out, or
// deletes it when none is left.
func (b *Booth) armForNext(ctx context.Context) error {
	c, err := b.st.SQL().Exec(ctx, "SELECT min(until) FROM holds WHERE paid = 0")
	if err != nil {
		return err
	}
	var next *string
	if err := c.One(&next); err != nil {
		return err
	}
	if next == nil {
		return b.st.DeleteAlarm(ctx)
	}
	at, err := time.Parse(time.DateTime, *next)
	if err != nil {
		return fmt.Errorf("hold until %q: %w", *next, err)
	}
	return b.st.SetAlarm(ctx, at)
}
