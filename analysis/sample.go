package analysis

import (
	"cmp"
	"slices"

	"mpiflow/flowgraph"
)

// outlierRanks is how many ranks of most and of least MPI time
// SampleRanks picks when it cannot pick them all.
const outlierRanks = 8

// SampleRanks returns the indices of at most n ranks of stats, ascending,
// for a view that cannot show them all: all of them when they fit, else
// the outliers ranks of most and of least MPI time (at most outlierRanks
// each, and a quarter of n) and the rank of the longest run, and ranks
// spread evenly over the rest, so that a job of thousands of ranks shows
// its outliers and its breadth, not only its first ranks.
func SampleRanks(stats []flowgraph.RankStat, n int) (ranks []int, outliers int) {
	all := make([]int, len(stats))
	for i := range all {
		all[i] = i
	}
	if len(stats) <= n {
		return all, 0
	}
	if n <= 0 {
		return nil, 0
	}
	chosen := map[int]bool{}
	byMPI := slices.Clone(all)
	slices.SortStableFunc(byMPI, func(a, b int) int { return cmp.Compare(stats[b].MPI, stats[a].MPI) })
	k := min(outlierRanks, n/4)
	for _, i := range byMPI[:k] {
		chosen[i] = true
	}
	for _, i := range byMPI[len(byMPI)-k:] {
		chosen[i] = true
	}
	if n > 2*k {
		slowest := slices.MaxFunc(all, func(a, b int) int { return cmp.Compare(stats[a].Wall, stats[b].Wall) })
		chosen[slowest] = true
	}
	// The rest evenly over the ranks not chosen yet.
	var rest []int
	for _, i := range all {
		if !chosen[i] {
			rest = append(rest, i)
		}
	}
	left := n - len(chosen)
	for j := range left {
		chosen[rest[j*len(rest)/left]] = true
	}
	out := make([]int, 0, n)
	for _, i := range all {
		if chosen[i] {
			out = append(out, i)
		}
	}
	return out, k
}
