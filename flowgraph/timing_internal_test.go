package flowgraph

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mergePairs merges the intervals of tm two by two the way a compaction
// does (pass with groups of 2).
func mergePairs(t *testing.T, tm Timing) Timing {
	t.Helper()
	r := newTimingRec(TimingBudget{Bytes: MaxTimingBytes})
	r.spacing, r.keep, r.bkeep = tm.spacing, tm.keep, tm.keep
	// all intervals but the last closed, the last one open
	it := tm.Intervals()
	lastPos := 0
	for k := int64(0); k < tm.n; k++ {
		lastPos = it.pos
		require.True(t, it.Next())
	}
	r.buf = append([]byte(nil), tm.data[:lastPos]...)
	r.nclosed = tm.n - 1
	iv := it.Interval()
	for _, e := range iv.Entries {
		r.open.add(uint32(e.id()), e.Sum)
	}
	r.mrest, r.crest = iv.MPIRest, iv.ComputeRest
	var out []byte
	r.pass(2, true, &out)
	return Timing{spacing: 2 * tm.spacing, keep: tm.keep, data: out, n: (tm.n + 1) / 2}
}

// TestTimingMergeEqualsDoubleSpacing checks that merging adjacent
// intervals gives what recording at twice the spacing gives, byte for byte.
func TestTimingMergeEqualsDoubleSpacing(t *testing.T) {
	for _, n := range []int64{1, 2, 7, 64, 1000, 4097} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		nodes := make([]int, n)
		durs, gaps := make([]int64, n), make([]int64, n)
		edges := map[[2]int]int{}
		ein := make([]int, n)
		for i := range nodes {
			if rng.IntN(3) == 0 {
				nodes[i] = rng.IntN(40)
			} else {
				nodes[i] = i % 5
			}
			durs[i], gaps[i] = rng.Int64N(1<<rng.IntN(40)), rng.Int64N(1000)
			if i > 0 {
				k := [2]int{nodes[i-1], nodes[i]}
				if _, ok := edges[k]; !ok {
					edges[k] = len(edges)
				}
				ein[i] = edges[k]
			}
		}
		record := func(spacing int64) Timing {
			r := newTimingRec(TimingBudget{Bytes: MaxTimingBytes})
			r.spacing = spacing
			for i := range nodes {
				r.add(int64(i), nodes[i], ein[i], durs[i], gaps[i])
			}
			return r.finish(n)
		}
		one := record(1)
		require.Equal(t, n, one.n)
		for s := int64(1); s < 2*n; s *= 2 {
			merged := mergePairs(t, record(s))
			direct := record(2 * s)
			assert.Equal(t, direct, merged, "%d events, spacing %d", n, s)
		}
	}
}

// TestTimingCap checks the cap keeps the largest entries in their order
// and folds the others into the remainders by kind.
func TestTimingCap(t *testing.T) {
	r := newTimingRec(TimingBudget{})
	r.keep = 3
	sum := []int64{5, 9, 1, 9, 7, 2}
	list := []uint32{0, 1, 2, 3, 4, 5}
	var mr, cr int64
	got := r.capList(list, sum, &mr, &cr)
	assert.Equal(t, []uint32{1, 3, 4}, got, "9, 9 and 7 in their order")
	assert.Equal(t, int64(5+1), mr, "node ids 0 and 2")
	assert.Equal(t, int64(2), cr, "edge id 5")
}
