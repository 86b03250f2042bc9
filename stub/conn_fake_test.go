package stub_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/stub"
	"github.com/dosim/dosim/transport"
)

// fakeConn is a stub.Conn in a few lines, as net/http's tests fake an
// http.RoundTripper: no runtime, no scheduler; a sleep moves its clock,
// and each attempt is answered by reply. The Conn it embeds is nil: a
// method these tests do not reach (Replay, Go, Break, Fork) panics.
type fakeConn struct {
	stub.Conn
	now   time.Duration
	ids   byte
	sent  []wire.Send
	slept []time.Duration
	reply func(n int) wire.Reply
}

func (c *fakeConn) Target() *wire.Target                { return &wire.Target{Namespace: "FAKE", Object: "one"} }
func (c *fakeConn) Enter(context.Context) (bool, error) { return false, nil }
func (c *fakeConn) Now() time.Duration                  { return c.now }
func (c *fakeConn) Rand() *rand.Rand                    { return rand.New(rand.NewPCG(1, 2)) }
func (c *fakeConn) NewRequestID() uuid.UUID             { c.ids++; return uuid.UUID{c.ids} }
func (c *fakeConn) NewCall() *wire.Call                 { return new(wire.Call) }
func (c *fakeConn) Begin(call *wire.Call) error         { call.Start = c.now; return nil }
func (c *fakeConn) End(*wire.Call)                      {}
func (c *fakeConn) Sleep(_ context.Context, d time.Duration) (bool, error) {
	c.now += d
	c.slept = append(c.slept, d)
	return true, nil
}
func (c *fakeConn) RoundTrip(_ context.Context, s wire.Send) (wire.Reply, error) {
	c.sent = append(c.sent, s)
	return c.reply(s.N), nil
}

// The stub owns the policy and its Conn the attempt (issue 33): against a
// fake Conn, a call whose first attempt's reply was lost (ambiguous) is
// retried after a backoff within MaxBackoff (S8) with the same request
// identity (S5), and returns the retry's value.
func TestS5_S8_TheRetryLoopRunsAgainstAFakeConn(t *testing.T) {
	c := &fakeConn{reply: func(n int) wire.Reply {
		if n == 1 {
			return wire.Reply{Answered: true, Kind: wire.FailLink, Fault: transport.LoseResponse}
		}
		return wire.Reply{Answered: true, Value: 42}
	}}
	s, err := stub.New(c, true)
	require.NoError(t, err)
	v, err := s.Call(context.Background(), "Set", 7)
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	require.Len(t, c.sent, 2)
	assert.Equal(t, []int{1, 2}, []int{c.sent[0].N, c.sent[1].N})
	assert.Equal(t, c.sent[0].Req.ID, c.sent[1].Req.ID, "an ambiguous failure keeps the identity (S5)")
	assert.Equal(t, []any{7}, c.sent[1].Req.Args)
	require.Len(t, c.slept, 1)
	assert.LessOrEqual(t, c.slept[0], stub.MaxBackoff(1))
	assert.Equal(t, c.sent[0].Call.Start+s.Timeout(), c.sent[1].Deadline, "a retry waits until the call's deadline (S9)")
}

// S5: after a failure known not to have reached the object, the retry
// carries a new identity.
func TestS5_ANotDeliveredAttemptRetriesWithANewIdentity(t *testing.T) {
	c := &fakeConn{reply: func(n int) wire.Reply {
		if n == 1 {
			return wire.Reply{Answered: true, Kind: wire.FailLink, Fault: transport.NotDelivered}
		}
		return wire.Reply{Answered: true}
	}}
	s, err := stub.New(c, true)
	require.NoError(t, err)
	_, err = s.Call(context.Background(), "Set", 7)
	require.NoError(t, err)
	require.Len(t, c.sent, 2)
	assert.NotEqual(t, c.sent[0].Req.ID, c.sent[1].Req.ID)
}

// S4: the object's own error is never retried, and the caller's error is
// flagged Remote.
func TestS4_AnObjectErrorIsNotRetriedAgainstAFakeConn(t *testing.T) {
	c := &fakeConn{reply: func(int) wire.Reply {
		return wire.Reply{Answered: true, Kind: wire.FailRemote, Err: assert.AnError}
	}}
	s, err := stub.New(c, true)
	require.NoError(t, err)
	_, err = s.Call(context.Background(), "Set", 7)
	var e *stub.Error
	require.ErrorAs(t, err, &e)
	assert.True(t, e.Remote)
	assert.Len(t, c.sent, 1)
	assert.Nil(t, s.Broken(), "the object's own answer leaves the stub usable (L2)")
}
