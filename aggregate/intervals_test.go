package aggregate

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// eventsOnly is a Source that hides the closed form of the source it
// wraps: the model is built from its reconstructed events, as
// it was before addIntervals (Build reads any type but FlowSource and
// RankSource through Open).
type eventsOnly struct{ Source }

// checkModelByIntervals builds the model of the ranks with several slice
// counts, by interval and from the events, and compares the durations,
// which must be equal to the ns. It reports how many ranks were timed by
// interval.
func checkModelByIntervals(t *testing.T, name string, h *flowgraph.Header, ranks []*flowgraph.Rank) int {
	t.Helper()
	var timed int
	for _, r := range ranks {
		if _, err := r.Graph.TimedIntervals(); err == nil {
			timed++
		}
	}
	for _, c := range []struct {
		group  bool
		slices []int
	}{{false, []int{1, 7, 300}}, {true, []int{30}}} {
		group := c.group
		src, err := NewRankSource(h, ranks, FlowOptions{Group: group})
		require.NoError(t, err, name)
		for _, nslices := range c.slices {
			want, err := Build(eventsOnly{src}, nslices, 1)
			require.NoError(t, err, name)
			got, err := Build(src, nslices, 1)
			require.NoError(t, err, name)
			if !slices.Equal(want.Dur, got.Dur) {
				require.Equal(t, want.Dur, got.Dur, "%s: %d slices, group %v", name, nslices, group)
			}
			// A window inside the span (as the report's overview after
			// MPI_Init): intervals outside it are left out.
			start, end := src.Span()
			ws, we := start+(end-start)/5, end-(end-start)/7
			want, err = BuildWindow(eventsOnly{src}, ws, we, nslices, 1)
			require.NoError(t, err, name)
			got, err = BuildWindow(src, ws, we, nslices, 1)
			require.NoError(t, err, name)
			if !slices.Equal(want.Dur, got.Dur) {
				require.Equal(t, want.Dur, got.Dur, "%s: window, %d slices, group %v", name, nslices, group)
			}
			// Several windows in one walk (the report's overview).
			wins := []Window{{start, end, nslices}, {ws, we, nslices}, {ws, we, 2 * nslices}}
			wms, err := BuildWindows(eventsOnly{src}, wins, 1)
			require.NoError(t, err, name)
			gms, err := BuildWindows(src, wins, 2)
			require.NoError(t, err, name)
			for k := range wins {
				if !slices.Equal(wms[k].Dur, gms[k].Dur) {
					require.Equal(t, wms[k].Dur, gms[k].Dur, "%s: windows, window %d, %d slices, group %v", name, k, nslices, group)
				}
			}
		}
	}
	return timed
}

// TestModelByIntervalsMatchesEvents compares the microscopic model built
// by timing interval with the one built from the reconstructed events on
// generated jobs (exact and coarse timings) and on the recorded runs of
// the test applications (testdata/profiles).
func TestModelByIntervalsMatchesEvents(t *testing.T) {
	var timed int
	for seed := uint64(1); seed <= 8; seed++ {
		opt := flowgen.Options{Seed: seed, Events: 8000, Depth: 1 + int(seed%4), Sites: 4 + int(seed%12), Branchy: seed%2 == 0,
			TimingBytes: []int{0, 1 << 10, 4 << 10}[seed%3]}
		h, ranks := flowgen.Run(opt, 3, 2)
		timed += checkModelByIntervals(t, fmt.Sprintf("flowgen seed %d", seed), &h, ranks)
	}
	// Polls: runs of repeats are added at once.
	h, ranks := flowgen.Run(flowgen.HPCCShape(40_000), 2, 2)
	timed += checkModelByIntervals(t, "HPCC shape", &h, ranks)
	files, err := filepath.Glob("../testdata/profiles/*.mpiflow")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		ranks, err := f.ReadRanks(nil)
		require.NoError(t, err)
		timed += checkModelByIntervals(t, filepath.Base(path), &f.Header, ranks)
		require.NoError(t, f.Close())
	}
	require.Greater(t, timed, 30, "ranks timed by interval")
}

// ownOpen embeds a RankSource but serves other events, as fidelity's
// source of the recorded full traces does.
type ownOpen struct{ *RankSource }

func (s ownOpen) Open(i int) (Reader, error) {
	start, _ := s.Span()
	return &memReader{evs: []StateEvent{{Resource: i, State: 0, Start: start, End: start + 1}}}, nil
}

// TestBuildReadsEmbeddingSourceThroughOpen: a source that embeds a
// RankSource and has an Open of its own is read through that Open, not by
// the RankSource's timing intervals.
func TestBuildReadsEmbeddingSourceThroughOpen(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 500}, 2, 2)
	src, err := NewRankSource(&h, ranks, FlowOptions{})
	require.NoError(t, err)
	m, err := Build(ownOpen{src}, 5, 1)
	require.NoError(t, err)
	var total int64
	for _, d := range m.Dur {
		total += d
	}
	require.Equal(t, int64(2), total, "one ns of Compute per rank")
}
