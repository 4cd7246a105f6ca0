package flowgraph

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimingMergeEqualsDoubleSpacing checks that merging adjacent
// intervals (a compaction's pass with groups of 2) gives what recording at
// twice the spacing gives, byte for byte, exact or at a coarser quantum:
// rounding with carries makes a merged sum the multiple of the quantum
// nearest to the same time.
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
		for _, shift := range []int{0, 5} {
			record := func(spacing int64) *timingRec {
				r := newTimingRec(TimingBudget{Bytes: MaxTimingBytes})
				r.spacing, r.shift = spacing, shift
				var enter int64
				for i := range nodes {
					enter += gaps[i]
					r.add(int64(i), nodes[i], ein[i], enter, durs[i], gaps[i])
					enter += durs[i]
				}
				return r
			}
			one := record(1).finish(n)
			require.Equal(t, n, one.n)
			for s := int64(1); s < 2*n; s *= 2 {
				r := record(s)
				groups, ok := r.pass(2*s, 0, shift, 0, true, math.MaxInt, n)
				require.True(t, ok)
				merged := Timing{spacing: 2 * s, shift: shift, counted: true, gaps: true, data: r.out.b, n: groups, events: n}
				direct := record(2 * s).finish(n)
				assert.Equal(t, direct, merged, "%d events, spacing %d, quantum 2^%d", n, s, shift)
			}
		}
	}
}

// TestTimingQuantize checks rounding to the nearest multiple of the
// quantum, and that what is not stored is carried.
func TestTimingQuantize(t *testing.T) {
	tests := []struct {
		v     int64
		shift int
		code  uint64
		carry int64
	}{
		{0, 0, 0, 0},
		{7, 0, 7, 0},
		{-5, 0, 0, -5},
		{-5, 3, 0, -5},
		{11, 3, 1, 3},
		{12, 3, 2, -4},
		{math.MaxInt64, 3, math.MaxInt64 >> 3, 7},
		{math.MaxInt64 - 4, 3, math.MaxInt64 >> 3, 3},
		{1<<62 + 4, 3, 1<<59 + 1, -4},
	}
	for _, tt := range tests {
		code, carry := quantize(tt.v, tt.shift)
		assert.Equal(t, tt.code, code, "%d at 2^%d", tt.v, tt.shift)
		assert.Equal(t, tt.carry, carry, "%d at 2^%d", tt.v, tt.shift)
		assert.Equal(t, tt.v, int64(code)<<tt.shift+carry)
	}
}

// TestTimingCap checks the cap keeps the largest codes in their order and
// folds the others into the remainders by kind.
func TestTimingCap(t *testing.T) {
	r := newTimingRec(TimingBudget{})
	r.entries = []uint32{0, 2, 4, 1, 3, 5}
	r.codes = []uint64{5, 9, 1, 9, 7, 2}
	var mc, cc uint64
	got := r.capCodes(3, true, &mc, &cc)
	assert.Equal(t, []bool{false, true, false, true, true, false}, got, "9, 9 and 7 in their order")
	assert.Equal(t, uint64(5+1), mc, "node ids 0 and 4")
	assert.Equal(t, uint64(2), cc, "edge id 5")
	assert.Nil(t, r.capCodes(6, true, &mc, &cc), "no more entries than kept")
	assert.Nil(t, r.capCodes(3, false, &mc, &cc), "not capped")
}

// TestNibbles round-trips nibble varints and rejects overlong ones.
func TestNibbles(t *testing.T) {
	vals := []uint64{0, 7, 8, 63, 64, 511, 1 << 40, math.MaxUint64}
	var w nibWriter
	for _, v := range vals {
		w.put(v)
	}
	pos := 0
	for _, v := range vals {
		n := pos
		got, ok := getNib(w.b, &pos, w.nibs)
		require.True(t, ok)
		assert.Equal(t, v, got)
		assert.Equal(t, nibLen(v), pos-n, "length of %d", v)
	}
	assert.Equal(t, w.nibs, pos)
	over := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x20}
	pos = 0
	_, ok := getNib(over, &pos, 2*len(over))
	assert.False(t, ok, "more than 64 bits")
}
