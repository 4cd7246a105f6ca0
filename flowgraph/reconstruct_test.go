package flowgraph_test

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// record executes a generated program into both a plain event list and a
// graph, so the graph can be checked against the truth.
func record(t testing.TB, opt flowgen.Options) ([]flowgraph.Call, flowgraph.Graph) {
	t.Helper()
	p := flowgen.New(opt)
	b := p.NewBuilder()
	var calls []flowgraph.Call
	p.Execute(1, func(c flowgraph.Call) {
		calls = append(calls, c)
		b.Add(c)
	})
	return calls, b.Graph()
}

func TestReconstructRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		opt  flowgen.Options
	}{
		{"single event", flowgen.Options{Seed: 1, Events: 1, Depth: 0, Sites: 1}},
		{"loops", flowgen.Options{Seed: 2, Events: 5000, Depth: 3, Sites: 8}},
		{"branches", flowgen.Options{Seed: 3, Events: 20000, Depth: 4, Sites: 30, Branchy: true}},
		{"tiny anchor budget", flowgen.Options{Seed: 4, Events: 10000, Depth: 3, Sites: 12, Branchy: true, Anchors: 8}},
		{"many anchors", flowgen.Options{Seed: 5, Events: 3000, Depth: 2, Sites: 5, Branchy: true, Anchors: 100000}},
		{"counters", flowgen.Options{Seed: 6, Events: 4000, Depth: 3, Sites: 9, Branchy: true, Counters: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, g := record(t, tt.opt)
			require.NotEmpty(t, calls)
			path := filepath.Join(t.TempDir(), "job.mpiflow")
			h := flowgraph.Header{NumRanks: 1, Hosts: []string{"h"}}
			require.NoError(t, flowgraph.WriteFile(path, h, []*flowgraph.Rank{{Rank: 0, Graph: g}}))
			f, err := flowgraph.Open(path)
			require.NoError(t, err)
			defer f.Close()
			r, err := f.ReadRank(0)
			require.NoError(t, err)
			g2 := &r.Graph

			// Intervals and bytes within budget for every size.
			if tt.opt.Anchors >= 2 {
				assert.LessOrEqual(t, len(g2.Anchors), tt.opt.Anchors+1)
			}
			assert.LessOrEqual(t, g2.Timing.Size(), flowgraph.DefaultTimingBytes)

			t0 := calls[0].Enter
			var evs []flowgraph.Event
			it := g2.Events()
			for it.Next() {
				evs = append(evs, it.Event())
			}
			require.NoError(t, it.Err())
			require.Len(t, evs, len(calls))
			for i, ev := range evs {
				require.Equal(t, int64(i), ev.Index)
				require.Equal(t, calls[i].Key, g2.Nodes[ev.Node].Key, "event %d", i)
				if i > 0 {
					e := g2.Edges[ev.InEdge]
					require.Equal(t, evs[i-1].Node, e.Src)
					require.Equal(t, ev.Node, e.Dst)
					require.LessOrEqual(t, evs[i-1].End, ev.Start, "event %d starts before its predecessor ends", i)
				}
				require.LessOrEqual(t, ev.Start, ev.End)
			}
			// Per anchor interval: the MPI time, the start times at
			// anchors, exact with quantum 1, else each node's and edge's
			// total so far within a quantum.
			tol := float64((g2.Timing.Quantum() - 1) * int64(len(g2.Nodes)+len(g2.Edges)))
			var recon, truth int64
			for k := 0; k+1 < len(g2.Anchors); k++ {
				a, b := g2.Anchors[k], g2.Anchors[k+1]
				for i := a.Event; i < b.Event; i++ {
					recon += evs[i].End - evs[i].Start
					truth += calls[i].Exit - calls[i].Enter
				}
				require.InDelta(t, truth, recon, tol, "MPI time up to anchor %d", k+1)
				require.InDelta(t, calls[a.Event].Enter-t0, evs[a.Event].Start, tol, "start of anchor %d", k)
			}
			last := len(evs) - 1
			assert.InDelta(t, calls[last].Exit-t0, evs[last].End, tol, "end of the last event")
		})
	}
}

