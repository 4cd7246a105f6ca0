package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/fidelity"
	"mpiflow/flowgraph"
)

// BenchmarkFastRepeatsReplay measures fast repeats (MF_TIGHT_*) on real
// programs: it records each full trace named in MPIFLOW_REPLAY (the
// .mftrace files of runs under MPIFLOW_TRACE=1, separated by spaces) again
// through the recorder, the fast repeats' rules on, and compares each
// node's call time with the trace's. Per call with a node of 50,000 events
// or more, it reports the mean and the largest error of those nodes' call
// time ("%err-CALL", "%maxerr-CALL") and the share of their events timed
// ("%timed-CALL"), and logs them per trace. It also rebuilds each replayed
// recording's trace and compares it with the full trace as `mpiflow
// fidelity` does (30 slices): the largest error of a call's share of a
// slice ("pp-call-share", the worst trace) and the largest start error
// ("ms-start"). Replaying HPCC's traces (MPIFLOW_TRACE=1 mpirun ... hpcc)
// gives the figures of its fast repeats without another run's noise. make
// bench-replay records the overhead microbenchmark and runs it; skipped
// without MPIFLOW_REPLAY.
func BenchmarkFastRepeatsReplay(b *testing.B) {
	paths := strings.Fields(os.Getenv("MPIFLOW_REPLAY"))
	if len(paths) == 0 {
		b.Skip("MPIFLOW_REPLAY names no full trace")
	}
	type acc struct {
		sum, max, timed, events float64
		n                       int
	}
	calls := map[string]*acc{}
	var share, start float64
	for i := 0; i < b.N; i++ {
		clear(calls)
		share, start = 0, 0
		for _, path := range paths {
			line := filepath.Base(path) + ":"
			nodes, rep := replayTrace(b, path)
			share = max(share, rep.MaxCallShareErrorPP)
			start = max(start, float64(rep.StartError.Max)/1e6)
			line += fmt.Sprintf(" worst call share %.2f pp (%s, slice %d), MPI share %.2f pp, start error max %.2f ms;",
				rep.MaxCallShareErrorPP, rep.WorstCall, rep.WorstSlice, rep.MaxMPIShareErrorPP, float64(rep.StartError.Max)/1e6)
			for _, r := range nodes {
				a := calls[r.call]
				if a == nil {
					a = &acc{}
					calls[r.call] = a
				}
				a.sum += math.Abs(r.errPct)
				a.max = math.Max(a.max, math.Abs(r.errPct))
				a.timed += float64(r.timed)
				a.events += float64(r.events)
				a.n++
				line += fmt.Sprintf(" %s %+.1f%% (%.1f%% timed)", r.call, r.errPct, 100*float64(r.timed)/float64(r.events))
			}
			b.Log(line)
		}
	}
	names := make([]string, 0, len(calls))
	for c := range calls {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		a := calls[c]
		b.ReportMetric(a.sum/float64(a.n), "%err-"+c)
		b.ReportMetric(a.max, "%maxerr-"+c)
		b.ReportMetric(100*a.timed/a.events, "%timed-"+c)
	}
	b.ReportMetric(share, "pp-call-share")
	b.ReportMetric(start, "ms-start")
}

// replayed is a node of a replayed trace: its call (without MPI_), the
// error of its call time, its events and how many were timed.
type replayed struct {
	call          string
	errPct        float64
	events, timed int64
}

// replayTrace records the full trace at path through the recorder,
// compares the nodes of 50,000 events or more that went partly untimed,
// and the rebuilt trace with the full one (replayFidelity).
func replayTrace(b *testing.B, path string) ([]replayed, *fidelity.Report) {
	ft, err := flowgraph.ReadFullTrace(path)
	require.NoError(b, err)
	var names []string
	ids := map[string]int{}
	for _, n := range ft.Nodes {
		if _, ok := ids[n.Call]; !ok {
			ids[n.Call] = len(names)
			names = append(names, n.Call)
		}
	}
	evs := make([]recEvent, len(ft.Events))
	for i, e := range ft.Events {
		n := ft.Nodes[e.Node]
		evs[i] = recEvent{Call: ids[n.Call], Site: n.Site, Partner: -1, CommSize: 2, Enter: e.Enter, Exit: e.Exit}
	}
	tb := flowgraph.TimingBudget{}
	r, err := newRecorderBudget("call,site", tb, 0)
	require.NoError(b, err)
	r.fastRepeats(true)
	timed := map[[2]uint64]int64{} // by call and site
	for _, e := range evs {
		if r.add(e) != 2 {
			timed[[2]uint64{uint64(e.Call), e.Site}]++
		}
	}
	got := r.graph(names)
	want := builderGraphNamed(evs, names, r.keyFlags(), tb, 0)
	r.free()
	rep := replayFidelity(b, &got, evs, names)
	var out []replayed
	for i, w := range want.Nodes {
		site := want.Sites[w.Key.Site].Addr
		t := timed[[2]uint64{uint64(ids[w.Key.Call]), site}]
		if w.Count < 50_000 || t == w.Count {
			continue
		}
		g := got.Nodes[i].Time.Total
		out = append(out, replayed{strings.TrimPrefix(w.Key.Call, "MPI_"), 100 * float64(g-w.Time.Total) / float64(w.Time.Total), w.Count, t})
	}
	return out, rep
}

// replayFidelity compares the trace rebuilt from g, the recording of evs
// (calls numbered in names), with evs as mpiflow fidelity does: it writes g as rank 0 of a job file
// and evs beside it as its full trace, numbered by g's nodes (the replay
// keys nodes by call and site).
func replayFidelity(b *testing.B, g *flowgraph.Graph, evs []recEvent, names []string) *fidelity.Report {
	b.Helper()
	type key struct {
		call string
		site uint64
	}
	node := map[key]int{}
	var nodes []flowgraph.TraceNode
	for i, n := range g.Nodes {
		site := g.Sites[n.Key.Site].Addr
		node[key{n.Key.Call, site}] = i
		nodes = append(nodes, flowgraph.TraceNode{Call: n.Key.Call, Site: site, Partner: -1, Comm: -1})
	}
	job := filepath.Join(b.TempDir(), "replay.1.mpiflow")
	f, err := os.Create(flowgraph.TracePath(job, 0, 0))
	require.NoError(b, err)
	bw := bufio.NewWriterSize(f, 1<<20)
	w := flowgraph.NewTraceWriter(bw, 0)
	for _, e := range evs {
		n, ok := node[key{names[e.Call], e.Site}]
		require.True(b, ok, "no node of %s at %#x", names[e.Call], e.Site)
		require.NoError(b, w.Add(flowgraph.TraceEvent{Node: n, Enter: e.Enter, Exit: e.Exit}))
	}
	require.NoError(b, w.Close(nodes))
	require.NoError(b, bw.Flush())
	require.NoError(b, f.Close())
	h := flowgraph.Header{JobID: "1", NumRanks: 1, KeyFields: []string{flowgraph.KeyCall, flowgraph.KeySite}, Hosts: []string{"node0"}}
	require.NoError(b, flowgraph.WriteFile(job, h, []*flowgraph.Rank{{Rank: 0, Host: "node0", Complete: true, Graph: *g}}))
	jf, err := flowgraph.Open(job)
	require.NoError(b, err)
	defer jf.Close()
	rep, err := fidelity.Compare(jf, fidelity.Options{Slices: 30, PValues: []float64{}})
	require.NoError(b, err)
	return rep
}
