package aggregate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValuesModel checks the integration of variables over slices on an
// example computed by hand: [0, 4000) ns in 2 slices of 2000 ns, a cell
// the integral in ns at the variable's peak |value|.
func TestValuesModel(t *testing.T) {
	src := &Values{
		Res:       []Resource{{Name: "a"}, {Name: "b", Rank: 1}},
		Variables: []string{"v", "u", "zero"},
		Start:     0, End: 4000,
		Events: [][]ValueEvent{
			// v of a: 2 on [0, 1000), 4 (the peak) from there on.
			{{Resource: 0, Variable: 0, Start: 0, End: 1000, Value: 2}, {Resource: 0, Variable: 0, Start: 1000, End: 4000, Value: 4}},
			{
				{Resource: 1, Variable: 0, Start: 500, End: 3000, Value: -2},   // negative: -0.5 at the peak
				{Resource: 1, Variable: 1, Start: 3000, End: 6000, Value: 10},  // ends after the span
				{Resource: 1, Variable: 2, Start: 0, End: 4000, Value: 0},      // always 0
				{Resource: 1, Variable: 1, Start: 1999, End: 2001, Value: 2.5}, // across a slice bound
			},
		},
	}
	m, err := Build(src, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2000, 4000}, m.Bounds)
	for _, tt := range []struct {
		r, slice int
		want     []int64 // v, u, zero
	}{
		{0, 0, []int64{0.5*1000 + 1*1000, 0, 0}},
		{0, 1, []int64{2000, 0, 0}},
		{1, 0, []int64{-0.5 * 1500, 0, 0}},        // 0.25 * 1 ns rounds to 0
		{1, 1, []int64{-0.5 * 1000, 1000 + 0, 0}}, // u: 1000 ns at the peak, 0.25 * 1 ns rounds to 0
	} {
		assert.Equal(t, tt.want, m.Cell(tt.r, tt.slice), "resource %d slice %d", tt.r, tt.slice)
	}

	res, err := Run(src, RunOptions{Slices: 2, P: 0})
	require.NoError(t, err)
	assert.Equal(t, []string{"v", "u", "zero"}, res.States)
	assert.Len(t, res.Partition.Aggregates, 4, "p = 0 keeps every cell")
	// Proportions are means over the aggregate as shares of the peak.
	means := map[string][]float64{}
	for _, a := range res.Partition.Aggregates {
		means[a.Path] = append(means[a.Path], a.Proportions[0])
	}
	assert.Equal(t, map[string][]float64{"all/a": {0.75, 1}, "all/b": {-0.375, -0.25}}, means)

	_, err = src.Open(0)
	assert.Error(t, err, "variables are integrated, not read as states")
}
