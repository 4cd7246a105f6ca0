package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFastLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	xs := []float64{1, 2, 0.5, math.E, 1e-300, 1e300, math.SmallestNonzeroFloat64, 0, math.Inf(1), 1.99999999, 1.00390625}
	for range 100000 {
		xs = append(xs, math.Exp(rng.Float64()*80-40), rng.Float64())
	}
	for _, x := range xs {
		want := math.Log(x)
		got := fastLog(x)
		if math.IsInf(want, 0) || want == 0 {
			assert.Equal(t, want, got, "x = %v", x)
			continue
		}
		assert.InDelta(t, want, got, 2e-15*max(1, math.Abs(want)), "x = %v", x)
	}
	assert.True(t, math.IsNaN(fastLog(-1)))
}

func BenchmarkLog(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = float64(i+1) / 97
	}
	var s float64
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				s += math.Log(x)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				s += fastLog(x)
			}
		}
	})
	_ = s
}
