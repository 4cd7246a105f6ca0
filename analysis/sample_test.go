package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// TestSampleRanks: a sample of fewer ranks than the job's holds the
// ranks of most and of least MPI time and of the longest run, and spreads
// the rest over the whole job, not its first ranks.
func TestSampleRanks(t *testing.T) {
	stats := func(n int) []flowgraph.RankStat {
		s := make([]flowgraph.RankStat, n)
		for i := range s {
			// MPI time that is not monotone in the rank; the longest
			// run is rank n/3.
			s[i] = flowgraph.RankStat{Rank: i, MPI: int64((i * 7919) % 1009), Wall: 100}
		}
		s[n/3].Wall = 200
		return s
	}
	for _, c := range []struct{ ranks, n int }{{10, 128}, {1024, 128}, {300, 40}, {50, 3}, {50, 1}, {5, 0}} {
		name := fmt.Sprintf("%d ranks, %d rows", c.ranks, c.n)
		st := stats(c.ranks)
		got, k := SampleRanks(st, c.n)
		if c.ranks <= c.n {
			assert.Len(t, got, c.ranks, name)
			assert.Zero(t, k, name)
			continue
		}
		require.Len(t, got, c.n, name)
		if c.n == 0 {
			continue
		}
		assert.True(t, slices.IsSorted(got), name)
		assert.Len(t, slices.Compact(slices.Clone(got)), c.n, "%s: no rank twice", name)
		assert.Contains(t, got, c.ranks/3, "%s: the longest run", name)
		byMPI := make([]int, c.ranks)
		for i := range byMPI {
			byMPI[i] = i
		}
		slices.SortStableFunc(byMPI, func(a, b int) int { return cmp.Compare(st[b].MPI, st[a].MPI) })
		assert.Equal(t, min(outlierRanks, c.n/4), k, "%s: outliers", name)
		for _, i := range append(byMPI[:k], byMPI[c.ranks-k:]...) {
			assert.Contains(t, got, i, "%s: an outlier of MPI time", name)
		}
		if c.n >= 40 {
			// Spread: no gap much wider than an even share.
			gap := got[0]
			for j := 1; j < len(got); j++ {
				gap = max(gap, got[j]-got[j-1])
			}
			gap = max(gap, c.ranks-1-got[len(got)-1])
			assert.LessOrEqual(t, gap, 2*c.ranks/(c.n-2*k-1)+1, "%s: largest gap", name)
		}
	}
}
