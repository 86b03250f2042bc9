package fields_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dosim/dosim/internal/fields"
	"github.com/dosim/dosim/object"
	"github.com/stretchr/testify/assert"
)

// bucket keeps tokens in memory, as the platform's rate limiter does.
type bucket struct {
	st     *object.State
	tokens int
	last   time.Time
	charge func(ctx context.Context) error
	seen   map[string]bool
	next   *bucket
}

// stateOnly keeps nothing but its State.
type stateOnly struct{ st *object.State }

// C2: an instance's memory is its fields, with the object's State, funcs
// and channels left out; one that keeps nothing is the empty text.
func TestC2_TextIsTheInstancesOwnFields(t *testing.T) {
	b := &bucket{st: &object.State{}, tokens: 3, last: time.Date(2025, 1, 1, 0, 0, 5, 0, time.UTC), seen: map[string]bool{"b": true, "a": false},
		charge: func(context.Context) error { return nil }}
	assert.Equal(t, `&{tokens:3 last:2025-01-01T00:00:05Z seen:map["a":false "b":true] next:nil}`, fields.Text(b))
	assert.Equal(t, "", fields.Text(&stateOnly{st: &object.State{}}), "a State alone is nothing the instance keeps")
	assert.Equal(t, "", fields.Text(&struct {
		ch chan int
		fn func()
	}{}))
	b2 := *b
	b2.tokens = 2
	assert.NotEqual(t, fields.Text(b), fields.Text(&b2), "a field that differs shows")
}

// C2: the text does not depend on a map's order or on where in memory the
// values live; a pointer met twice, or a cycle, is written once.
func TestC2_TextIsDeterministic(t *testing.T) {
	mk := func() *bucket {
		b := &bucket{seen: map[string]bool{}}
		for i := range 100 {
			b.seen[strings.Repeat("k", i%7)+string(rune('a'+i%26))] = i%2 == 0
		}
		b.next = b // a cycle
		return b
	}
	a := fields.Text(mk())
	for range 20 {
		assert.Equal(t, a, fields.Text(mk()))
	}
	assert.Contains(t, a, "next:&1", "the cycle refers back to the first pointer")
}

// C2: a value whose text would be longer than MaxText is cut with a digest
// of the whole: equal only when the values are.
func TestC2_LongTextEndsInADigest(t *testing.T) {
	big := func(last byte) string {
		b := make([]byte, fields.MaxText+10)
		for i := range b {
			b[i] = 'x'
		}
		b[len(b)-1] = last
		return fields.Text(&struct{ s []byte }{b})
	}
	x, y := big('x'), big('y')
	assert.NotEqual(t, x, y)
	assert.Less(t, len(x), 2048)
	assert.Contains(t, x, "sha256:")
}

// C2: a seeded source in a field is memory too: two sources that drew
// differently differ.
func TestC2_ASeededSourceIsMemory(t *testing.T) {
	type r struct{ rng *rand.Rand }
	a, b := &r{rand.New(rand.NewPCG(1, 2))}, &r{rand.New(rand.NewPCG(1, 2))}
	assert.Equal(t, fields.Text(a), fields.Text(b))
	b.rng.Uint64()
	assert.NotEqual(t, fields.Text(a), fields.Text(b))
}

// keepsNothing holds only what is not its own memory; holdsAPointer holds
// a pointer of its own, nil or not.
type keepsNothing struct {
	st     *object.State
	charge func(ctx context.Context) error
	done   chan struct{}
	inner  struct{ st *object.State }
}

type holdsAPointer struct {
	st   *object.State
	next *holdsAPointer
}

// C2: a class whose fields are all the runtime's, funcs and channels keeps
// nothing (the text is "", decided from its type), and one with a pointer
// of its own keeps it, nil or not.
func TestC2_AClassOfOnlyTheRuntimesFieldsKeepsNothing(t *testing.T) {
	st := &object.State{}
	assert.Equal(t, "", fields.Text(&keepsNothing{st: st, charge: func(context.Context) error { return nil }, done: make(chan struct{}), inner: struct{ st *object.State }{st}}))
	assert.Equal(t, "&{next:nil}", fields.Text(&holdsAPointer{st: st}))
	assert.Equal(t, "&{next:&{next:nil}}", fields.Text(&holdsAPointer{next: &holdsAPointer{}}))
}

type withBool struct {
	st    *object.State
	ready bool
}

type withTime struct {
	st *object.State
	at time.Time
}

type withIface struct {
	st *object.State
	v  any
}

// C2: Empty is Text's "" (decided from the type where it can be): for a
// class that keeps nothing, one with a bool or a time (always something),
// and one whose interface field holds the runtime's value or its own.
func TestC2_EmptyIsTextsEmpty(t *testing.T) {
	for _, v := range []any{
		&keepsNothing{}, &holdsAPointer{}, &withBool{ready: true}, &withTime{st: &object.State{}, at: time.Unix(1, 0)}, &withIface{st: &object.State{}},
		&withIface{v: &object.State{}}, &withIface{v: 1}, keepsNothing{}, nil,
	} {
		assert.Equal(t, fields.Text(v) == "", fields.Empty(v), "%#v: Text %q", v, fields.Text(v))
	}
	assert.True(t, fields.Empty(&keepsNothing{}))
	assert.False(t, fields.Empty(&withBool{st: &object.State{}}))
	assert.True(t, fields.Empty(&withIface{v: &object.State{}}), "an interface that holds the runtime's value keeps nothing")
}
