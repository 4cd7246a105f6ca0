package aggregate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeProportions(t *testing.T) {
	// Slices of 10 ns. Resource 0: slice 0 all "a", slice 1 half "a" half
	// "b". Resource 1: slice 0 all "b", slice 1 2 ns of "b" (idle after).
	m, err := NewModel(resources(2), []string{"a", "b"}, 0, 20, 2)
	require.NoError(t, err)
	copy(m.Cell(0, 0), []int64{10, 0})
	copy(m.Cell(0, 1), []int64{5, 5})
	copy(m.Cell(1, 0), []int64{0, 10})
	copy(m.Cell(1, 1), []int64{0, 2})
	h := mustHierarchy(t, `{"name":"j","ranks":[0,1]}`, m.Resources)
	a, err := New(m, h, Options{})
	require.NoError(t, err)

	// (1/|S|) sum_s (sum_t d_x(s,t) / sum_t d(t)):
	// a: (15/20 + 0/20) / 2 = 0.375; b: (5/20 + 12/20) / 2 = 0.425.
	ag := a.Describe(Cell{Node: 0, First: 0, Last: 1})
	assert.InDeltaSlice(t, []float64{0.375, 0.425}, ag.Proportions, 1e-12)
	assert.Equal(t, 1, ag.Mode)
	assert.Equal(t, "b", ag.ModeState)
	assert.InDelta(t, 0.425, ag.ModeShare, 1e-12)
	assert.Equal(t, "j", ag.Path)
	assert.Equal(t, 2, ag.Resources)
	assert.InDelta(t, 0, ag.Start, 1e-18)
	assert.InDelta(t, 20e-9, ag.End, 1e-18)
	g, l := newRef(m, h).quality(Cell{0, 0, 1})
	assert.InDelta(t, g, ag.Gain, 1e-12)
	assert.InDelta(t, l, ag.Loss, 1e-12)

	// Leaf of resource 1, slice 1: 2 ns of b out of 10.
	ag = a.Describe(Cell{Node: 2, First: 1, Last: 1})
	assert.InDeltaSlice(t, []float64{0, 0.2}, ag.Proportions, 1e-12)
	assert.Equal(t, 0.0, ag.Loss)
	assert.Equal(t, 0.0, ag.Gain)

	// No state at all: no mode.
	copy(m.Cell(1, 1), []int64{0, 0})
	ag = a.Describe(Cell{Node: 2, First: 1, Last: 1})
	assert.Equal(t, -1, ag.Mode)
	assert.Equal(t, "", ag.ModeState)
	assert.Equal(t, 0.0, ag.ModeShare)
}

func TestIntegrate(t *testing.T) {
	m := randomModel(t, 9, 4, 5, 3)
	total := func(m *Model) []int64 {
		out := make([]int64, len(m.States))
		for i, d := range m.Dur {
			out[i%len(m.States)] += d
		}
		return out
	}
	mt := IntegrateTime(m)
	assert.Equal(t, 1, mt.Slices())
	assert.Equal(t, []int64{m.Bounds[0], m.Bounds[5]}, mt.Bounds)
	assert.Equal(t, total(m), total(mt))
	for r := range 4 {
		var sum int64
		for s := range 5 {
			sum += m.Cell(r, s)[1]
		}
		assert.Equal(t, sum, mt.Cell(r, 0)[1])
	}

	ms, h := IntegrateSpace(m, "all")
	assert.Len(t, ms.Resources, 1)
	assert.Equal(t, []int{4}, ms.Weight)
	assert.Equal(t, total(m), total(ms))
	a, err := New(ms, h, Options{})
	require.NoError(t, err)
	// Proportions are means over the 4 resources, so at most 1.
	ag := a.Describe(Cell{0, 0, 4})
	var sum float64
	for _, p := range ag.Proportions {
		sum += p
	}
	assert.LessOrEqual(t, sum, 1.0)
	assert.Greater(t, sum, 0.0)
	assert.Equal(t, 4, ag.Resources)
}

func TestModesOnPlantedTrace(t *testing.T) {
	m, h := plantedModel(t)
	// Time only: the phase change (slice 10) and the perturbation (12-15)
	// are the phase boundaries; nothing straddles them.
	res, err := AggregateModel(m, h, RunOptions{P: 0.5, Mode: TimeOnly})
	require.NoError(t, err)
	require.NotEmpty(t, res.Phases)
	var cuts []int
	for _, ph := range res.Phases {
		cuts = append(cuts, ph.First)
	}
	assert.Subset(t, cuts, []int{0, 10, 12, 16})
	for _, ph := range res.Partition.Aggregates {
		assert.Equal(t, 0, ph.Node)
		assert.Equal(t, 12, ph.Resources)
	}
	// Only the perturbation's phase has "wait": 3 of 12 resources at 90%.
	for _, ph := range res.Phases {
		if ph.First == 12 {
			assert.Equal(t, 15, ph.Last)
			assert.InDelta(t, 0.9*3/12, ph.Proportions[2], 0.01)
		} else {
			assert.Equal(t, 0.0, ph.Proportions[2])
		}
	}

	// Space only: one slice; p = 0 is every resource, p = 1 the root.
	for _, tt := range []struct {
		p    float64
		want int
	}{{0, 12}, {1, 1}} {
		res, err = AggregateModel(m, h, RunOptions{P: tt.p, Mode: SpaceOnly})
		require.NoError(t, err)
		assert.Len(t, res.Partition.Aggregates, tt.want)
		for _, ag := range res.Partition.Aggregates {
			assert.Equal(t, 0, ag.First)
			assert.Equal(t, 0, ag.Last)
		}
	}
}

