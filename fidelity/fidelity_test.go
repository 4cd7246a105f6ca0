package fidelity_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/fidelity"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// writeJob writes a job file with one rank per calls[r], each graph built
// from its calls with an anchor at every event (so the rebuilt trace is
// exact), and the full trace of rank r made of truth[r] (nil: calls[r])
// beside it. It returns the job file's path.
func writeJob(t *testing.T, calls, truth [][]flowgraph.Call) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "app.1.mpiflow")
	h := flowgraph.Header{JobID: "1", NumRanks: len(calls), KeyFields: []string{flowgraph.KeyCall, flowgraph.KeySite}}
	var ranks []*flowgraph.Rank
	for r, cs := range calls {
		b := flowgraph.NewBuilder(0, 1<<20)
		for i := range 64 {
			b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + 16*i)})
		}
		for _, c := range cs {
			b.Add(c)
		}
		g := b.Graph()
		h.Hosts = append(h.Hosts, "node0")
		ranks = append(ranks, &flowgraph.Rank{Rank: r, Host: "node0", Complete: true, Start: int64(r) * 500, Graph: g})
		tc := cs
		if truth != nil && truth[r] != nil {
			tc = truth[r]
		}
		writeTrace(t, flowgraph.TracePath(path, r, 0), r, &g, tc, true)
	}
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path
}

// writeTrace writes calls as the full trace of rank r whose graph is g;
// without end, the trace is cut short as when a rank dies.
func writeTrace(t *testing.T, path string, rank int, g *flowgraph.Graph, calls []flowgraph.Call, end bool) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	node := map[flowgraph.NodeKey]int{}
	var nodes []flowgraph.TraceNode
	for i, n := range g.Nodes {
		node[n.Key] = i
		nodes = append(nodes, flowgraph.TraceNode{Call: n.Key.Call, Partner: n.Key.Partner, Comm: n.Key.Comm})
	}
	w := flowgraph.NewTraceWriter(f, rank)
	for _, c := range calls {
		n, ok := node[c.Key]
		require.True(t, ok, "call %v is not in the graph", c.Key)
		require.NoError(t, w.Add(flowgraph.TraceEvent{Node: n, Enter: c.Enter, Exit: c.Exit}))
	}
	if end {
		require.NoError(t, w.Close(nodes))
	} else {
		require.NoError(t, w.Close(nil))
		// Drop the end marker and the empty node table.
		st, err := f.Stat()
		require.NoError(t, err)
		require.NoError(t, f.Truncate(st.Size()-6))
	}
}

func call(name string, enter, exit int64) flowgraph.Call {
	return flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: -1, Partner: -1, Comm: -1}, Enter: enter, Exit: exit, Partner: -1}
}

func compare(t *testing.T, path string, opt fidelity.Options) *fidelity.Report {
	t.Helper()
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := fidelity.Compare(f, opt)
	require.NoError(t, err)
	return rep
}

// generated returns the calls of nranks ranks of a generated program.
func generated(nranks int, events int64) [][]flowgraph.Call {
	var out [][]flowgraph.Call
	for r := range nranks {
		p := flowgen.New(flowgen.Options{Seed: uint64(10 + r), Events: events, Depth: 3, Sites: 8, Branchy: true})
		var cs []flowgraph.Call
		p.Execute(1, func(c flowgraph.Call) { cs = append(cs, c) })
		out = append(out, cs)
	}
	return out
}

// A rebuilt trace that is exactly the recorded one: no error anywhere and
// the same partitions.
func TestCompareExact(t *testing.T) {
	calls := generated(3, 2000)
	rep := compare(t, writeJob(t, calls, nil), fidelity.Options{})
	require.Len(t, rep.Ranks, 3)
	assert.True(t, rep.OrderIdentical)
	assert.Equal(t, int64(6000), rep.Events)
	for _, r := range rep.Ranks {
		assert.True(t, r.OrderIdentical)
		assert.True(t, r.TruthComplete)
		assert.Equal(t, int64(-1), r.FirstMismatch)
		assert.Equal(t, r.Events, r.TruthEvents)
		assert.Zero(t, r.StartError)
		assert.Zero(t, r.EndError)
		assert.Zero(t, r.MaxMPIShareErrorPP)
		assert.Zero(t, r.MaxCallShareErrorPP)
	}
	assert.Zero(t, rep.StartError)
	assert.Zero(t, rep.MaxMPIShareErrorPP)
	assert.Zero(t, rep.MaxCallShareErrorPP)
	require.Len(t, rep.Aggregate, len(fidelity.DefaultPValues))
	for _, a := range rep.Aggregate {
		assert.True(t, a.Same, "p=%v", a.P)
		assert.Equal(t, a.Rebuilt, a.Truth)
	}
	assert.Equal(t, 30, rep.Slices)
}

