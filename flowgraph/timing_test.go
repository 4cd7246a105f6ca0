package flowgraph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// recordBudget executes a generated program into a call list and a graph
// recorded within tb, round-tripped through the file encoding.
func recordBudget(t testing.TB, opt flowgen.Options, tb flowgraph.TimingBudget) ([]flowgraph.Call, *flowgraph.Graph) {
	t.Helper()
	opt.TimingBytes, opt.Anchors = tb.Bytes, tb.Intervals
	p := flowgen.New(opt)
	b := p.NewBuilder()
	var calls []flowgraph.Call
	p.Execute(1, func(c flowgraph.Call) {
		calls = append(calls, c)
		b.Add(c)
	})
	g := b.Graph()
	enc, _, err := flowgraph.EncodeRank(&flowgraph.Rank{Graph: g})
	require.NoError(t, err)
	r, err := flowgraph.DecodeRank(enc)
	require.NoError(t, err)
	assert.Equal(t, g, r.Graph, "the graph survives encoding")
	return calls, &r.Graph
}

// TestTimingPerInterval rebuilds the events of graphs recorded from a
// known trace and checks, at each timing interval's end, that each node's
// duration total and each edge's gap total so far are within one quantum
// of the truth's (exact with quantum 1; for capped intervals: the MPI and
// total time), every event exactly when the intervals are single events
// of quantum 1, and the derived anchors.
func TestTimingPerInterval(t *testing.T) {
	loops := flowgen.Options{Seed: 2, Events: 20000, Depth: 3, Sites: 8}
	branchy := flowgen.Options{Seed: 3, Events: 30000, Depth: 4, Sites: 30, Branchy: true}
	wide := flowgen.Options{Seed: 12, Events: 60000, Depth: 6, Sites: 300, MaxIter: 3, Branchy: true}
	tests := []struct {
		name    string
		opt     flowgen.Options
		tb      flowgraph.TimingBudget
		spacing int64 // expected spacing, 0: more than 1
		exact   bool  // quantum 1
		capped  bool
	}{
		{"fits, exact events", loops, flowgraph.TimingBudget{Bytes: 256 << 10}, 1, true, false},
		{"default budget", loops, flowgraph.TimingBudget{}, 0, false, false},
		{"merged", branchy, flowgraph.TimingBudget{Bytes: 4 << 10}, 0, false, false},
		{"interval limit", branchy, flowgraph.TimingBudget{Intervals: 7}, 0, true, false},
		{"interval limit 2", loops, flowgraph.TimingBudget{Intervals: 2}, 0, true, false},
		{"capped", wide, flowgraph.TimingBudget{Bytes: 2 << 10}, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, g := recordBudget(t, tt.opt, tt.tb)
			tm := &g.Timing
			require.True(t, tm.Present())
			budget := tt.tb.Bytes
			if budget == 0 {
				budget = flowgraph.DefaultTimingBytes
			}
			assert.LessOrEqual(t, tm.Size(), budget)
			if tt.tb.Intervals >= 2 {
				assert.LessOrEqual(t, tm.Len(), int64(tt.tb.Intervals))
			}
			if tt.spacing > 0 {
				assert.Equal(t, tt.spacing, tm.Spacing())
			} else {
				assert.Greater(t, tm.Spacing(), int64(1))
			}
			assert.Equal(t, tt.exact, tm.Quantum() == 1, "quantum %d", tm.Quantum())
			assert.Equal(t, tt.capped, tm.Keep() > 0, "keep %d", tm.Keep())
			n := int64(len(calls))
			require.True(t, tm.Covers(n), "%d intervals cover the %d events", tm.Len(), n)

			var evs []flowgraph.Event
			it := g.Events()
			for it.Next() {
				evs = append(evs, it.Event())
			}
			require.NoError(t, it.Err())
			require.Len(t, evs, len(calls))
			t0 := calls[0].Enter
			for i, ev := range evs {
				require.Equal(t, calls[i].Key, g.Nodes[ev.Node].Key, "event %d", i)
				if tm.Spacing() == 1 && tm.Quantum() == 1 {
					require.Equal(t, calls[i].Enter-t0, ev.Start, "start of event %d", i)
					require.Equal(t, calls[i].Exit-t0, ev.End, "end of event %d", i)
				}
			}

			// The totals so far per node and edge, and of MPI and all
			// time, rebuilt and true, at the end of interval k.
			type totals struct {
				node, edge map[int]int64
				mpi, all   int64
			}
			rebuilt := totals{node: map[int]int64{}, edge: map[int]int64{}}
			truth := totals{node: map[int]int64{}, edge: map[int]int64{}}
			q := tm.Quantum()
			ids := int64(len(g.Nodes) + len(g.Edges) + 2)
			anchors := g.Anchors
			require.Len(t, anchors, int(tm.Len())+1)
			for k := int64(0); k < tm.Len(); k++ {
				a := anchors[k]
				require.Greater(t, anchors[k+1].Event, a.Event, "interval %d holds events", k)
				require.LessOrEqual(t, anchors[k+1].Event-a.Event, tm.Spacing(), "interval %d", k)
				require.InDelta(t, calls[a.Event].Enter-t0, a.Time, float64((q-1)*ids), "anchor %d", k)
				require.Equal(t, evs[a.Event].Start, a.Time, "anchor %d", k)
				for i := a.Event; i < anchors[k+1].Event; i++ {
					for _, s := range []struct {
						tot      *totals
						dur, gap int64
					}{
						{&rebuilt, evs[i].End - evs[i].Start, 0},
						{&truth, calls[i].Exit - calls[i].Enter, 0},
					} {
						s.tot.node[evs[i].Node] += s.dur
						s.tot.mpi += s.dur
						s.tot.all += s.dur
						if i+1 < n {
							gap := evs[i+1].Start - evs[i].End
							if s.tot == &truth {
								gap = calls[i+1].Enter - calls[i].Exit
							}
							s.tot.edge[evs[i+1].InEdge] += gap
							s.tot.all += gap
						}
					}
				}
				if !tt.capped {
					for nd, v := range truth.node {
						require.InDelta(t, v, rebuilt.node[nd], float64(q-1), "node %d after interval %d", nd, k)
					}
					for ed, v := range truth.edge {
						require.InDelta(t, v, rebuilt.edge[ed], float64(q-1), "edge %d after interval %d", ed, k)
					}
				}
				require.InDelta(t, truth.mpi, rebuilt.mpi, float64((q-1)*ids), "MPI time after interval %d", k)
				require.InDelta(t, truth.all, rebuilt.all, float64((q-1)*ids), "time after interval %d", k)
			}
			last := anchors[len(anchors)-1]
			assert.Equal(t, n, last.Event)
			assert.InDelta(t, calls[n-1].Exit-t0, last.Time, float64((q-1)*ids))
			assert.Equal(t, evs[n-1].End, last.Time)
		})
	}
}

