package explore_test

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/internal/optrange"
	"github.com/dosim/dosim/runtime"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withBlock is the ambiguous-delivery scenario with lines added to an
// explore block of its own.
func withBlock(t *testing.T, lines string) *scenario.Scenario {
	t.Helper()
	base := load(t, "ambiguous-delivery")
	data := []byte(readFile(t, base.File) + "explore:\n" + lines)
	sc, err := scenario.Parse("block.yaml", data, builtIns)
	require.NoError(t, err)
	return sc
}

// C11: a value out of range, or a pair that cannot go together, is an
// *OptionError wrapping ErrOptions, naming each option as Options spells
// it, or as the file does (with its line) when the file gave it.
func TestC11_OptionsAreCheckedOnceNamingWhereEachCameFrom(t *testing.T) {
	sc := withBlock(t, "  strategy: random\n  depth: 3\n")
	_, err := explore.CheckOptions(sc, explore.Options{})
	var oe *explore.OptionError
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.ErrorIs(t, err, explore.ErrOptions)
	assert.True(t, oe.FromFile)
	assert.True(t, oe.WithFromFile)
	assert.Equal(t, "explore options: the scenario's explore.depth: 3 (block.yaml:"+itoa(sc.Explore.Lines["depth"])+") with the scenario's explore.strategy: random (block.yaml:"+itoa(sc.Explore.Lines["strategy"])+"): only pct and mix take a depth (PCT's d)", err.Error())

	_, err = explore.CheckOptions(withBlock(t, "  exhaustive: true\n"), explore.Options{Depth: 4})
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "Depth 4 with the scenario's explore.exhaustive", oe.Spelled(explore.GoName)[:len("Depth 4 with the scenario's explore.exhaustive")])
	assert.Contains(t, oe.Spelled(explore.FlagName), "--depth 4 with the scenario's explore.exhaustive (block.yaml:")

	_, err = explore.CheckOptions(sc, explore.Options{Horizon: optrange.MaxHorizon + time.Hour, Strategy: runtime.StrategyPCT})
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, "--horizon 8761h0m0s: want "+optrange.Horizon.Want, oe.Spelled(explore.FlagName))
}

// C11: an option the caller gives replaces the file's field, and says
// so; the same value is no override; what only the file's search takes
// goes with it.
func TestC11_OverridesOfTheFilesFieldsAreReported(t *testing.T) {
	sc := withBlock(t, "  exhaustive: true\n  max-faults: 1\n  horizon: 2h\n  random: {lose-response: 0.1}\n")
	got, err := explore.CheckOptions(sc, explore.Options{Seeds: 50, Horizon: time.Hour, Rates: sc.Explore.Rates})
	require.NoError(t, err)
	assert.Equal(t, []explore.Override{
		{Option: "horizon", Value: "2h0m0s", By: "horizon", ByValue: "1h0m0s"},
		{Option: "exhaustive", Value: "true", By: "seeds", ByValue: "50"},
		{Option: "max-faults", Value: "1", By: "seeds", ByValue: "50"},
	}, got)
	assert.Equal(t, "--seeds 50 overrides the scenario's explore.exhaustive: true", got[1].Spelled(explore.FlagName))
	e, err := explore.New(sc, explore.Options{Seeds: 50, Horizon: time.Hour})
	require.NoError(t, err)
	assert.Len(t, e.Overrides(), 3)
	assert.False(t, e.Options().Exhaustive)
	assert.Equal(t, time.Hour, e.Options().Horizon)

	none, err := explore.CheckOptions(sc, explore.Options{MaxFaults: 1, Exhaustive: true, Horizon: 2 * time.Hour})
	require.NoError(t, err)
	assert.Empty(t, none, "the file's own values, given again, override nothing")
}

// C11: the explore block's ranges are the flags' and Options': the
// default horizon is in range, and Depth's and MaxFaults' bounds are the
// runtime's and the exhaustive search's.
func TestC11_OneSetOfRanges(t *testing.T) {
	assert.True(t, optrange.Horizon.Holds(explore.DefaultHorizon))
	assert.Equal(t, runtime.MaxDepth, optrange.Depth.Max)
	assert.Equal(t, explore.MaxExhaustiveFaults, optrange.MaxFaults.Max)
	assert.True(t, optrange.Depth.Holds(explore.DefaultDepth))
	assert.True(t, optrange.MaxFaults.Holds(explore.DefaultMaxFaults))
	assert.True(t, optrange.MaxAmbiguous.Holds(explore.DefaultMaxAmbiguous))
	assert.True(t, optrange.ShrinkTime.Holds(explore.DefaultShrinkTime))
}

// readFile is a file's text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func itoa(n int) string { return strconv.Itoa(n) }
