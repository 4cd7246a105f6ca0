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
					r.add(int64(i), nodes[i], ein[i], enter, durs[i], gaps[i], past{}, past{})
					enter += durs[i]
				}
				return r
			}
			one := record(1).finish(n)
			require.Equal(t, n, one.n)
			for s := int64(1); s < 2*n; s *= 2 {
				r := record(s)
				r.lastIn = lastTimes{} // as finish: no event follows
				groups, ok := r.pass(2*s, 0, shift, 0, true, math.MaxInt, n)
				require.True(t, ok)
				merged := Timing{spacing: 2 * s, shift: shift, counted: true, tail: timingTail, data: r.out.b, n: groups, events: n}
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

// TestTimingLongEvents: in a poll of 1 us tries, whose intervals span 160
// ms, a gap of 10 ms (an outlier, at least 1/16 of the span) ends an
// interval before the try after it, and a try of 10 ms ends its interval
// after it; a gap of 10 ms that every iteration of a loop has (no outlier)
// does not, nor does an outlier shorter than 1/16 of the span.
func TestTimingLongEvents(t *testing.T) {
	type event struct {
		node, edge int
		gap, dur   int64
	}
	poll := func(long int, gap, dur int64) func(i int) event {
		return func(i int) event {
			if i == long {
				return event{0, 0, gap, dur}
			}
			return event{0, 0, 500, 500}
		}
	}
	tests := []struct {
		name      string
		events    int
		event     func(i int) event
		wantStart []int64 // interval starts after the first
	}{
		{"long gap", 1000, poll(500, 10_000_000, 500), []int64{500}},
		{"long try", 1000, poll(500, 500, 10_000_000), []int64{501}},
		{"short outlier", 1000, poll(500, 9_000_000, 500), nil},
		{"every iteration", 20, func(i int) event { return event{i % 2, i % 2, cond(i%2 == 1, 10_000_000, 500), 500} }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTimingRec(TimingBudget{Bytes: MaxTimingBytes})
			r.spacing, r.span = 1<<20, 160_000_000
			r.setDeadline()
			var enter int64
			nodes, edges := map[int]past{}, map[int]past{}
			for i := range tc.events {
				ev := tc.event(i)
				if i == 0 {
					ev.gap = 0
				}
				enter += ev.gap
				r.add(int64(i), ev.node, ev.edge, enter, ev.dur, ev.gap, nodes[ev.node], edges[ev.edge])
				nodes[ev.node] = past{nodes[ev.node].total + ev.dur, nodes[ev.node].count + 1}
				if i > 0 {
					edges[ev.edge] = past{edges[ev.edge].total + ev.gap, edges[ev.edge].count + 1}
				}
				enter += ev.dur
			}
			require.Less(t, enter, r.span, "no deadline ends an interval")
			tm := r.finish(int64(tc.events))
			var starts []int64
			it := tm.Intervals()
			for it.Next() {
				if s := it.Interval().Start; s > 0 {
					starts = append(starts, s)
				}
			}
			require.NoError(t, it.Err())
			assert.Equal(t, tc.wantStart, starts)
		})
	}
}

func cond(c bool, a, b int64) int64 {
	if c {
		return a
	}
	return b
}