// TestTimingCeiling records 10^7 generated events and checks the budget
// holds for every size of budget, capped or not.
func TestTimingCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("10^7 events")
	}
	for _, tt := range []struct {
		opt   flowgen.Options
		bytes int
	}{
		{flowgen.Options{Seed: 1, Events: 10_000_000, Depth: 4, Sites: 40, MaxIter: 20, Branchy: true}, 0},
		{flowgen.Options{Seed: 12, Events: 10_000_000, Depth: 6, Sites: 300, MaxIter: 8, Branchy: true}, 1 << 10},
	} {
		tt.opt.TimingBytes = tt.bytes
		g := flowgen.New(tt.opt).Graph(1)
		budget := max(tt.bytes, flowgraph.MinTimingBytes)
		if tt.bytes == 0 {
			budget = flowgraph.DefaultTimingBytes
		}
		assert.LessOrEqual(t, g.Timing.Size(), budget)
		assert.Greater(t, g.Timing.Size(), budget/4, "the budget is used")
		require.NoError(t, g.Validate())
		t.Logf("budget %d: %d bytes, %d intervals of %d events, keep %d", budget, g.Timing.Size(), g.Timing.Len(), g.Timing.Spacing(), g.Timing.Keep())
	}
}

// TestTimingDensityPhases records phases whose event density differs
// 10^4-fold (polls of 1 us, then the same call taking 20 ms, then polls
// again) in a small budget. Intervals end by time where events are sparse,
// so none spans much more than its share of the run and every event
// starts within a few such shares of its true time. By count alone (format
// v2), the sparse phase and thousands of polls shared an interval, and
// polls were rebuilt seconds off.
func TestTimingDensityPhases(t *testing.T) {
	b := flowgraph.NewBuilderBudget(0, flowgraph.TimingBudget{Bytes: 4 << 10})
	var calls []flowgraph.Call
	var now int64
	add := func(call string, dur, gap int64) {
		now += gap
		c := flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: -1}, Enter: now, Exit: now + dur, Partner: -1}
		now += dur
		calls = append(calls, c)
		b.Add(c)
	}
	add("MPI_Init", 1000, 0)
	for phase := range 3 {
		for i := range 200_000 {
			switch {
			case phase == 1 && i < 200:
				add("MPI_Test", 20_000_000, 5_000_000)
			case phase != 1 && i%100 == 0:
				add("MPI_Irecv", 300, 500)
			case phase != 1:
				add("MPI_Test", 1000, 500)
			}
		}
	}
	g := b.Graph()
	require.NoError(t, g.Validate())
	tm := &g.Timing
	require.True(t, tm.Covers(g.NumEvents))
	total := calls[len(calls)-1].Exit - calls[0].Enter
	share := total / tm.Len()
	var longest int64
	for k := 0; k+1 < len(g.Anchors); k++ {
		a, z := g.Anchors[k], g.Anchors[k+1]
		// the time of the interval but for its last event, which may
		// end it late by its own duration and gap
		if z.Event-a.Event > 1 {
			longest = max(longest, calls[z.Event-1].Enter-calls[a.Event].Enter)
		}
	}
	assert.LessOrEqual(t, longest, 4*share, "an interval's time before its last event, %d intervals", tm.Len())
	worst := worstStart(t, &g, calls)
	assert.LessOrEqual(t, worst, 4*share, "start error, %d intervals of up to %d events", tm.Len(), tm.Spacing())
	t.Logf("%d events in %d intervals of up to %d events: a share of the run %d ns, longest %d ns, worst start error %d ns",
		g.NumEvents, tm.Len(), tm.Spacing(), share, longest, worst)
}

