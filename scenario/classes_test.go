package scenario_test

import (
	"strings"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/object"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const counterFile = "namespaces: {C: counter}\nstubs: {c: {}}\ncalls: [{stub: c, method: Increment}]\n"

// Issue 10 item 4: scenario no longer knows the built-in classes; without
// WithClasses nothing is registered, and the message says how to register.
func TestU1_LoadWithoutClassesSaysHowToRegister(t *testing.T) {
	_, err := scenario.Parse("c.yaml", []byte(counterFile))
	require.Error(t, err)
	assert.Equal(t, `c.yaml:1: namespaces.C: unknown class "counter"; no classes are registered (register classes with scenario.WithClasses)`, err.Error())
	_, err = scenario.Parse("c.yaml", []byte("namespaces: {}\nstubs: {c: {}}\ncalls: [{stub: c, method: Increment}]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "namespaces: is empty: define at least one, as NAME: class (none is registered: register classes with scenario.WithClasses)")
}

// The built-in classes are one registry among others: registries merge, a
// later one replacing a class of the same name, and the words of the
// messages follow what was registered.
func TestU1_WithClassesMergesRegistries(t *testing.T) {
	mine := scenario.WithClasses(map[string]runtime.Constructor{"tally": examples.NewCounter})
	sc, err := scenario.Parse("c.yaml", []byte(strings.Replace(counterFile, "counter", "tally", 1)), builtIns, mine)
	require.NoError(t, err)
	assert.Equal(t, "tally", sc.Namespaces[0].Class.Name)
	require.NotNil(t, sc.Namespaces[0].Class.New)
	res, err := sc.Run()
	require.NoError(t, err)
	assert.True(t, res.Passed())

	_, err = scenario.Parse("c.yaml", []byte(strings.Replace(counterFile, "counter", "wallet", 1)), builtIns, mine)
	assert.ErrorContains(t, err, `unknown class "wallet"; the registered classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally`)
	_, err = scenario.Parse("c.yaml", []byte(strings.Replace(counterFile, "counter", "wallet", 1)), builtIns)
	assert.ErrorContains(t, err, `unknown class "wallet"; the built-in classes are booth, booth-leaky, bucket, chat, chores, counter, inventory, ledger, mailer, outbox, seats, seats-leaky, session, tally`)

	// A later registry replaces a class of the same name: "counter" is now
	// the inventory, which has no Increment.
	_, err = scenario.Parse("c.yaml", []byte(counterFile), builtIns,
		scenario.WithClasses(map[string]runtime.Constructor{"counter": examples.NewInventory}))
	assert.ErrorContains(t, err, `unknown method "Increment" of class counter (namespace C); it has AddOne, Get, SetQuantity`)
}

// Methods and arity are checked against a registered class's Go methods,
// as for the built-in ones.
func TestU1_RegisteredClassMethodsCheckedAtLoad(t *testing.T) {
	reg := scenario.WithClasses(map[string]runtime.Constructor{"stock": examples.NewInventory})
	_, err := scenario.Parse("s.yaml", []byte("namespaces: {S: stock}\nstubs: {s: {}}\ncalls: [{stub: s, method: SetQuantity, args: [apple]}]\n"), reg)
	assert.EqualError(t, err, "s.yaml:3: calls[0].args: SetQuantity(string, int) takes 2 argument(s), got 1")
}

// A registered constructor that is nil, returns nil or panics is reported
// at the namespace that names it, not a panic of Load.
func TestU1_BrokenConstructorIsAnErrorNotAPanic(t *testing.T) {
	for name, ctor := range map[string]runtime.Constructor{
		"its constructor is nil":       nil,
		"its constructor returned nil": func(*object.State) object.Object { return nil },
		"panicked: no state for you":   func(*object.State) object.Object { panic("no state for you") },
	} {
		reg := scenario.WithClasses(map[string]runtime.Constructor{"counter": ctor})
		_, err := scenario.Parse("c.yaml", []byte(counterFile), reg)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), `c.yaml:1: namespaces.C: class "counter" cannot be used: `, name)
		assert.Contains(t, err.Error(), name)
	}
}

// scenario.Class (a RunOption) still swaps one namespace's constructor for
// one run, on top of the class registered at load time.
func TestU1_ClassRunOptionStillOverrides(t *testing.T) {
	sc, err := scenario.Parse("c.yaml", []byte(counterFile), builtIns)
	require.NoError(t, err)
	used := false
	res, err := sc.Run(scenario.Class("C", func(st *object.State) object.Object { used = true; return examples.NewCounter(st) }))
	require.NoError(t, err)
	assert.True(t, res.Passed())
	assert.True(t, used, "the run used the override")
}