func TestReconstructWithoutAnchors(t *testing.T) {
	calls, g := record(t, flowgen.Options{Seed: 9, Events: 200000, Depth: 3, Sites: 10, Branchy: true})
	g.Anchors = nil
	it := g.Events()
	var n int64
	var prevEnd int64
	for it.Next() {
		ev := it.Event()
		require.Equal(t, calls[n].Key, g.Nodes[ev.Node].Key)
		require.GreaterOrEqual(t, ev.Start, prevEnd)
		prevEnd = ev.End
		n++
	}
	require.NoError(t, it.Err())
	assert.Equal(t, int64(len(calls)), n)
}

func TestReconstructBrokenSequence(t *testing.T) {
	_, g := record(t, flowgen.Options{Seed: 3, Events: 2000, Depth: 4, Sites: 30, Branchy: true})
	require.NoError(t, g.Validate())
	// Trade the first sequence number of two edges out of different nodes:
	// every count stays valid but the walk must fail.
	expand := func(r flowgraph.Seq) (v []int64) {
		r.All(func(n int64) bool { v = append(v, n); return true })
		return v
	}
	var a, b int = -1, -1
	for i := range g.Edges {
		if g.Edges[i].Src != g.Edges[0].Src {
			a, b = 0, i
			break
		}
	}
	require.True(t, a >= 0, "no pair of edges to trade")
	va, vb := expand(g.Edges[a].Seq), expand(g.Edges[b].Seq)
	va[0], vb[0] = vb[0], va[0]
	slices.Sort(va)
	slices.Sort(vb)
	for _, p := range []struct {
		e *flowgraph.Edge
		v []int64
	}{{&g.Edges[a], va}, {&g.Edges[b], vb}} {
		p.e.Seq = flowgraph.SeqOf(p.v...)
	}
	require.NoError(t, g.Validate())
	it := g.Events()
	for it.Next() {
	}
	assert.ErrorContains(t, it.Err(), "sequence broken")
}

// TestReconstructMatchesNaiveWalk compares the events of random graphs,
// timed by their Timing and by its anchors alone, with a walk that expands
// every edge's sequence numbers into the in-edge of each event. Times:
// the totals at every anchor are exact, and with an exact Timing (quantum
// 1, no cap) so are each node's and edge's sums in each interval.
func TestReconstructMatchesNaiveWalk(t *testing.T) {
	var exact, capped int
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		opt := flowgen.Options{Seed: seed, Events: 1 + rng.Int64N(20000), Depth: 1 + rng.IntN(5), Sites: 1 + rng.IntN(60),
			MaxIter: 1 + rng.IntN(40), Branchy: rng.IntN(4) > 0, TimingBytes: flowgraph.MinTimingBytes << rng.IntN(6)}
		if seed%2 == 0 {
			opt.TimingBytes = 1 << 20 // exact
		}
		calls, g := record(t, opt)
		n := g.NumEvents
		in := make([]int, n)
		in[0] = -1
		for e := range g.Edges {
			g.Edges[e].Seq.All(func(i int64) bool { in[i] = e; return true })
		}
		untimed := g
		untimed.Timing = flowgraph.Timing{}
		for _, gr := range []*flowgraph.Graph{&g, &untimed} {
			evs := events(t, gr)
			require.Len(t, evs, int(n), "seed %d", seed)
			want := make([]flowgraph.Event, n)
			node := g.Initial
			for i, ev := range evs {
				if i > 0 {
					node = g.Edges[in[i]].Dst
				}
				want[i] = flowgraph.Event{Index: int64(i), Node: node, InEdge: in[i], Start: ev.Start, End: ev.End}
			}
			require.Equal(t, want, evs, "seed %d", seed)
			var mpi int64
			next := 0
			for _, a := range g.Anchors {
				for ; int64(next) < a.Event; next++ {
					mpi += evs[next].End - evs[next].Start
				}
				require.Equal(t, a.MPITime, mpi, "seed %d: MPI time before event %d", seed, a.Event)
				if a.Event < n {
					require.Equal(t, a.Time, evs[a.Event].Start, "seed %d: start of event %d", seed, a.Event)
				} else {
					require.Equal(t, a.Time, evs[n-1].End, "seed %d: end", seed)
				}
			}
			if gr.Timing.Keep() > 0 {
				capped++
			}
			if !gr.Timing.Present() || gr.Timing.Quantum() != 1 || gr.Timing.Keep() != 0 {
				continue
			}
			exact++
			// Per interval: each node's and edge's sum, rebuilt and true.
			sp := gr.Timing.Spacing()
			type key struct{ iv, id int64 }
			got, truth := map[key]int64{}, map[key]int64{}
			for i, ev := range evs {
				k := int64(i) / sp
				got[key{k, 2 * int64(ev.Node)}] += ev.End - ev.Start
				truth[key{k, 2 * int64(ev.Node)}] += calls[i].Exit - calls[i].Enter
				if i+1 < len(evs) {
					e := 2*int64(evs[i+1].InEdge) + 1
					got[key{k, e}] += evs[i+1].Start - ev.End
					truth[key{k, e}] += calls[i+1].Enter - calls[i].Exit
				}
			}
			require.Equal(t, truth, got, "seed %d", seed)
		}
	}
	t.Logf("%d walks with an exact Timing, %d capped", exact, capped)
	assert.Positive(t, exact)
	assert.Positive(t, capped)
}

