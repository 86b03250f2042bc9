// Package deploy holds manifests that run a dosim explore sweep on engines
// users already have (a Kubernetes Indexed Job, a CI matrix); its test
// keeps their shard arithmetic honest.
package deploy

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/explore"
	"github.com/dosim/dosim/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// sweep is what a manifest asks each shard to run.
type sweep struct {
	file  string // the scenario, from the module root
	seeds int
	count int      // shards in the split
	index []string // the index each shard gets, as the engine spells it
}

var exploreArgs = regexp.MustCompile(`dosim explore (\S+)\s+--seeds (\d+) --shard (.+?)/(.+?)\s+--json`)

func parseArgs(t *testing.T, line string) (file string, seeds int, index, count string) {
	t.Helper()
	m := exploreArgs.FindStringSubmatch(line)
	require.NotNil(t, m, "no dosim explore ... --seeds N --shard I/N --json in %q", line)
	n, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	return m[1], n, m[3], m[4]
}

// kubernetes reads the Indexed Job: one pod per completion index.
func kubernetes(t *testing.T) sweep {
	data, err := os.ReadFile("kubernetes-indexed-job.yaml")
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var s sweep
	merged := false
	for {
		var doc struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct {
				CompletionMode string `yaml:"completionMode"`
				Completions    int
				Parallelism    int
				Template       struct {
					Spec struct {
						Containers []struct{ Args []string }
					}
				}
			}
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind != "Job" {
			continue
		}
		args := doc.Spec.Template.Spec.Containers[0].Args
		require.Len(t, args, 1)
		if doc.Metadata.Name == "dosim-explore-merge" {
			assert.Contains(t, args[0], "dosim explore merge /shards/shard-*.json")
			merged = true
			continue
		}
		require.Equal(t, "Indexed", doc.Spec.CompletionMode)
		file, seeds, index, count := parseArgs(t, args[0])
		require.Equal(t, "${JOB_COMPLETION_INDEX}", index)
		n, err := strconv.Atoi(count)
		require.NoError(t, err)
		require.Equal(t, doc.Spec.Completions, n, "one completion per shard")
		assert.LessOrEqual(t, doc.Spec.Parallelism, n)
		assert.Contains(t, args[0], "--json /shards/shard-${JOB_COMPLETION_INDEX}.json")
		s = sweep{file: file, seeds: seeds, count: n}
		for i := range n { // Kubernetes gives each pod one index of 0..completions-1
			s.index = append(s.index, strconv.Itoa(i))
		}
	}
	require.True(t, merged, "the manifest has a merge Job")
	return s
}

// ciMatrix reads the workflow: one job per matrix index.
func ciMatrix(t *testing.T) sweep {
	data, err := os.ReadFile("ci-matrix.yml")
	require.NoError(t, err)
	var wf struct {
		Jobs struct {
			Shard struct {
				Strategy struct{ Matrix struct{ Index []int } }
				Env      struct {
					Count int `yaml:"COUNT"`
				}
				Steps []struct{ Run string }
			}
			Merge struct {
				Needs string
				Steps []struct{ Run string }
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(data, &wf))
	var s sweep
	for _, st := range wf.Jobs.Shard.Steps {
		if st.Run == "" {
			continue
		}
		file, seeds, index, count := parseArgs(t, st.Run)
		require.Equal(t, "${{ matrix.index }}", index)
		require.Equal(t, "${{ env.COUNT }}", count)
		s = sweep{file: file, seeds: seeds, count: wf.Jobs.Shard.Env.Count}
	}
	require.NotZero(t, s.count, "the shard job runs dosim explore")
	for _, i := range wf.Jobs.Shard.Strategy.Matrix.Index {
		s.index = append(s.index, strconv.Itoa(i))
	}
	require.Equal(t, "shard", wf.Jobs.Merge.Needs, "the merge waits for every shard")
	found := false
	for _, st := range wf.Jobs.Merge.Steps {
		found = found || regexp.MustCompile(`dosim explore merge shards/shard-\*\.json`).MatchString(st.Run)
	}
	require.True(t, found, "the merge job runs dosim explore merge")
	return s
}

// Each manifest's shards cover every seed of its sweep exactly once, and
// merging what they write gives what one machine's sweep gives (issue 14:
// beyond one machine; H2: merge refuses anything less).
func TestShardsCoverEverySeedOnceAndMergeToOneSweep(t *testing.T) {
	for name, read := range map[string]func(*testing.T) sweep{"kubernetes": kubernetes, "ci-matrix": ciMatrix} {
		t.Run(name, func(t *testing.T) {
			s := read(t)
			// The engine hands out each index of 0..count-1 exactly once.
			want := make([]string, s.count)
			for i := range want {
				want[i] = strconv.Itoa(i)
			}
			got := slices.Clone(s.index)
			slices.SortFunc(got, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
			require.Equal(t, want, got, "every shard index once")

			sc, err := scenario.Load("../"+s.file, scenario.WithBuiltInClasses(examples.Constructors()))
			require.NoError(t, err)
			// The manifest's own sweep: the shards' seed counts add up to it.
			total := 0
			for i := range s.count {
				e, err := explore.New(sc, explore.Options{Seeds: s.seeds, Shard: explore.Shard{Index: i, Count: s.count}})
				require.NoError(t, err)
				total += e.ShardSeeds()
			}
			assert.Equal(t, s.seeds, total, "the shards' seeds add up to the sweep's")

			// A smaller sweep of a scenario with violations, run both ways.
			failing, err := scenario.Load("../testdata/scenarios/mailer-vs-ledger.yaml", scenario.WithBuiltInClasses(examples.Constructors()))
			require.NoError(t, err)
			const seeds = 400
			opts := explore.Options{Seeds: seeds, NoShrink: true}
			one, err := explore.Run(failing, opts)
			require.NoError(t, err)
			require.False(t, one.Clean(), "the check needs violations to compare")
			var parts []*explore.Summary
			for _, i := range s.index {
				n, _ := strconv.Atoi(i)
				o := opts
				o.Shard = explore.Shard{Index: n, Count: s.count}
				part, err := explore.Run(failing, o)
				require.NoError(t, err)
				parts = append(parts, part)
			}
			merged, err := explore.Merge(parts...)
			require.NoError(t, err)
			assert.Equal(t, one.Ran, merged.Ran)
			assert.Equal(t, one.Failed, merged.Failed)
			assert.Equal(t, one.Total, merged.Total)
			assert.Equal(t, one.Histories, merged.Histories)
			assert.Equal(t, one.Violations, merged.Violations, "the same violations, seed for seed")
			assert.Equal(t, one.FirstFailing.Seed, merged.FirstFailing.Seed)
			assert.Empty(t, merged.Missing())
		})
	}
}
