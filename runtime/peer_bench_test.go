package runtime_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"testing"
	"testing/synctest"
	"time"
)

// The peer (issue 14): the simulation a Go developer writes by hand for the
// work BenchmarkCallNoFault and BenchmarkCallAmbiguous measure, as well as
// it can be written. testing/synctest gives fake time; each object is a
// goroutine reading a channel mailbox, with a map for storage and a window
// of seen request ids; a caller sends a request, waits on its own reply
// channel, and before a retry sleeps a full-jitter backoff (the stub's:
// uniform in [0, 500ms·2^(n-1)], capped at 2s) with the same request id.
// It keeps no records, copies nothing and has no seeded schedule. dosim's
// figures divided by these are the ratios `make bench` prints.

// peerWindow is how many request ids an object remembers to refuse
// duplicates: a ring, so that the map stays small over millions of calls.
const peerWindow = 1024

// errPeerDuplicate is an object's refusal of a repeated request id for a
// method not marked retryable (dosim's rule S6).
var errPeerDuplicate = errors.New("duplicate request")

// errPeerLost is the caller's error when the link lost the reply.
var errPeerLost = errors.New("reply lost")

// peerReq is one attempt of a call, sent by value into a mailbox.
type peerReq struct {
	id        uint64 // the call's request id, the same on every attempt
	method    string
	item      string
	n         int
	retryable bool
	reply     chan<- peerReply
}

type peerReply struct {
	n   int
	err error
}

// peerObject is an Inventory: storage, seen ids and a mailbox.
type peerObject struct {
	mail    chan peerReq
	done    chan struct{}
	storage map[string]int
	seen    map[uint64]struct{}
	ring    [peerWindow]uint64
	next    int
}

func newPeerObject() *peerObject {
	o := &peerObject{
		mail:    make(chan peerReq, 16),
		done:    make(chan struct{}),
		storage: map[string]int{},
		seen:    make(map[uint64]struct{}, peerWindow),
	}
	go o.loop()
	return o
}

// loop runs the object's requests one at a time, in mailbox order.
func (o *peerObject) loop() {
	defer close(o.done)
	for req := range o.mail {
		req.reply <- o.handle(req)
	}
}

func (o *peerObject) handle(req peerReq) peerReply {
	if _, dup := o.seen[req.id]; dup {
		if !req.retryable {
			return peerReply{err: errPeerDuplicate}
		}
	} else {
		if old := o.ring[o.next]; old != 0 {
			delete(o.seen, old)
		}
		o.ring[o.next] = req.id
		o.next = (o.next + 1) % peerWindow
		o.seen[req.id] = struct{}{}
	}
	switch req.method {
	case "AddOne":
		n := o.storage[req.item] + 1
		o.storage[req.item] = n
		return peerReply{n: n}
	case "SetQuantity":
		if req.n < 0 {
			return peerReply{err: fmt.Errorf("quantity of %q must be >= 0, got %d", req.item, req.n)}
		}
		o.storage[req.item] = req.n
		return peerReply{}
	}
	return peerReply{err: fmt.Errorf("no method %q", req.method)}
}

// peerCaller calls objects: one reply channel, a seeded jitter source, and
// a link that loses the first reply of each call when lose is set.
type peerCaller struct {
	reply    chan peerReply
	rng      *rand.Rand
	nextID   uint64
	lose     bool
	attempts int // every attempt sent, for the benchmark's check
}

// call sends one call and retries it (up to maxRetries) after a
// full-jitter backoff while the link loses its reply.
func (c *peerCaller) call(o *peerObject, method, item string, n int, retryable bool) (int, error) {
	const maxRetries = 3
	c.nextID++
	req := peerReq{id: c.nextID, method: method, item: item, n: n, retryable: retryable, reply: c.reply}
	for attempt := 1; ; attempt++ {
		c.attempts++
		o.mail <- req
		r := <-c.reply
		if c.lose && attempt == 1 {
			r = peerReply{err: errPeerLost}
		}
		if !errors.Is(r.err, errPeerLost) || attempt > maxRetries {
			return r.n, r.err
		}
		capMs := min(int64(500)<<(attempt-1), 2000)
		time.Sleep(time.Duration(c.rng.Int64N(capMs+1)) * time.Millisecond)
	}
}

// inBubble runs f inside a synctest bubble. synctest.Test wants a
// *testing.T, which a benchmark has not, so it runs f as a one-test
// testing.RunTests; the timer stays outside the bubble, where time.Now
// is real. RunTests runs its tests once per -count and -cpu value: f runs
// only the first time, and GOMAXPROCS is put back.
func inBubble(b *testing.B, f func(t *testing.T)) {
	b.Helper()
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(0))
	ran := false
	test := testing.InternalTest{Name: b.Name(), F: func(t *testing.T) {
		if !ran {
			ran = true
			synctest.Test(t, f)
		}
	}}
	if !testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{test}) {
		b.Fatal("the peer simulation failed")
	}
}

// BenchmarkPeerSynctest is the peer of BenchmarkCallNoFault (fault-free:
// one AddOne per op) and of BenchmarkCallAmbiguous (ambiguous: one
// SetQuantity per op whose first reply is lost, so two executions and one
// backoff sleep).
func BenchmarkPeerSynctest(b *testing.B) {
	b.Run("fault-free", func(b *testing.B) {
		b.ReportAllocs()
		n := b.N
		var got int
		var err error
		b.ResetTimer()
		inBubble(b, func(*testing.T) {
			o := newPeerObject()
			c := &peerCaller{reply: make(chan peerReply, 1), rng: rand.New(rand.NewPCG(1, 2))}
			for range n {
				if got, err = c.call(o, "AddOne", "apple", 0, false); err != nil {
					break
				}
			}
			close(o.mail)
			<-o.done
		})
		b.StopTimer()
		if err != nil || got != n {
			b.Fatalf("after %d AddOne calls: got %d, err %v", n, got, err)
		}
	})
	b.Run("ambiguous", func(b *testing.B) {
		b.ReportAllocs()
		n := b.N
		var attempts, stored int
		var err error
		b.ResetTimer()
		inBubble(b, func(*testing.T) {
			o := newPeerObject()
			c := &peerCaller{reply: make(chan peerReply, 1), rng: rand.New(rand.NewPCG(1, 2)), lose: true}
			for i := range n {
				if _, err = c.call(o, "SetQuantity", "apple", i, true); err != nil {
					break
				}
			}
			close(o.mail)
			<-o.done
			attempts, stored = c.attempts, o.storage["apple"]
		})
		b.StopTimer()
		if err != nil || attempts != 2*n || stored != n-1 {
			b.Fatalf("after %d calls: %d attempts (want %d), stored %d, err %v", n, attempts, 2*n, stored, err)
		}
	})
}