// events returns all events of g.
func events(t *testing.T, g *flowgraph.Graph) []flowgraph.Event {
	t.Helper()
	var evs []flowgraph.Event
	it := g.Events()
	for it.Next() {
		evs = append(evs, it.Event())
	}
	require.NoError(t, it.Err())
	return evs
}

// TestLoopFileSizeIndependentOfIterations checks that a loop's graph costs
// O(1) space: only the timing grows with the number of events, up to its
// budget, at a few bytes an event while it fits.
func TestLoopFileSizeIndependentOfIterations(t *testing.T) {
	// size returns the encoded size of the graph without and with timing.
	size := func(iters int64) (graph, timing int) {
		b := flowgraph.NewBuilder(0, 0)
		var now int64
		keys := []flowgraph.NodeKey{{Call: "MPI_Irecv"}, {Call: "MPI_Send"}, {Call: "MPI_Wait"}, {Call: "MPI_Allreduce"}}
		for range iters {
			for _, k := range keys {
				now += 1000
				b.Add(flowgraph.Call{Key: k, Enter: now, Exit: now + 10, Partner: -1})
				now += 10
			}
		}
		g := b.Graph()
		full, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
		require.NoError(t, err)
		g.Anchors, g.Timing = nil, flowgraph.Timing{}
		bare, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
		require.NoError(t, err)
		return len(bare), len(full) - len(bare)
	}
	small, smallTiming := size(100)
	big, bigTiming := size(1000000)
	// Counts and totals take a few more bytes each (varints, then
	// compressed): 5% of a large graph, a few dozen bytes of this one.
	assert.InDelta(t, small, big, 0.05*float64(small)+48, "graph size %d vs %d bytes", small, big)
	assert.Less(t, smallTiming, 8*400, "400 events, one an interval: at most 8 bytes each")
	assert.LessOrEqual(t, bigTiming, flowgraph.DefaultTimingBytes+8, "the timing is bounded by its budget (+ the bin's head)")
}

// benchGraphs are 10-million-event graphs: a small loop nest, and a
// branchy program with hundreds of nodes and edges.
var benchGraphs = []struct {
	name string
	opt  flowgen.Options
}{
	{"loops", flowgen.Options{Seed: 1, Events: 10_000_000, Depth: 4, Sites: 40, MaxIter: 20, Branchy: true}},
	{"branchy", flowgen.Options{Seed: 12, Events: 10_000_000, Depth: 6, Sites: 300, MaxIter: 8, Branchy: true}},
	// Polls and branches on the rank, within the default budget, as make
	// bench-scale writes a rank.
	{"hpcc", flowgen.HPCCShape(2_000_000)},
}

func BenchmarkReconstruct(b *testing.B) {
	for _, bg := range benchGraphs {
		g := flowgen.New(bg.opt).Graph(1)
		b.Run(bg.name, func(b *testing.B) {
			for range b.N {
				it := g.Events()
				var n int64
				for it.Next() {
					n++
				}
				if it.Err() != nil || n != g.NumEvents {
					b.Fatalf("reconstructed %d of %d events: %v", n, g.NumEvents, it.Err())
				}
			}
			b.ReportMetric(float64(g.NumEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(g.Nodes)+len(g.Edges)), "nodes+edges")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, bg := range benchGraphs {
		g := flowgen.New(bg.opt).Graph(1)
		enc, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bg.name, func(b *testing.B) {
			for range b.N {
				if _, err := flowgraph.DecodeRank(enc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.NumEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(len(enc)), "bytes")
			b.ReportMetric(float64(len(g.Nodes)+len(g.Edges)), "nodes+edges")
		})
	}
}