// TestTimingLastApart: a loop whose gap back to its start, or whose
// MPI_Wait, is now and then 200 ms instead of 1 us. The long gap or call
// crosses an interval's deadline, so it ends the interval, and the
// interval keeps it apart: the rebuilt events before it are not
// pushed late by a share of it (spread evenly over the gaps or calls of
// its edge or node in the interval, they were: up to 200 ms). IntervalIter
// times them as EventIter does.
func TestTimingLastApart(t *testing.T) {
	loop := func(long int) func(i int) (string, int64, int64) {
		return func(i int) (string, int64, int64) {
			gap, dur := int64(1000), int64(1000)
			if i%3 == long && i%60000 == long && i > 3 {
				if long == 0 {
					gap = 200_000_000
				} else {
					dur = 200_000_000
				}
			}
			return []string{"MPI_Irecv", "MPI_Send", "MPI_Wait"}[i%3], gap, dur
		}
	}
	lastGap := func(iv *flowgraph.TimingInterval) int64 { return iv.LastGap }
	lastDur := func(iv *flowgraph.TimingInterval) int64 { return iv.LastDur }
	for _, tc := range []struct {
		name      string
		event     func(i int) (call string, gap, dur int64)
		lastApart func(*flowgraph.TimingInterval) int64
	}{
		{"gap", loop(0), lastGap},
		{"call", loop(2), lastDur},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := flowgraph.NewBuilderBudget(0, flowgraph.TimingBudget{Bytes: 2 << 10})
			var calls []flowgraph.Call
			var now int64
			for i := range 300_000 {
				call, gap, dur := tc.event(i)
				now += gap
				c := flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: -1}, Enter: now, Exit: now + dur, Partner: -1}
				now += dur
				calls = append(calls, c)
				b.Add(c)
			}
			g := b.Graph()
			require.NoError(t, g.Validate())
			var kept int
			ti := g.Timing.Intervals()
			for ti.Next() {
				if tc.lastApart(ti.Interval()) > 0 {
					kept++
				}
			}
			require.NoError(t, ti.Err())
			assert.Positive(t, kept, "intervals that kept their last %s apart", tc.name)
			worst := worstStart(t, &g, calls)
			assert.Less(t, worst, int64(2_000_000), "start error (ns), %d of %d intervals kept their last %s apart", kept, g.Timing.Len(), tc.name)
			t.Logf("worst start error %d ns; %d of %d intervals kept their last %s apart", worst, kept, g.Timing.Len(), tc.name)
			checkIntervals(t, tc.name, &g, &g)
		})
	}
}

// worstStart is the largest error of the rebuilt events' start times
// against the calls g was built from.
func worstStart(t *testing.T, g *flowgraph.Graph, calls []flowgraph.Call) int64 {
	t.Helper()
	var worst int64
	it := g.Events()
	for i := 0; it.Next(); i++ {
		d := it.Event().Start - (calls[i].Enter - calls[0].Enter)
		worst = max(worst, d, -d)
	}
	require.NoError(t, it.Err())
	return worst
}

// nibbles packs the nibble varints of vals after the header bytes.
func nibbles(head []byte, vals ...uint64) []byte {
	var nibs []byte
	for _, v := range vals {
		for {
			x := byte(v & 7)
			v >>= 3
			if v != 0 {
				x |= 8
			}
			nibs = append(nibs, x)
			if v == 0 {
				break
			}
		}
	}
	if len(nibs)%2 == 1 {
		nibs = append(nibs, 0)
	}
	out := append([]byte(nil), head...)
	for i := 0; i < len(nibs); i += 2 {
		out = append(out, nibs[i]<<4|nibs[i+1])
	}
	return out
}

