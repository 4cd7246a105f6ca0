package analysis

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// genJob writes a generated job and returns its path; mutate may change
// it before it is written.
func genJob(t *testing.T, nranks int, mutate func(h *flowgraph.Header, ranks []*flowgraph.Rank)) string {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 5, Events: 3000, Depth: 3, Sites: 10, MaxIter: 8, Branchy: true}, nranks, 2)
	if mutate != nil {
		mutate(&h, ranks)
	}
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path
}

// TestGroupsAgreeWithTrees checks that the numbers a group's drawing shows
// (mean levels) are those of its loop tree (the `mpiflow loops` table):
// iterations, calls per iteration and time share of every loop.
func TestGroupsAgreeWithTrees(t *testing.T) {
	// The generated ranks 0 and 1 have one structure (back edges
	// included) with different counts and times.
	in := genJob(t, 8, nil)
	job, err := Load(in, Options{Similarity: 1})
	require.NoError(t, err)
	require.Len(t, job.Ranks, 8)
	require.GreaterOrEqual(t, len(job.Groups), 2)
	g := job.Groups[0]
	require.Equal(t, []int{0, 1}, g.Members)
	assert.Equal(t, "0-1", job.Members(0))
	require.NotEmpty(t, g.Tree, "the generated program has loops")
	nt, nc := MetricIndex(job.Metrics, MetricTime), MetricIndex(job.Metrics, MetricCount)
	byID := map[int]*Elem{}
	for l := range g.Levels {
		for i := range g.Levels[l].Nodes {
			if e := &g.Levels[l].Nodes[i]; e.Kind == KindLoop {
				byID[e.Loop] = e
			}
		}
	}
	for _, row := range g.Tree {
		e := byID[row.ID]
		require.NotNil(t, e, "loop %d drawn", row.ID)
		assert.Equal(t, row.Name, e.Name)
		assert.Equal(t, 2, row.Ranks)
		assert.InDelta(t, row.AvgIterations, e.Vals[nc], 1e-9, row.Name)
		assert.InDelta(t, row.AvgShare, e.Share, 1e-9, row.Name)
		if e.Vals[nc] > 0 {
			assert.InDelta(t, row.CallsPerIteration, e.Calls/e.Vals[nc], 1e-9, row.Name)
			assert.InDelta(t, row.TimePerIteration/1e9, e.Vals[nt]/e.Vals[nc], 1e-9*row.TimePerIteration, row.Name)
		}
	}
	for i, r := range job.Ranks {
		assert.Equal(t, job.Groups[r.Group].Signature, r.Loops.Signature, "rank %d", i)
	}
	// Calls are the summary's, by time.
	assert.Equal(t, job.Summary.SortedCalls(), job.Calls)
	var sum int64
	for _, r := range job.Ranks {
		for _, v := range r.CallTime {
			sum += v
		}
	}
	mpi, _, _ := job.Summary.Totals()
	assert.Equal(t, mpi, sum, "per-rank call times add up to the MPI time")
}

// TestNoSequences: a job analysed without keeping the ranks' sequences has
// the same tables, groups, levels and trees as with them, whatever the
// number of workers, and holds no sequence afterwards; with NoGraphs it
// holds no graph tables and no collapse either.
func TestNoSequences(t *testing.T) {
	// HPCC's shape has polls: its sequences are stored as positions, which
	// the loops read lazily.
	h, ranks := flowgen.Run(flowgen.HPCCShape(30_000), 4, 2)
	polled := filepath.Join(t.TempDir(), "polled.mpiflow")
	require.NoError(t, flowgraph.WriteFile(polled, h, ranks))
	for _, in := range []string{genJob(t, 8, nil), polled} {
		testNoSequences(t, in)
	}
}