func TestRunWithSuggestedP(t *testing.T) {
	m, _ := plantedModel(t)
	// A MemSource replaying the planted model's cells as events.
	src := &MemSource{Res: m.Resources, StateNames: m.States, Start: m.Bounds[0], End: m.Bounds[20]}
	src.Events = make([][]StateEvent, len(m.Resources))
	for r := range m.Resources {
		for s := 0; s < m.Slices(); s++ {
			t0 := m.Bounds[s]
			for x, d := range m.Cell(r, s) {
				src.Events[r] = append(src.Events[r], StateEvent{Resource: r, State: x, Start: t0, End: t0 + d})
				t0 += d
			}
		}
	}
	spec, err := ParseSpec([]byte(`{"name":"job","children":[
		{"name":"c0","ranks":[0,1,2,3]},{"name":"c1","ranks":[4,5,6,7]},{"name":"c2","ranks":[8,9,10,11]}]}`))
	require.NoError(t, err)
	res, err := Run(src, RunOptions{Slices: 20, P: -1, Spec: spec})
	require.NoError(t, err)
	assert.Equal(t, m.Dur, mustModel(t, src, 20).Dur)
	require.NotEmpty(t, res.PValues)
	assert.Equal(t, 0.0, res.PValues[0].P)
	for k := 1; k < len(res.PValues); k++ {
		assert.Greater(t, res.PValues[k].P, res.PValues[k-1].P)
		assert.GreaterOrEqual(t, res.PValues[k].NormGain, res.PValues[k-1].NormGain-1e-12)
		assert.GreaterOrEqual(t, res.PValues[k].NormLoss, res.PValues[k-1].NormLoss-1e-12)
	}
	last := res.PValues[len(res.PValues)-1]
	assert.Equal(t, 1, last.Aggregates)
	assert.InDelta(t, 1, last.NormGain, 1e-9)
	assert.Greater(t, res.SuggestedP, 0.0)
	assert.Less(t, res.SuggestedP, 1.0)
	assert.Equal(t, res.SuggestedP, res.Partition.P)
	assert.Equal(t, []string{"job", "c0", "rank 0"}, res.Levels)
	assert.Equal(t, 20, res.Slices)
	assert.InDelta(t, 0.001, res.SliceWidth, 1e-12)

	// The suggested partition has the largest normalized gain - loss gap.
	gap := res.Partition.NormGain - res.Partition.NormLoss
	for _, v := range res.PValues {
		assert.LessOrEqual(t, v.NormGain-v.NormLoss, gap+1e-9)
	}

	_, err = Run(src, RunOptions{P: 2})
	assert.Error(t, err)
	_, err = Run(src, RunOptions{Spec: &Spec{Name: "x", Ranks: []int{0}}})
	assert.ErrorContains(t, err, "not in the hierarchy")
}

func mustModel(t *testing.T, src Source, slices int) *Model {
	m, err := Build(src, slices, 0)
	require.NoError(t, err)
	return m
}

func TestWriteText(t *testing.T) {
	m, h := plantedModel(t)
	res, err := AggregateModel(m, h, RunOptions{P: 0.5, PValues: true})
	require.NoError(t, err)
	var buf strings.Builder
	require.NoError(t, res.WriteText(&buf, 3))
	out := buf.String()
	assert.Contains(t, out, "12 resources, 20 slices of 0.001 s (0 s to 0.02 s), 3 states, mode spacetime")
	assert.Contains(t, out, fmt.Sprintf("p = 0.5: %d aggregates", len(res.Partition.Aggregates)))

	// One line per level, counting the aggregates at that depth.
	counts := map[int]int{}
	for _, ag := range res.Partition.Aggregates {
		counts[ag.Depth]++
	}
	for d, name := range []string{"job", "c0", "rank 0"} {
		assert.Regexp(t, fmt.Sprintf(`level %d +\(e\.g\. %s\) +%d\n`, d, regexp.QuoteMeta(name), counts[d]), out)
	}
	// The perturbation's phase names "wait" among its next states.
	assert.Regexp(t, `0\.012 +0\.016 +send +[0-9.]+% +wait`, out)

	// --top 3: three aggregates listed, the largest first.
	sec := out[strings.Index(out, "Aggregates, largest first"):strings.Index(out, "Significant p values")]
	lines := strings.Split(strings.TrimSpace(sec), "\n")
	assert.Len(t, lines, 2+3, sec)
	assert.Contains(t, lines[0], fmt.Sprintf("(3 of %d;", len(res.Partition.Aggregates)))
	assert.Regexp(t, `^\s+job +12 +0 +0\.01 +compute`, lines[2])

	// A line per significant p value.
	pv := out[strings.Index(out, "Significant p values"):]
	assert.Len(t, strings.Split(strings.TrimSpace(pv), "\n"), 2+len(res.PValues))
}