// TestTimingRejectsBadInput checks that decoding, validating and
// rebuilding name what is wrong.
func TestTimingRejectsBadInput(t *testing.T) {
	_, g := recordBudget(t, flowgen.Options{Seed: 4, Events: 300, Depth: 2, Sites: 5}, flowgraph.TimingBudget{})
	valid, err := msgpack.Marshal(g.Timing)
	require.NoError(t, err)
	var raw []byte
	require.NoError(t, msgpack.Unmarshal(valid, &raw))
	capped := []byte{1, 1, 0}   // spacing 1, keep 1, quantum 1
	implicit := []byte{1, 0, 0} // spacing 1, keep 0, quantum 1
	tests := []struct {
		name string
		bin  []byte
		want string
	}{
		{"spacing 3", []byte{3, 0, 0}, "power of two"},
		{"quantum 2^63", []byte{1, 0, 63}, "quantum"},
		{"truncated", raw[:len(raw)-1], "timing: interval"},
		{"node out of range", nibbles(capped, 1, 0, 0, 0, 100, 5), "node 100 out of range"},
		{"edge out of range", nibbles(capped, 0, 1, 0, 0, 100, 5), "edge 100 out of range"},
		{"more sums than events", nibbles(implicit, 2, 0, 5, 5), "2 node and 0 edge sums for 1 events"},
		{"too many intervals", append(append([]byte{}, raw...), 0), "intervals"},
		{"sum overflow", nibbles(implicit, 1, 1, 1<<62, 1<<62), "overflows"},
		{"sum beyond 64 bits", nibbles([]byte{1, 0, 2}, 1, 0, 1<<62), "out of range"},
		// format v3: a zero byte, then each interval with its events
		{"more events than the spacing", nibbles([]byte{0, 4, 0, 0}, 5, 0, 0), "bad number of events"},
		{"more events than the graph", nibbles([]byte{0, 0x80, 0x04, 0, 0}, 0, 0, 0), "the graph has 300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g2 := *g
			g2.Anchors = nil
			b, err := msgpack.Marshal(tt.bin)
			require.NoError(t, err)
			err = msgpack.Unmarshal(b, &g2.Timing)
			if err == nil {
				err = g2.Validate()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// Sums that validate but do not match the interval's nodes and
	// edges fail the rebuild.
	g2 := *g
	b, err := msgpack.Marshal(nibbles(implicit, 0, 1, 5))
	require.NoError(t, err)
	require.NoError(t, msgpack.Unmarshal(b, &g2.Timing))
	require.NoError(t, g2.Validate())
	it := g2.Events()
	for it.Next() {
	}
	require.Error(t, it.Err())
	assert.Contains(t, it.Err().Error(), "0 node and 1 edge sums for 1 nodes and 1 edges")
}

// FuzzTiming decodes arbitrary timing bins for a fixed graph and rebuilds
// the events of those that validate: decoding allocates in proportion to
// the bin (checkAlloc), and no figure of the intervals or the anchors
// derived from them is negative (checkRank).
func FuzzTiming(f *testing.F) {
	_, g := recordBudget(f, flowgen.Options{Seed: 8, Events: 300, Depth: 2, Sites: 6, Branchy: true}, flowgraph.TimingBudget{Bytes: 1 << 10})
	_, gc := recordBudget(f, flowgen.Options{Seed: 12, Events: 3000, Depth: 6, Sites: 300, MaxIter: 3, Branchy: true}, flowgraph.TimingBudget{Bytes: 1 << 10})
	for _, tm := range []flowgraph.Timing{g.Timing, gc.Timing} {
		b, err := msgpack.Marshal(tm)
		require.NoError(f, err)
		var raw []byte
		require.NoError(f, msgpack.Unmarshal(b, &raw))
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := msgpack.Marshal(data)
		require.NoError(t, err)
		g2 := *g
		var bad bool
		checkAlloc(t, "timing", len(data), allocated(func() {
			bad = msgpack.Unmarshal(b, &g2.Timing) != nil || g2.Validate() != nil
		}))
		if bad {
			return
		}
		g2.Anchors = g2.Timing.Anchors(g2.NumEvents)
		checkRank(t, &flowgraph.Rank{Graph: g2})
		it := g2.Events()
		var n int64
		var prev int64
		for it.Next() {
			ev := it.Event()
			if ev.Start < prev || ev.End < ev.Start {
				t.Fatalf("event %d goes back in time", n)
			}
			prev = ev.End
			n++
		}
		if it.Err() == nil && n != g2.NumEvents {
			t.Fatalf("valid graph yielded %d of %d events", n, g2.NumEvents)
		}
	})
}
