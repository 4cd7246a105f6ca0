package analysis

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPartsRelative(t *testing.T) {
	tests := []struct {
		name string
		per  []float64 // time per iteration of each iteration, in order
		want float64
	}{
		{"steady: no variation", repeat(1, 60), 0},
		{"half the run 1.5x slow: half a unit over a mean of 1.25", append(repeat(1, 30), repeat(1.5, 30)...), 0.5 / 1.25},
		{"one part 10x (the start-up): left out", append([]float64{10, 10}, repeat(1, 58)...), 0},
		{"too few iterations for parts", repeat(1, 3), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newParts(int64(len(tc.per)), 1)
			var sum float64
			for _, v := range tc.per {
				p.add(v, 1)
				sum += v
			}
			assert.InDelta(t, tc.want, p.relative(sum/float64(len(tc.per))), 0.02)
		})
	}
}

// repeat returns n copies of v.
func repeat(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }

// The variation is found on variationRanks ranks, evenly spread, the first
// included; on all of them when there are no more.
func TestWalksVariation(t *testing.T) {
	walked := func(n int) []int {
		j := &Job{variation: true}
		var out []int
		for k := range n {
			if j.walksVariation(k, n) {
				out = append(out, k)
			}
		}
		return out
	}
	assert.Equal(t, []int{0, 1, 2}, walked(3))
	assert.Equal(t, []int{0, 1, 2, 3}, walked(4))
	assert.Equal(t, []int{0, 2, 4, 6}, walked(8))
	assert.Equal(t, []int{0, 4, 8, 12}, walked(16))
	assert.Len(t, walked(1000), variationRanks)
	assert.False(t, (&Job{}).walksVariation(0, 1), "without Options.Variation")
}
