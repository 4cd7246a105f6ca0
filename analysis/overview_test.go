package analysis

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
)

// TestOverviewWindows: the first view is the chosen window (cut short at
// the run's end) or the run after MPI_Init, then the whole run, then each
// with 2 and 4 times the slices where the span allows (at most
// aggregate.MaxSlices); a window outside the run is ErrWindow.
func TestOverviewWindows(t *testing.T) {
	type w = OverviewWindow
	for _, tc := range []struct {
		name string
		opt  OverviewOptions
		want []w
		err  string
	}{
		{"whole run", OverviewOptions{Slices: 10}, []w{{"whole run", 0, 1000, 10, 0}, {"whole run", 0, 1000, 20, 0}, {"whole run", 0, 1000, 40, 0}}, ""},
		{"after MPI_Init", OverviewOptions{Slices: 100, InitEnd: 500}, []w{{"after MPI_Init", 500, 1000, 100, 0}, {"whole run", 0, 1000, 100, 0},
			{"after MPI_Init", 500, 1000, 200, 0}, {"whole run", 0, 1000, 200, 0}, {"after MPI_Init", 500, 1000, 400, 0}, {"whole run", 0, 1000, 400, 0}}, ""},
		{"too little after MPI_Init", OverviewOptions{Slices: 100, InitEnd: 700}, []w{{"whole run", 0, 1000, 100, 0},
			{"whole run", 0, 1000, 200, 0}, {"whole run", 0, 1000, 400, 0}}, ""},
		{"past the end", OverviewOptions{Slices: 300, WindowFrom: 100, WindowTo: 5000}, []w{{"1e-07 s to 1e-06 s", 100, 1000, 300, 0},
			{"whole run", 0, 1000, 300, 0}, {"1e-07 s to 1e-06 s", 100, 1000, 600, 0}, {"whole run", 0, 1000, 600, 0}}, ""},
		{"after the end", OverviewOptions{Slices: 10, WindowFrom: 2000, WindowTo: 3000}, nil, "starts after the run's end"},
		{"empty", OverviewOptions{Slices: 10, WindowFrom: 20, WindowTo: 20}, nil, "is empty"},
		{"too short", OverviewOptions{Slices: 10, WindowFrom: 10, WindowTo: 15}, nil, "shorter than 10 ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := overviewWindows(0, 1000, tc.opt)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrWindow)
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestBudgetViews: the first view gets its runs (MaxPRuns, else from 40
// to 300 by its size), the others what the budget leaves, at most 40;
// those left fewer than 12 are dropped.
func TestBudgetViews(t *testing.T) {
	wins := []OverviewWindow{{Name: "a", Slices: 30}, {Name: "b", Slices: 30}, {Name: "c", Slices: 120}}
	runs := func(ws []OverviewWindow) []string {
		var out []string
		for _, w := range ws {
			out = append(out, fmt.Sprint(w.Name, w.Runs))
		}
		return out
	}
	assert.Equal(t, []string{"a300", "b40", "c40"}, runs(budgetViews(wins, 3, 0)), "small job")
	assert.Equal(t, []string{"a7", "b40", "c40"}, runs(budgetViews(wins, 3, 7)), "MaxPRuns")
	// 1,000 nodes: 4.5e6 steps a run of 30 slices, 2.9e8 of 120.
	assert.Equal(t, []string{"a55", "b40"}, runs(budgetViews(wins, 1000, 0)), "large job")
}

// TestLegibleP: the suggested p is that of the largest gain-loss gap among
// the partitions with at most a tenth of their area in aggregates of fewer
// than minLeaves leaves, else that of the least thin area.
func TestLegibleP(t *testing.T) {
	h := &aggregate.Hierarchy{Nodes: []aggregate.Node{{Name: "job", Parent: -1, Resource: -1, Leaves: 4}}}
	var ranks []aggregate.Cell
	for r := range 4 {
		h.Nodes = append(h.Nodes, aggregate.Node{Name: fmt.Sprint("r", r), Resource: r, Depth: 1, Leaves: 1})
		ranks = append(ranks, aggregate.Cell{Node: r + 1, First: 0, Last: 9})
	}
	samples := []aggregate.PSample{
		{PValue: aggregate.PValue{P: 0, NormGain: 0.9, NormLoss: 0}, Cells: ranks},
		{PValue: aggregate.PValue{P: 0.5, NormGain: 1, NormLoss: 1}, Cells: []aggregate.Cell{{Node: 0, First: 0, Last: 9}}},
	}
	for _, tc := range []struct {
		minLeaves int
		want      float64
	}{{1, 0.25}, {2, 0.75}, {5, 0.25}} {
		assert.InDelta(t, tc.want, LegibleP(samples, h, tc.minLeaves), 1e-12, "minLeaves %d", tc.minLeaves)
	}
}