// One event recorded 100 ns later than rebuilt: its start and end errors
// and the slices it moved between are known.
func TestCompareShiftedEvent(t *testing.T) {
	// Rank 0 spans [0, 1000) ns: 10 slices of 100 ns.
	calls := [][]flowgraph.Call{{call("MPI_Init", 0, 10), call("MPI_Send", 100, 150), call("MPI_Finalize", 990, 1000)}}
	truth := [][]flowgraph.Call{{call("MPI_Init", 0, 10), call("MPI_Send", 200, 250), call("MPI_Finalize", 990, 1000)}}
	rep := compare(t, writeJob(t, calls, truth), fidelity.Options{Slices: 10, PValues: []float64{0.5}})
	require.Len(t, rep.Ranks, 1)
	r := rep.Ranks[0]
	assert.True(t, r.OrderIdentical)
	want := fidelity.Percentiles{P50: 0, P90: 100, P99: 100, Max: 100}
	assert.Equal(t, want, r.StartError)
	assert.Equal(t, want, r.EndError)
	// 50 ns of MPI_Send left slice 1 for slice 2: 50 points in both, the
	// first is reported.
	assert.InDelta(t, 50, r.MaxMPIShareErrorPP, 1e-9)
	assert.Equal(t, 1, r.WorstMPISlice)
	assert.InDelta(t, 50, r.MaxCallShareErrorPP, 1e-9)
	assert.Equal(t, "MPI_Send", r.WorstCall)
	assert.Equal(t, 1, r.WorstSlice)
	assert.Equal(t, "MPI_Send", rep.WorstCall)
	assert.Equal(t, 0, rep.WorstRank)
	require.Len(t, rep.Aggregate, 1)

	var text strings.Builder
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "3 events, 10 time slices")
	assert.Contains(t, text.String(), "50.00 pp")
	assert.Contains(t, text.String(), "MPI_Send, rank 0, 1")
	assert.Contains(t, text.String(), "p=0.5 ")
}

func TestCompareOrder(t *testing.T) {
	calls := [][]flowgraph.Call{{call("MPI_Init", 0, 10), call("MPI_Send", 100, 150), call("MPI_Recv", 200, 300), call("MPI_Finalize", 990, 1000)}}
	tests := []struct {
		name     string
		truth    []flowgraph.Call
		cut      bool
		mismatch int64
		events   int64
	}{
		{"swapped", []flowgraph.Call{call("MPI_Init", 0, 10), call("MPI_Recv", 100, 150), call("MPI_Send", 200, 300), call("MPI_Finalize", 990, 1000)}, false, 1, 4},
		{"one more", append(append([]flowgraph.Call(nil), calls[0]...), call("MPI_Init", 1100, 1200)), false, 4, 5},
		{"cut short", calls[0][:2], true, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeJob(t, calls, [][]flowgraph.Call{tt.truth})
			if tt.cut {
				f, err := flowgraph.Open(path)
				require.NoError(t, err)
				r, err := f.ReadRank(0)
				require.NoError(t, err)
				f.Close()
				writeTrace(t, flowgraph.TracePath(path, 0, 0), 0, &r.Graph, tt.truth, false)
			}
			rep := compare(t, path, fidelity.Options{Slices: 10})
			r := rep.Ranks[0]
			assert.False(t, r.OrderIdentical)
			assert.False(t, rep.OrderIdentical)
			assert.Equal(t, tt.mismatch, r.FirstMismatch)
			assert.Equal(t, int64(4), r.Events)
			assert.Equal(t, tt.events, r.TruthEvents)
			assert.Equal(t, !tt.cut, r.TruthComplete)
		})
	}
}

func TestCompareBadInput(t *testing.T) {
	calls := [][]flowgraph.Call{{call("MPI_Init", 0, 10), call("MPI_Finalize", 90, 100)}, {call("MPI_Init", 0, 10), call("MPI_Finalize", 90, 100)}}
	open := func(t *testing.T, path string, opt fidelity.Options) error {
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		defer f.Close()
		_, err = fidelity.Compare(f, opt)
		return err
	}
	t.Run("missing trace", func(t *testing.T) {
		path := writeJob(t, calls, nil)
		missing := flowgraph.TracePath(path, 1, 0)
		require.NoError(t, os.Remove(missing))
		err := open(t, path, fidelity.Options{})
		assert.ErrorIs(t, err, fidelity.ErrNoTrace)
		assert.ErrorContains(t, err, missing)
		assert.ErrorContains(t, err, "MPIFLOW_TRACE=1")
		// Rank 0 alone has its trace.
		assert.NoError(t, open(t, path, fidelity.Options{Ranks: map[int]bool{0: true}}))
	})
	t.Run("trace of another run", func(t *testing.T) {
		path := writeJob(t, calls, nil)
		g := flowgraph.Graph{Nodes: []flowgraph.Node{{Key: flowgraph.NodeKey{Call: "MPI_Barrier"}}, {Key: flowgraph.NodeKey{Call: "MPI_Finalize"}}}}
		other := []flowgraph.Call{
			{Key: flowgraph.NodeKey{Call: "MPI_Barrier"}, Enter: 0, Exit: 10},
			{Key: flowgraph.NodeKey{Call: "MPI_Finalize"}, Enter: 90, Exit: 100},
		}
		writeTrace(t, flowgraph.TracePath(path, 1, 0), 1, &g, other, true)
		assert.ErrorContains(t, open(t, path, fidelity.Options{}), "not the trace of this run")
	})
	t.Run("wrong rank", func(t *testing.T) {
		path := writeJob(t, calls, nil)
		require.NoError(t, os.Rename(flowgraph.TracePath(path, 0, 0), flowgraph.TracePath(path, 1, 0)))
		assert.ErrorContains(t, open(t, path, fidelity.Options{Ranks: map[int]bool{1: true}}), "full trace of rank 0, expected rank 1")
	})
	t.Run("no rank selected", func(t *testing.T) {
		path := writeJob(t, calls, nil)
		assert.ErrorContains(t, open(t, path, fidelity.Options{Ranks: map[int]bool{5: true}}), "no rank selected")
	})
}
