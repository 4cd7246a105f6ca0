package flowgraph

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMergeRuns: merging ascending runs sorts as a sort does.
func TestMergeRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var bs []selfBlock
		runs := []int{0}
		for k := range r.IntN(9) {
			start := int64(r.IntN(50))
			for range r.IntN(20) {
				start += 1 + int64(r.IntN(30))
				bs = append(bs, selfBlock{start: start, count: 1, edge: k})
			}
			runs = append(runs, len(bs))
		}
		want := slices.Clone(bs)
		slices.SortStableFunc(want, func(a, b selfBlock) int { return cmp.Compare(a.start, b.start) })
		got := mergeRuns(bs, runs, func(b selfBlock) int64 { return b.start })
		assert.True(t, slices.IsSortedFunc(got, func(a, b selfBlock) int { return cmp.Compare(a.start, b.start) }))
		assert.ElementsMatch(t, want, got)
	}
}
