package main

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// TestFitBudgetShrinksTiming: a recording over its budget first gives its
// timing what the sequences leave (at least half the budget), its
// intervals merged, and approximates fewer run lengths than with its
// timing whole; every node's rebuilt time stays within a quantum of the
// recorded one (the rounding is carried); a recording within the budget keeps its
// timing byte for byte.
func TestFitBudgetShrinksTiming(t *testing.T) {
	evs := pollLoop(rand.New(rand.NewPCG(11, 3)), 20_000)
	r, err := newRecorderBudget("call,site", flowgraph.TimingBudget{Bytes: 32 << 10}, 0)
	require.NoError(t, err)
	defer r.free()
	for _, e := range evs {
		r.add(e)
	}
	r.settle()
	convert := func() (flowgraph.Graph, *flowgraph.TimingState) {
		g, st, err := recGraphTiming(r.r, testNames)
		require.NoError(t, err)
		require.NotNil(t, st)
		return g, st
	}
	whole, st := convert()
	fits := whole.FitBudgetFrom(1<<40, st)
	require.True(t, fits.Fits())
	wholeTiming := whole.Timing.AppendBinary(nil)
	exact, _ := convert()
	assert.Equal(t, exact.Timing.AppendBinary(nil), wholeTiming, "within the budget the timing is whole")

	budget := fits.Bytes - int64(len(wholeTiming))/3 // room for two thirds of the timing
	shrunk, st := convert()
	a := shrunk.FitBudgetFrom(budget, st)
	require.True(t, a.Fits(), "%+v", a)
	require.NoError(t, shrunk.Validate())
	assert.Less(t, shrunk.Timing.Len(), whole.Timing.Len(), "intervals merged")
	old, _ := convert()
	b := old.FitBudget(budget)
	t.Logf("timing %d -> %d bytes, %d -> %d intervals; budget %d: %+v; with the timing whole: %+v", len(wholeTiming), len(shrunk.Timing.AppendBinary(nil)), whole.Timing.Len(), shrunk.Timing.Len(), budget, a, b)
	assert.Zero(t, a.Approximate+a.Arranged, "merging the timing's intervals is enough")
	assert.Positive(t, b.Approximate, "with the timing whole, run lengths are approximate")

	want, got := nodeTimes(t, &exact), nodeTimes(t, &shrunk)
	q := shrunk.Timing.Quantum()
	for i := range want {
		assert.InDelta(t, want[i], got[i], float64(q), "node %d", i)
	}
}

// pollLoop makes iters iterations of a loop of a send, a poll tried up to
// 8 times and a wait, with times drawn at random: small sequences, a
// timing that fills its budget.
func pollLoop(rng *rand.Rand, iters int) []recEvent {
	var evs []recEvent
	t := int64(1000)
	add := func(call int, site uint64) {
		enter := t + rng.Int64N(5000)
		t = enter + rng.Int64N(3000)
		evs = append(evs, recEvent{Call: call, Site: site, Partner: -1, CommSize: 2, Enter: enter, Exit: t})
	}
	for range iters {
		add(1, 0x1000)
		for range 1 + rng.IntN(8) {
			add(4, 0x2000)
		}
		add(3, 0x3000)
	}
	return evs
}

// nodeTimes sums the rebuilt durations of each node of g.
func nodeTimes(t *testing.T, g *flowgraph.Graph) []int64 {
	sum := make([]int64, len(g.Nodes))
	it := g.Events()
	for it.Next() {
		e := it.Event()
		sum[e.Node] += e.End - e.Start
	}
	require.NoError(t, it.Err())
	return sum
}
