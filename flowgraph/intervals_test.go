package flowgraph_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// checkIntervals compares what IntervalIter gives of every interval of g
// with EventIter's events: the events themselves (Events), and per
// interval the nodes' and edges' counts and total durations, first
// occurrences first, and its start and stop.
// It reports false for graphs TimedIntervals refuses. The intervals are
// those of walk, g itself or the same graph read by File.ReadLazy.
func checkIntervals(t *testing.T, name string, g, walk *flowgraph.Graph) bool {
	t.Helper()
	var want []flowgraph.Event
	for ei := g.Events(); ei.Next(); {
		want = append(want, ei.Event())
	}
	it, err := walk.TimedIntervals()
	if errors.Is(err, flowgraph.ErrNotIntervals) {
		require.True(t, g.Timing.Keep() > 0, "%s: refused", name)
		return false
	}
	require.NoError(t, err, name)
	var got []flowgraph.Event
	for it.Next() {
		from := len(got)
		require.NoError(t, it.Events(func(ev flowgraph.Event) { got = append(got, ev) }), name)
		require.Equal(t, int(it.End-it.First), len(got)-from, "%s: interval at %d", name, it.First)
		evs := want[it.First:it.End]
		var nodes, edges []flowgraph.IntervalSum
		nslot, eslot := map[int]int{}, map[int]int{}
		for k, ev := range evs {
			if _, ok := nslot[ev.Node]; !ok {
				nslot[ev.Node] = len(nodes)
				nodes = append(nodes, flowgraph.IntervalSum{Index: ev.Node})
			}
			n := &nodes[nslot[ev.Node]]
			n.Count++
			n.Sum += ev.End - ev.Start
			if int(it.First)+k+1 >= len(want) {
				continue
			}
			next := want[int(it.First)+k+1]
			if _, ok := eslot[next.InEdge]; !ok {
				eslot[next.InEdge] = len(edges)
				edges = append(edges, flowgraph.IntervalSum{Index: next.InEdge})
			}
			e := &edges[eslot[next.InEdge]]
			e.Count++
			e.Sum += next.Start - ev.End
		}
		strip := func(s []flowgraph.IntervalSum) []flowgraph.IntervalSum {
			var out []flowgraph.IntervalSum
			for _, x := range s {
				out = append(out, flowgraph.IntervalSum{Index: x.Index, Count: x.Count, Sum: x.Sum})
			}
			return out
		}
		// Plain comparisons first: require's reflection on every
		// interval would dominate the test.
		if gn := strip(it.Nodes); !slices.Equal(nodes, gn) {
			require.Equal(t, nodes, gn, "%s: nodes of the interval at %d", name, it.First)
		}
		if ge := strip(it.Edges); !slices.Equal(edges, ge) {
			require.Equal(t, edges, ge, "%s: edges of the interval at %d", name, it.First)
		}
		stop := evs[len(evs)-1].End // of the last interval
		if int(it.End) < len(want) {
			stop = want[it.End].Start
		}
		if it.Start != evs[0].Start || it.Stop != stop {
			require.Equal(t, [2]int64{evs[0].Start, stop}, [2]int64{it.Start, it.Stop}, "%s: start and stop of the interval at %d", name, it.First)
		}
	}
	require.NoError(t, it.Err(), name)
	if !slices.Equal(want, got) {
		require.Equal(t, want, got, name)
	}
	checkRuns(t, name, want, walk)
	return true
}

// checkRuns walks the intervals of g with EventsRuns, taking every other
// run offered, and checks the runs and the events against want.
func checkRuns(t *testing.T, name string, want []flowgraph.Event, g *flowgraph.Graph) {
	t.Helper()
	it, err := g.TimedIntervals()
	require.NoError(t, err, name)
	next, offered, taken := 0, 0, 0
	for it.Next() {
		err := it.EventsRuns(func(ev flowgraph.Event) {
			if ev != want[next] {
				require.Equal(t, want[next], ev, "%s: event %d", name, next)
			}
			next++
		}, func(r flowgraph.Run) bool {
			require.Equal(t, int64(next), r.First, "%s: run", name)
			offered++
			if offered%2 == 0 {
				return false
			}
			evs := want[r.First : r.First+r.Count]
			wr := flowgraph.Run{Node: r.Node, InEdge: evs[0].InEdge, First: r.First, Count: r.Count, Start: evs[0].Start, End: evs[len(evs)-1].End}
			for k, ev := range evs {
				require.Equal(t, r.Node, ev.Node, "%s: event %d of a run", name, r.First+int64(k))
				d := ev.End - ev.Start
				wr.Busy += d
				wr.Longest = max(wr.Longest, d)
				if d == 0 {
					wr.Zero++
				}
			}
			if r != wr {
				require.Equal(t, wr, r, "%s: run", name)
			}
			next += int(r.Count)
			taken++
			return true
		})
		require.NoError(t, err, name)
	}
	require.NoError(t, it.Err(), name)
	require.Equal(t, len(want), next, name)
	runsTaken += taken
}

