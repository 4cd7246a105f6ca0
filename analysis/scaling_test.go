package analysis

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// loopJob writes a job of nranks ranks, each running iters iterations of
// a loop (MPI_Send, 10 ns of compute, MPI_Recv, period ns in all) between
// MPI_Init and MPI_Finalize, and loads it with its loops.
func loopJob(t *testing.T, nranks, iters int, period int64) *Job {
	t.Helper()
	h := flowgraph.Header{Version: flowgraph.FormatVersion, NumRanks: nranks, KeyFields: []string{flowgraph.KeyCall, flowgraph.KeySite},
		Wallclock: int64(iters)*period + 100}
	var ranks []*flowgraph.Rank
	for r := 0; r < nranks; r++ {
		b := flowgraph.NewBuilder(0, 0)
		add := func(call string, addr uint64, enter, exit int64) {
			s := b.Site(flowgraph.CallSite{Addr: addr})
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: s, Partner: -1, Comm: -1}, Enter: enter, Exit: exit, Partner: -1})
		}
		add("MPI_Init", 0x10, 0, 10)
		at := int64(20)
		for i := 0; i < iters; i++ {
			add("MPI_Send", 0x20, at, at+period/4)
			add("MPI_Recv", 0x30, at+period/4+10, at+period-10)
			at += period
		}
		add("MPI_Finalize", 0x40, at, at+5)
		ranks = append(ranks, &flowgraph.Rank{Rank: r, Complete: true, Graph: b.Graph()})
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("job%d.mpiflow", nranks))
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	job, err := Load(path, Options{NoResolve: true, NoSequences: true})
	require.NoError(t, err)
	return job
}

func TestScaling(t *testing.T) {
	const period = 1000
	for _, tc := range []struct {
		name          string
		weak          bool
		iters2, iter4 int     // iterations a rank at 2 and 4 ranks
		eff           float64 // the loop's efficiency at 4 ranks
		lost          float64 // its time lost at 4 ranks, over the ranks
	}{
		{"strong, ideal", false, 400, 200, 1, 0},
		{"strong, no speed-up", false, 400, 400, 0.5, 4*400*period - 2*400*period},
		{"weak, ideal", true, 400, 400, 1, 0},
		{"weak, twice the time", true, 400, 800, 0.5, 4*800*period - 4*400*period},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Given out of order: sorted by rank count.
			s := NewScaling([]*Job{loopJob(t, 4, tc.iter4, period), loopJob(t, 2, tc.iters2, period)}, tc.weak)
			require.Len(t, s.Runs, 2)
			assert.Equal(t, []int{2, 4}, []int{s.Runs[0].Ranks, s.Runs[1].Ranks})
			require.NotEmpty(t, s.Loops)
			l := s.Loops[0]
			assert.Contains(t, l.Name, "MPI_Send", "the loop, by its header")
			require.Len(t, l.Points, 2)
			for k, p := range l.Points {
				assert.True(t, p.Present, "run %d", k)
			}
			assert.InDelta(t, 1, l.Points[0].Efficiency, 1e-9, "the reference")
			assert.InDelta(t, tc.eff, l.Points[1].Efficiency, 0.01)
			assert.InDelta(t, tc.lost, l.Lost, 0.01*float64(4*tc.iter4*period))
			assert.InDelta(t, float64(2*tc.iters2*period), l.Points[0].Time, 0.01*float64(2*tc.iters2*period))
			// The calls scale as the loop: MPI_Recv's share of it is fixed.
			var recv *ScalingItem
			for i := range s.Calls {
				if s.Calls[i].Name == "MPI_Recv" {
					recv = &s.Calls[i]
				}
			}
			require.NotNil(t, recv)
			assert.InDelta(t, tc.eff, recv.Points[1].Efficiency, 0.01)
			assert.EqualValues(t, 4*tc.iter4, recv.Points[1].Calls)
			// Items by time lost, largest first.
			for i := 1; i < len(s.Calls); i++ {
				assert.GreaterOrEqual(t, s.Calls[i-1].Lost, s.Calls[i].Lost)
			}
		})
	}
}

// A loop that only the reference has is there, without an efficiency in
// the run that lacks it and without time lost.
func TestScalingNewLoop(t *testing.T) {
	a, b := loopJob(t, 2, 100, 1000), loopJob(t, 4, 0, 1000)
	s := NewScaling([]*Job{a, b}, false)
	require.NotEmpty(t, s.Loops)
	l := s.Loops[0]
	assert.True(t, l.Points[0].Present)
	assert.False(t, l.Points[1].Present)
	assert.Zero(t, l.Points[1].Efficiency)
	assert.Zero(t, l.Lost)
}
