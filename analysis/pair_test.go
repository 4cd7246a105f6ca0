package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"mpiflow/flowgraph"
)

// TestComparedRanks: the rank of most compute time is compared against
// the one of least in its group, else in the job.
func TestComparedRanks(t *testing.T) {
	cases := []struct {
		name             string
		compute, group   []int
		wantFast, wantSl int
	}{
		{"one group", []int{5, 9, 2, 7}, []int{0, 0, 0, 0}, 2, 1},
		{"within the slow rank's group", []int{5, 9, 2, 7}, []int{0, 1, 0, 1}, 3, 1},
		{"alone in its group", []int{5, 9, 2, 7}, []int{0, 1, 0, 0}, 2, 1},
		{"one rank", []int{4}, []int{0}, 0, 0},
		{"ties: the first", []int{3, 3, 3}, []int{0, 0, 0}, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &Job{Summary: &flowgraph.Summary{}}
			for i, v := range c.compute {
				j.Ranks = append(j.Ranks, &Rank{Group: c.group[i]})
				j.Summary.Ranks = append(j.Summary.Ranks, flowgraph.RankStat{Compute: int64(v)})
			}
			fast, slow := j.ComparedRanks()
			assert.Equal(t, c.wantFast, fast, "fast")
			assert.Equal(t, c.wantSl, slow, "slow")
		})
	}
}
