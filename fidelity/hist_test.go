package fidelity

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuckets(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 255, 256, 257, 258, 511, 512, 1000, 1 << 20, 1<<40 + 12345, 1<<62 + 1} {
		b := bucketOf(v)
		assert.GreaterOrEqual(t, b, prev, "buckets do not decrease with values (%d)", v)
		prev = b
		lo := lowest(b)
		assert.LessOrEqual(t, lo, v)
		assert.Equal(t, b, bucketOf(lo), "the lowest value of a bucket is in it (%d)", v)
		assert.LessOrEqual(t, float64(v-lo), float64(v)/(1<<subBits), "resolution at %d", v)
		if v < 256 {
			assert.Equal(t, v, lo, "small values are exact")
		}
	}
}

func TestQuantiles(t *testing.T) {
	tests := []struct {
		name   string
		values []int64
		want   Percentiles
	}{
		{"none", nil, Percentiles{}},
		{"one", []int64{-7}, Percentiles{7, 7, 7, 7}},
		{"one outlier of 100", append(make([]int64, 99), 1000), Percentiles{0, 0, 0, 1000}},
		{"ten", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Percentiles{5, 9, 10, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h hist
			for _, v := range tt.values {
				h.add(v)
			}
			assert.Equal(t, tt.want, h.percentiles())
		})
	}
}

// On many spread values the quantiles are within the resolution of the
// exact ones, and merging histograms is adding their values.
func TestQuantilesApproximate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a, b, all hist
	var vals []int64
	for i := range 100000 {
		v := int64(rng.ExpFloat64() * 1e6)
		vals = append(vals, v)
		all.add(v)
		if i%2 == 0 {
			a.add(v)
		} else {
			b.add(v)
		}
	}
	a.merge(&b)
	require.Equal(t, all, a)
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := all.quantile(q)
		assert.InDelta(t, float64(exact), float64(got), float64(exact)/(1<<subBits)+1, "q=%v", q)
	}
	assert.Equal(t, vals[len(vals)-1], all.max)
}