func testNoSequences(t *testing.T, in string) {
	want, err := Load(in, Options{})
	require.NoError(t, err)
	for _, opt := range []Options{
		{NoSequences: true, Workers: 1},
		// As loops loads: without the call-site table, which changes
		// nothing else, and without the graphs, once read.
		{NoSequences: true, Workers: 3, NoSiteTable: true},
		{NoSequences: true, Workers: 3, NoSiteTable: true, NoGraphs: true},
		// every block large: read one at a time, the GC lowered
		{NoSequences: true, Workers: 3, NoGraphs: true, LargeBlock: 1},
		{NoSequences: true, Workers: 1, NoGraphs: true, Similarity: 1},
	} {
		name := fmt.Sprintf("%+v", opt)
		got, err := Load(in, opt)
		require.NoError(t, err)
		assert.Equal(t, want.Calls, got.Calls, name)
		if opt.NoSiteTable {
			assert.Empty(t, got.CallSites, name)
		} else {
			assert.Equal(t, want.CallSites, got.CallSites, name)
		}
		assert.Equal(t, want.Comm, got.Comm, name)
		assert.Equal(t, want.FileBytes, got.FileBytes, name)
		if opt.Similarity == 1 {
			want, err = Load(in, Options{Similarity: 1})
			require.NoError(t, err)
		}
		// Levels hold NaN (a metric a rank lacks), which no Equal takes
		// for itself: compared as printed.
		assert.Equal(t, fmt.Sprintf("%+v", want.Groups), fmt.Sprintf("%+v", got.Groups), name)
		assert.Equal(t, want.LoopTable, got.LoopTable, name)
		require.Len(t, got.Ranks, len(want.Ranks))
		for i, r := range got.Ranks {
			assert.Equal(t, want.Ranks[i].Label, r.Label)
			assert.Equal(t, fmt.Sprintf("%+v", want.Ranks[i].Levels), fmt.Sprintf("%+v", r.Levels), "rank %d", i)
			assert.Equal(t, want.Ranks[i].Loops, r.Loops, "rank %d", i)
			assert.Equal(t, want.Ranks[i].CallTime, r.CallTime, "rank %d", i)
			if opt.NoGraphs {
				assert.Nil(t, r.Collapsed, "rank %d keeps its collapse", i)
				assert.True(t, r.Graph.Nodes == nil && r.Graph.Edges == nil && r.Graph.Sites == nil, "rank %d keeps its graph", i)
				continue
			}
			assert.Equal(t, want.Ranks[i].Collapsed, r.Collapsed, "rank %d", i)
			for k := range r.Graph.Edges {
				require.True(t, r.Graph.Edges[k].Seq.IsZero(), "rank %d edge %d keeps its sequence", i, k)
			}
		}
	}
}

// TestLowerGC: a large block is read with the garbage collector's
// percentage at largeBlockGC, or lower if it was, and restored after.
func TestLowerGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct{ before, while int }{{100, largeBlockGC}, {10, 10}, {-1, largeBlockGC}} {
		debug.SetGCPercent(tc.before)
		restore := lowerGC()
		assert.Equal(t, tc.while, debug.SetGCPercent(tc.while), "GOGC %d", tc.before)
		restore()
		assert.Equal(t, tc.before, debug.SetGCPercent(tc.before), "GOGC %d restored", tc.before)
	}
	debug.SetGCPercent(100)
	var while []int // as each rank is read (one at a time: no other reader)
	progress := func(stage string, done, total int) {
		if stage == "reading ranks" {
			p := debug.SetGCPercent(-1)
			debug.SetGCPercent(p)
			while = append(while, p)
		}
	}
	_, err := Load(genJob(t, 4, nil), Options{NoSequences: true, NoGraphs: true, Workers: 2, LargeBlock: 1, Progress: progress})
	require.NoError(t, err)
	assert.Equal(t, []int{largeBlockGC, largeBlockGC, largeBlockGC, largeBlockGC}, while)
	assert.Equal(t, 100, debug.SetGCPercent(100), "restored after reading large blocks")
}

