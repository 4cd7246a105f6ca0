package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// BenchmarkFastRepeatsReplay measures fast repeats (MF_TIGHT_*) on real
// programs: it records each full trace named in MPIFLOW_REPLAY (the
// .mftrace files of runs under MPIFLOW_TRACE=1, separated by spaces) again
// through the recorder, the fast repeats' rules on, and compares each
// node's call time with the trace's. Per call with a node of 50,000 events
// or more, it reports the mean and the largest error of those nodes' call
// time ("%err-CALL", "%maxerr-CALL") and the share of their events timed
// ("%timed-CALL"), and logs them per trace. make bench-replay records
// the overhead microbenchmark and runs it; skipped without MPIFLOW_REPLAY.
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
	for i := 0; i < b.N; i++ {
		clear(calls)
		for _, path := range paths {
			line := filepath.Base(path) + ":"
			for _, r := range replayTrace(b, path) {
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
}

// replayed is a node of a replayed trace: its call (without MPI_), the
// error of its call time, its events and how many were timed.
type replayed struct {
	call          string
	errPct        float64
	events, timed int64
}

// replayTrace records the full trace at path through the recorder and
// compares the nodes of 50,000 events or more that went partly untimed.
func replayTrace(b *testing.B, path string) []replayed {
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
	return out
}