// TestIntervalsMatchEventIter checks IntervalIter against EventIter on
// generated programs, with timing budgets from exact (an interval per
// event) to coarse (thousands of events an interval, quantum > 1 ns), and
// on the recorded runs of the test applications (testdata/profiles).
func TestIntervalsMatchEventIter(t *testing.T) {
	var checked, coarse int
	for seed := uint64(1); seed <= 24; seed++ {
		opt := flowgen.Options{Seed: seed, Events: 12000, Depth: 1 + int(seed%4), Sites: 4 + int(seed%12), Branchy: seed%2 == 0,
			MaxIter: 5 + int(seed%30), TimingBytes: []int{0, 2 << 10, 4 << 10}[seed%3]}
		p := flowgen.New(opt)
		b := p.NewBuilder()
		p.Execute(1, b.Add)
		g := b.Graph()
		if checkIntervals(t, fmt.Sprintf("flowgen seed %d spacing %d", seed, g.Timing.Spacing()), &g, &g) {
			checked++
			if g.Timing.Spacing() > 1 && g.Timing.Quantum() > 1 {
				coarse++
			}
		}
	}
	require.Greater(t, checked, 18, "graphs checked")
	require.Greater(t, coarse, 4, "graphs with coarse timing checked")
	// A job of HPCC's shape stores its sequences as positions: its lazy
	// reads are walked without mapping them.
	h, ranks := flowgen.Run(flowgen.HPCCShape(60_000), 2, 2)
	polled := filepath.Join(t.TempDir(), "polled.mpiflow")
	require.NoError(t, flowgraph.WriteFile(polled, h, ranks))
	files, err := filepath.Glob("../testdata/profiles/*.mpiflow")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var lazy int
	for _, path := range append(files, polled) {
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		for i, e := range f.Index {
			name := fmt.Sprintf("%s rank %d.%d", filepath.Base(path), e.Rank, e.Thread)
			r, err := f.ReadRank(i)
			require.NoError(t, err)
			require.True(t, checkIntervals(t, name, &r.Graph, &r.Graph))
			l, err := f.ReadLazy(i)
			require.NoError(t, err)
			if l.Graph.Edges[0].Seq.IsZero() {
				lazy++
			}
			require.True(t, checkIntervals(t, name+" read lazily", &r.Graph, &l.Graph))
		}
		require.NoError(t, f.Close())
	}
	require.GreaterOrEqual(t, lazy, 2, "ranks walked on their positions")
	require.Greater(t, runsTaken, 1000, "runs of repeats taken at once")
}

// runsTaken counts the runs checkRuns took.
var runsTaken int

// TestTimedIntervalsRefuses: graphs that IntervalIter cannot time.
func TestTimedIntervalsRefuses(t *testing.T) {
	b := flowgraph.NewBuilder(0, 0)
	b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Init", Site: -1}, Enter: 0, Exit: 5, Partner: -1})
	g := b.Graph()
	_, err := g.TimedIntervals()
	require.NoError(t, err)
	for name, g := range map[string]flowgraph.Graph{
		"no events": {Initial: -1},
		"no timing": {Nodes: g.Nodes, Initial: 0, NumEvents: 1},
	} {
		_, err := g.TimedIntervals()
		require.True(t, errors.Is(err, flowgraph.ErrNotIntervals), name)
	}
}

// TestIntervalHintsMatchSearch checks that what IntervalIter.Next finds of
// every edge's numbers searching from where it left off (its hints) is
// what a full search finds, after every interval: on generated programs
// with intervals from one event (edges starting and ending at every
// boundary) to thousands, read whole and lazily (positions and
// self-loop runs), and on a job of HPCC's shape.
func TestIntervalHintsMatchSearch(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for seed := uint64(1); seed <= 6; seed++ {
		opt := flowgen.Options{Seed: seed, Events: 8000, Depth: 1 + int(seed%4), Sites: 4 + int(seed%12),
			Branchy: seed%2 == 0, MaxIter: 5 + int(seed%30), TimingBytes: []int{0, 1 << 10, 4 << 10}[seed%3]}
		path := filepath.Join(dir, fmt.Sprintf("seed%d.mpiflow", seed))
		h, ranks := flowgen.Run(opt, 1, 1)
		require.NoError(t, flowgraph.WriteFile(path, h, ranks))
		paths = append(paths, path)
	}
	h, ranks := flowgen.Run(flowgen.HPCCShape(60_000), 2, 2)
	polled := filepath.Join(dir, "polled.mpiflow")
	require.NoError(t, flowgraph.WriteFile(polled, h, ranks))
	var intervals, lazy int
	for _, path := range append(paths, polled) {
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		for i := range f.Index {
			whole, err := f.ReadRank(i)
			require.NoError(t, err)
			l, err := f.ReadLazy(i)
			require.NoError(t, err)
			if l.Graph.Edges[0].Seq.IsZero() {
				lazy++
			}
			for name, g := range map[string]*flowgraph.Graph{"whole": &whole.Graph, "lazy": &l.Graph} {
				it, err := g.TimedIntervals()
				if errors.Is(err, flowgraph.ErrNotIntervals) {
					continue
				}
				require.NoError(t, err)
				for it.Next() {
					require.NoError(t, flowgraph.CheckHints(it), "%s rank %d read %s", filepath.Base(path), i, name)
					intervals++
				}
				require.NoError(t, it.Err())
			}
		}
		require.NoError(t, f.Close())
	}
	require.Greater(t, intervals, 10000, "intervals checked")
	require.GreaterOrEqual(t, lazy, 2, "ranks walked on their positions")
}
