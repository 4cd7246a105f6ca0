package flowgen

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// truth returns the ground truth of a generated job, per rank.
func truth(opt Options, nranks int) [][]flowgraph.Call {
	out := make([][]flowgraph.Call, nranks)
	RunTruth(opt, nranks, 4, func(r int, c flowgraph.Call) { out[r] = append(out[r], c) })
	return out
}

// ratio is the q-quantile over the median of vs.
func ratio(vs []int64, q float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return float64(vs[int(q*float64(len(vs)-1))]) / float64(max(vs[len(vs)/2], 1))
}

func TestTails(t *testing.T) {
	realistic := Options{Seed: 3, Events: 20000, Depth: 3, Sites: 10, Branchy: true}
	uniform := realistic
	uniform.Uniform = true
	var p99 [2]float64
	for k, opt := range []Options{uniform, realistic} {
		var durs []int64
		for _, cs := range truth(opt, 4) {
			for _, c := range cs {
				require.GreaterOrEqual(t, c.Exit, c.Enter)
				durs = append(durs, c.Exit-c.Enter)
			}
		}
		p99[k] = ratio(durs, 0.999)
	}
	assert.Less(t, p99[0], 15.0, "uniform: the tail stays close to the median")
	assert.Greater(t, p99[1], 50.0, "by default: a heavy tail")
}

// By default the ranks' compute differs in some phases and not in
// the first, and the phases differ from each other.
func TestPhases(t *testing.T) {
	const nranks, events, phases = 8, 8000, 4
	opt := Options{Seed: 5, Events: events, Depth: 2, Sites: 6, Phases: phases}
	compute := make([][phases]float64, nranks) // per rank and phase, mean compute
	for r, cs := range truth(opt, nranks) {
		require.Len(t, cs, events)
		var n [phases]int
		for i := 1; i < len(cs); i++ {
			ph := i * phases / events
			compute[r][ph] += float64(cs[i].Enter - cs[i-1].Exit)
			n[ph]++
		}
		for ph := range phases {
			compute[r][ph] /= float64(n[ph])
		}
	}
	spread := func(ph int) float64 {
		lo, hi := compute[0][ph], compute[0][ph]
		for r := range nranks {
			lo, hi = min(lo, compute[r][ph]), max(hi, compute[r][ph])
		}
		return hi / lo
	}
	assert.Less(t, spread(0), 1.5, "phase 0: no slow rank")
	var most float64
	for ph := 1; ph < phases; ph++ {
		most = max(most, spread(ph))
	}
	assert.Greater(t, most, 2.0, "some phase has slow ranks")
	assert.Greater(t, compute[0][1]/compute[0][2], 2.0, "phase 1 computes more than phase 2 (the phases' profile)")
}

func TestWriteJob(t *testing.T) {
	opt := Options{Seed: 7, Events: 3000, Depth: 3, Sites: 8, Branchy: true}
	path := filepath.Join(t.TempDir(), "gen.mpiflow")
	_, ranks, err := WriteJob(path, opt, 3, 2)
	require.NoError(t, err)
	want := truth(opt, 3)
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Index, 3)
	for r := range 3 {
		ft, err := flowgraph.ReadFullTrace(flowgraph.TracePath(path, r, 0))
		require.NoError(t, err)
		assert.True(t, ft.Complete)
		assert.Equal(t, r, ft.Rank)
		require.Len(t, ft.Events, len(want[r]))
		g := &ranks[r].Graph
		require.Len(t, ft.Nodes, len(g.Nodes))
		for i, e := range ft.Events {
			assert.Equal(t, want[r][i].Enter, e.Enter)
			assert.Equal(t, want[r][i].Exit, e.Exit)
			require.Equal(t, want[r][i].Key, g.Nodes[e.Node].Key, "rank %d event %d", r, i)
		}
	}
	_, _, err = WriteJob(filepath.Join(t.TempDir(), "missing", "x.mpiflow"), opt, 1, 1)
	assert.ErrorContains(t, err, "missing")
}