// TestNoGraphsStats: the statistics of a job read as stats reads it are
// the same without the graphs, which it no longer holds.
func TestNoGraphsStats(t *testing.T) {
	for _, in := range []string{genJob(t, 8, nil), "../testdata/profiles/regions-counters.mpiflow", "../testdata/profiles/threads.mpiflow"} {
		opt := Options{NoLoops: true, NoSequences: true, Workers: 3}
		want, err := Load(in, opt)
		require.NoError(t, err)
		opt.NoGraphs = true
		got, err := Load(in, opt)
		require.NoError(t, err)
		assert.Equal(t, want.Summary, got.Summary, in)
		assert.Equal(t, want.Calls, got.Calls, in)
		assert.Equal(t, want.CallSites, got.CallSites, in)
		assert.Equal(t, want.Comm, got.Comm, in)
		assert.Equal(t, want.Sizes, got.Sizes, in)
		assert.Equal(t, want.Regions, got.Regions, in)
		assert.Equal(t, want.Budget, got.Budget, in)
		assert.Equal(t, want.FileBytes, got.FileBytes, in)
		assert.Equal(t, want.Spreads(), got.Spreads(), in)
		for i, r := range got.Ranks {
			assert.Equal(t, want.Ranks[i].CallTime, r.CallTime, in)
			assert.Nil(t, r.Graph.Nodes, "%s: rank %d keeps its graph", in, i)
		}
	}
}

func TestSelection(t *testing.T) {
	in := genJob(t, 4, nil)
	job, err := Load(in, Options{Ranks: map[int]bool{1: true, 3: true}, NoLoops: true})
	require.NoError(t, err)
	require.Len(t, job.Ranks, 2)
	assert.Equal(t, 3, job.Ranks[job.FindRank(3, 0)].Rank.Rank)
	assert.Equal(t, -1, job.FindRank(0, 0))
	assert.Empty(t, job.Groups, "no loop analysis asked for")
	assert.Equal(t, "rank 1", job.Ranks[0].Label)

	_, err = Load(in, Options{Ranks: map[int]bool{9: true}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no rank matches the selection (the file has ranks 0-3)")
	_, err = Load(filepath.Join(t.TempDir(), "missing.mpiflow"), Options{})
	require.Error(t, err)
}

func TestMembersWithThreads(t *testing.T) {
	in := genJob(t, 4, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		ranks[3].Rank, ranks[3].Thread = 2, 1
		ranks[3].Graph = ranks[2].Graph
		for _, r := range ranks {
			r.Graph = ranks[0].Graph
		}
	})
	job, err := Load(in, Options{})
	require.NoError(t, err)
	require.Len(t, job.Groups, 1)
	assert.Equal(t, "0-2,2.1", job.Members(0))
	assert.Equal(t, "rank 2.1", job.Ranks[3].Label)
	assert.Equal(t, "0-3,8,10-11", RankRanges([]int{0, 1, 2, 3, 8, 10, 11}))
	assert.Equal(t, "", RankRanges(nil))
}

// TestInitEnd: the end of MPI_Init found without the sequences (skeletons,
// as stats reads ranks) is its recorded end, which the first event rebuilt
// from the sequences and timing matches to within the timing's rounding
// (equal on these runs; 184 ns apart on a LAMMPS run).
func TestInitEnd(t *testing.T) {
	for _, path := range []string{"../testdata/profiles/halo.mpiflow", "../testdata/profiles/poll-irregular.mpiflow", "../report/testdata/halo4.mpiflow"} {
		skel, err := Load(path, Options{NoLoops: true, NoSequences: true, NoResolve: true})
		require.NoError(t, err)
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		for i, r := range skel.Ranks {
			w, err := f.ReadRank(i)
			require.NoError(t, err)
			g := &w.Graph
			require.True(t, flowgraph.IsInit(g.Nodes[g.Initial].Key.Call), "%s: rank %d starts with MPI_Init", path, i)
			it := g.Events()
			require.True(t, it.Next())
			assert.InDelta(t, w.Start+it.Event().End, r.InitEnd, 1000, "%s rank %d", path, i)
			assert.Equal(t, w.Start+g.Nodes[g.Initial].Time.Total, r.InitEnd, "%s rank %d", path, i)
			assert.Positive(t, r.InitEnd)
		}
		f.Close()
	}
}

// TestSpreads: the per-rank spread of IPM's banner, with the ranks of the
// extremes.
func TestSpreads(t *testing.T) {
	in := genJob(t, 4, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		for _, r := range ranks {
			r.UserTime = int64(10-r.Rank) * 1e9 // rank 0 the most
			r.MaxRSS = int64(r.Rank+1) << 20
		}
	})
	job, err := Load(in, Options{NoLoops: true})
	require.NoError(t, err)
	sp := job.Spreads()
	byName := map[string]Spread{}
	for _, s := range sp {
		byName[s.Name] = s
	}
	u := byName["user CPU time"]
	assert.Equal(t, Spread{Name: "user CPU time", Unit: "s", Total: 34, Mean: 8.5, Min: 7, Max: 10, MinRank: 3, MaxRank: 0}, u)
	m := byName["max RSS"]
	assert.Equal(t, []int{0, 3}, []int{m.MinRank, m.MaxRank}, "least rank 0, largest rank 3")
	assert.Equal(t, float64(4<<20), m.Max)
	mpi, wall, bytes := job.Summary.Totals()
	assert.InDelta(t, Percent(mpi, wall), byName["MPI share"].Total, 1e-9, "the banner's %mpi")
	assert.InDelta(t, float64(bytes), byName["bytes"].Total, 0.5)
	assert.InDelta(t, float64(mpi)/1e9, byName["MPI time"].Total, 1e-6)
	w := byName["wall time"]
	assert.LessOrEqual(t, w.Min, w.Mean)
	assert.LessOrEqual(t, w.Mean, w.Max)
}

