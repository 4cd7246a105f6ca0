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

// TestTimingExactPerInterval rebuilds the events of graphs recorded from a
// known trace and checks, per timing interval, that each node's duration
// sum and each edge's gap sum equal the truth's (for capped intervals:
// the interval's MPI and total time), every event exactly when the
// intervals are single events, and the derived anchors.
func TestTimingExactPerInterval(t *testing.T) {
	loops := flowgen.Options{Seed: 2, Events: 20000, Depth: 3, Sites: 8}
	branchy := flowgen.Options{Seed: 3, Events: 30000, Depth: 4, Sites: 30, Branchy: true}
	wide := flowgen.Options{Seed: 12, Events: 60000, Depth: 6, Sites: 300, MaxIter: 3, Branchy: true}
	tests := []struct {
		name    string
		opt     flowgen.Options
		tb      flowgraph.TimingBudget
		spacing int64 // expected spacing, 0: more than 1
		capped  bool
	}{
		{"fits, exact events", loops, flowgraph.TimingBudget{Bytes: 256 << 10}, 1, false},
		{"default budget", loops, flowgraph.TimingBudget{}, 0, false},
		{"merged", branchy, flowgraph.TimingBudget{Bytes: 4 << 10}, 0, false},
		{"interval limit", branchy, flowgraph.TimingBudget{Intervals: 7}, 0, false},
		{"interval limit 2", loops, flowgraph.TimingBudget{Intervals: 2}, 0, false},
		{"capped", wide, flowgraph.TimingBudget{Bytes: 2 << 10}, 0, true},
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
			assert.Equal(t, tt.capped, tm.Keep() > 0, "keep %d", tm.Keep())
			n := int64(len(calls))
			require.Equal(t, (n+tm.Spacing()-1)/tm.Spacing(), tm.Len())

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
				if tm.Spacing() == 1 {
					require.Equal(t, calls[i].Enter-t0, ev.Start, "start of event %d", i)
					require.Equal(t, calls[i].Exit-t0, ev.End, "end of event %d", i)
				}
			}

			type sums struct{ node, edge map[int]int64 }
			per := func(k int64, truth bool) (s sums, mpi, total int64) {
				s = sums{map[int]int64{}, map[int]int64{}}
				for i := k * tm.Spacing(); i < min(n, (k+1)*tm.Spacing()); i++ {
					d := evs[i].End - evs[i].Start
					if truth {
						d = calls[i].Exit - calls[i].Enter
					}
					s.node[evs[i].Node] += d
					mpi += d
					total += d
					if i+1 < n {
						gap := evs[i+1].Start - evs[i].End
						if truth {
							gap = calls[i+1].Enter - calls[i].Exit
						}
						s.edge[evs[i+1].InEdge] += gap
						total += gap
					}
				}
				return s, mpi, total
			}
			anchors := g.Anchors
			require.Len(t, anchors, int(tm.Len())+1)
			for k := int64(0); k < tm.Len(); k++ {
				want, wm, wt := per(k, true)
				got, gm, gt := per(k, false)
				if !tt.capped {
					require.Equal(t, want, got, "interval %d", k)
				}
				require.Equal(t, wm, gm, "MPI time of interval %d", k)
				require.Equal(t, wt, gt, "time of interval %d", k)
				a := anchors[k]
				require.Equal(t, k*tm.Spacing(), a.Event)
				require.Equal(t, calls[a.Event].Enter-t0, a.Time, "anchor %d", k)
				require.Equal(t, evs[a.Event].Start, a.Time, "anchor %d", k)
			}
			last := anchors[len(anchors)-1]
			assert.Equal(t, n, last.Event)
			assert.Equal(t, calls[n-1].Exit-t0, last.Time)
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

// TestTimingRejectsBadInput checks that decoding names what is wrong.
func TestTimingRejectsBadInput(t *testing.T) {
	_, g := recordBudget(t, flowgen.Options{Seed: 4, Events: 300, Depth: 2, Sites: 5}, flowgraph.TimingBudget{})
	valid, err := msgpack.Marshal(g.Timing)
	require.NoError(t, err)
	var raw []byte
	require.NoError(t, msgpack.Unmarshal(valid, &raw))
	tests := []struct {
		name string
		bin  []byte
		want string
	}{
		{"spacing 3", []byte{3, 0}, "power of two"},
		{"truncated", raw[:len(raw)-1], "timing: interval"},
		{"node out of range", []byte{1, 0, 1, 200, 1, 5}, "node 100 out of range"},
		{"edge out of range", []byte{1, 0, 1, 201, 1, 5}, "edge 100 out of range"},
		{"too many intervals", append(append([]byte{}, raw...), 0), "intervals"},
		{"sum overflow", []byte{1, 0, 2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "overflows"},
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
}

// FuzzTiming decodes arbitrary timing bins for a fixed graph and rebuilds
// the events of those that validate.
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
		if msgpack.Unmarshal(b, &g2.Timing) != nil || g2.Validate() != nil {
			return
		}
		g2.Anchors = g2.Timing.Anchors(g2.NumEvents)
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
