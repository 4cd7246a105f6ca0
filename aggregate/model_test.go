package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func resources(n int) []Resource {
	res := make([]Resource, n)
	for i := range res {
		res[i] = Resource{Rank: i}
	}
	return res
}

func TestNewModelBounds(t *testing.T) {
	tests := []struct {
		name       string
		start, end int64
		slices     int
		want       []int64
	}{
		{"even", 0, 100, 4, []int64{0, 25, 50, 75, 100}},
		{"rounded down", 0, 10, 3, []int64{0, 3, 6, 10}},
		{"offset", 1000, 1010, 2, []int64{1000, 1005, 1010}},
		// t*span overflows int64 here: the bounds must still be exact.
		{"long span", 0, 1 << 62, 4, []int64{0, 1 << 60, 2 << 60, 3 << 60, 1 << 62}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewModel(resources(1), []string{"a"}, tt.start, tt.end, tt.slices)
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.Bounds)
		})
	}
}

func TestNewModelErrors(t *testing.T) {
	tests := []struct {
		name       string
		res        int
		states     []string
		start, end int64
		slices     int
	}{
		{"zero slices", 1, []string{"a"}, 0, 100, 0},
		{"too many slices", 1, []string{"a"}, 0, 1e6, MaxSlices + 1},
		{"span too short", 1, []string{"a"}, 0, 3, 4},
		{"empty span", 1, []string{"a"}, 10, 10, 1},
		{"no resources", 0, []string{"a"}, 0, 100, 2},
		{"no states", 1, nil, 0, 100, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewModel(resources(tt.res), tt.states, tt.start, tt.end, tt.slices)
			assert.Error(t, err)
		})
	}
}

func TestBuildSplitsOverlaps(t *testing.T) {
	// Slices of 25 ns over [0, 100); two states.
	src := &MemSource{
		Res:        resources(2),
		StateNames: []string{"a", "b"},
		Start:      0, End: 100,
		Events: [][]StateEvent{
			{
				{State: 0, Start: -10, End: 5},  // clipped at 0: 5 ns in slice 0
				{State: 1, Start: 10, End: 60},  // 15 + 25 + 10
				{State: 0, Start: 60, End: 75},  // ends on a boundary: 15 in slice 2
				{State: 0, Start: 90, End: 200}, // clipped at 100: 10 in slice 3
				{State: 1, Start: 75, End: 75},  // empty
				{State: 1, Start: 20, End: 22},  // out of order: 2 in slice 0
			},
			{
				{Resource: 1, State: 1, Start: 0, End: 100}, // the whole span
			},
		},
	}
	want := [][][]int64{ // resource, slice, state
		{{5, 17}, {0, 25}, {15, 10}, {10, 0}},
		{{0, 25}, {0, 25}, {0, 25}, {0, 25}},
	}
	for _, workers := range []int{1, 2} {
		m, err := Build(src, 4, workers)
		require.NoError(t, err)
		for r := range want {
			for s := range want[r] {
				assert.Equal(t, want[r][s], m.Cell(r, s), "resource %d slice %d", r, s)
			}
		}
	}
}

func TestBuildRejectsBadState(t *testing.T) {
	src := &MemSource{
		Res: resources(1), StateNames: []string{"a"}, Start: 0, End: 10,
		Events: [][]StateEvent{{{State: 3, Start: 0, End: 1}}},
	}
	_, err := Build(src, 2, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "state 3")
}

// The streaming Builder and the parallel Build must agree, and the total
// time of each resource and state must be kept whatever the slicing.
func TestBuilderMatchesBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nres, nx = 5, 3
	src := &MemSource{Res: resources(nres), StateNames: []string{"a", "b", "c"}, Start: 0, End: 1_000_003}
	src.Events = make([][]StateEvent, nres)
	total := make([][]int64, nres)
	for r := range src.Events {
		total[r] = make([]int64, nx)
		tm := int64(0)
		for tm < src.End {
			d := rng.Int64N(50_000) + 1
			e := min(tm+d, src.End)
			x := rng.IntN(nx)
			src.Events[r] = append(src.Events[r], StateEvent{Resource: r, State: x, Start: tm, End: e})
			total[r][x] += e - tm
			tm = e
		}
	}
	for _, slices := range []int{1, 7, 30, 1000} {
		m, err := Build(src, slices, 2)
		require.NoError(t, err)
		b, err := NewBuilder(src.Res, src.StateNames, src.Start, src.End, slices)
		require.NoError(t, err)
		for r := range src.Events {
			for _, ev := range src.Events[r] {
				require.NoError(t, b.Add(ev))
			}
		}
		assert.Equal(t, m.Dur, b.Model().Dur, "%d slices", slices)
		for r := range total {
			got := make([]int64, nx)
			for s := 0; s < slices; s++ {
				for x, d := range m.Cell(r, s) {
					got[x] += d
				}
			}
			assert.Equal(t, total[r], got, "%d slices, resource %d", slices, r)
		}
	}
}

func TestBuilderAddErrors(t *testing.T) {
	b, err := NewBuilder(resources(2), []string{"a"}, 0, 10, 2)
	require.NoError(t, err)
	assert.Error(t, b.Add(StateEvent{Resource: 2, Start: 0, End: 1}))
	assert.Error(t, b.Add(StateEvent{Resource: -1, Start: 0, End: 1}))
	assert.Error(t, b.Add(StateEvent{State: 1, Start: 0, End: 1}))
	assert.Error(t, b.Add(StateEvent{Start: 5, End: 1}))
}