// TestCounterSpreads: with PAPI's counters, the spread has each rank's IPC
// and Gflop/s over its compute phases.
func TestCounterSpreads(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 5, Events: 3000, Depth: 3, Sites: 10, MaxIter: 8, Counters: 3}, 3, 2)
	h.Counters = []string{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS"}
	path := filepath.Join(t.TempDir(), "ctr.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	job, err := Load(path, Options{NoLoops: true})
	require.NoError(t, err)
	sp := job.Spreads()
	require.Len(t, sp, 9)
	ipc, gflops := sp[7], sp[8]
	assert.Equal(t, "IPC of compute", ipc.Name)
	assert.Equal(t, "Gflop/s of compute", gflops.Name)
	var ins, cyc float64
	for _, r := range ranks {
		var rIns, rCyc, rFP, rTime float64
		for _, e := range r.Graph.Edges {
			rIns, rCyc, rFP, rTime = rIns+float64(e.Counters[0]), rCyc+float64(e.Counters[1]), rFP+float64(e.Counters[2]), rTime+float64(e.Time.Total)
		}
		ins, cyc = ins+rIns, cyc+rCyc
		assert.LessOrEqual(t, ipc.Min, rIns/rCyc)
		assert.GreaterOrEqual(t, ipc.Max, rIns/rCyc)
		if r.Rank == gflops.MaxRank {
			assert.InDelta(t, rFP/rTime, gflops.Max, 1e-12)
		}
	}
	assert.InDelta(t, ins/cyc, ipc.Total, 1e-12, "the job's IPC")
	assert.Equal(t, "1.23", (&Spread{}).Format(1.234))

	plain, err := Load(genJob(t, 2, nil), Options{NoLoops: true})
	require.NoError(t, err)
	assert.Len(t, plain.Spreads(), 7, "no counters, no rates")
}
