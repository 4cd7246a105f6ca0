package loops

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// Every event of a sequence built by seqGraph spends callTime inside the
// call, and every transition gapTime between calls.
const (
	callTime = 3
	gapTime  = 7
)

// seqGraph records the calls named in seq (each name is one call site) with
// the Builder, as the interposer would.
func seqGraph(seq ...string) *flowgraph.Graph {
	b := flowgraph.NewBuilder(1, 0)
	sites := map[string]int{}
	var t int64
	for i, name := range seq {
		site, ok := sites[name]
		if !ok {
			// The site depends on the name only, so that graphs of
			// different "ranks" agree on it.
			h := fnv.New32a()
			h.Write([]byte(name))
			off := uint64(h.Sum32() & 0xffff0)
			site = b.Site(flowgraph.CallSite{Addr: 0x400000 + off, Object: "/bin/app", Offset: off})
			sites[name] = site
		}
		ctr := []int64{int64(100 * i)}
		b.Add(flowgraph.Call{
			Key:   flowgraph.NodeKey{Call: name, Site: site, Partner: -1, Comm: -1},
			Enter: t, Exit: t + callTime, Bytes: 8, Partner: -1,
			CountersEnter: ctr, CountersExit: []int64{int64(100*i + 1)},
		})
		t += callTime + gapTime
	}
	g := b.Graph()
	return &g
}

// repeat returns n copies of the sequence s.
func repeat(n int, s ...string) []string {
	var out []string
	for range n {
		out = append(out, s...)
	}
	return out
}

// cat concatenates sequences.
func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// handEdge is an edge of a hand-built graph.
type handEdge struct {
	src, dst    int
	count, time int64
}

// handGraph builds a graph from named nodes with their times and edges,
// without sequence numbers.
func handGraph(initial int, names []string, nodeTimes []int64, edges []handEdge) *flowgraph.Graph {
	g := &flowgraph.Graph{Initial: initial}
	for i, name := range names {
		g.Nodes = append(g.Nodes, flowgraph.Node{Key: flowgraph.NodeKey{Call: name, Site: -1}, Count: 1, Time: flowgraph.Stat{Total: nodeTimes[i]}})
	}
	for _, e := range edges {
		g.Edges = append(g.Edges, flowgraph.Edge{Src: e.src, Dst: e.dst, Count: e.count, Time: flowgraph.Stat{Total: e.time}})
	}
	return g
}

// nodeByName returns the index of the node with call name name.
func nodeByName(t *testing.T, g *flowgraph.Graph, name string) int {
	t.Helper()
	for i := range g.Nodes {
		if g.Nodes[i].Key.Call == name {
			return i
		}
	}
	require.Failf(t, "no node", "%q", name)
	return -1
}

// edgeByName returns the index of the edge src -> dst.
func edgeByName(t *testing.T, g *flowgraph.Graph, src, dst string) int {
	t.Helper()
	s, d := nodeByName(t, g, src), nodeByName(t, g, dst)
	for i := range g.Edges {
		if g.Edges[i].Src == s && g.Edges[i].Dst == d {
			return i
		}
	}
	require.Failf(t, "no edge", "%s -> %s", src, dst)
	return -1
}

// membersFromForest computes the member set of the loop headed by h by
// walking every node's header chain, independently of the collapse.
func membersFromForest(f *Forest, h int) map[int]bool {
	m := map[int]bool{}
	for v := range f.Header {
		for x := v; x >= 0; x = f.Header[x] {
			if x == h {
				m[v] = true
				break
			}
		}
	}
	return m
}

// checkInvariants verifies what must hold for every collapse of g,
// recomputing each quantity from the raw graph: levels are acyclic, every
// node and loop appears exactly once, and time is conserved per level.
func checkInvariants(t *testing.T, g *flowgraph.Graph, c *Collapsed) {
	t.Helper()
	var total int64
	for i := range g.Nodes {
		total += g.Nodes[i].Time.Total
	}
	for i := range g.Edges {
		total += g.Edges[i].Time.Total
	}
	require.Equal(t, total, c.Total, "rank total")
	require.Len(t, c.Levels, len(c.Loops)+1)
	// the forest the collapse was built from
	f, err := NewForest(g)
	require.NoError(t, err)

	seenNode := make([]int, len(g.Nodes))
	seenLoop := make([]int, len(c.Loops)+1)
	for id, l := range c.Levels {
		require.Equal(t, id, l.Loop)
		for _, x := range l.Nodes {
			if x.Loop > 0 {
				require.Equal(t, -1, x.Node)
				require.Equal(t, id, c.Loops[x.Loop-1].Parent, "loop node %d drawn at level %d", x.Loop, id)
				seenLoop[x.Loop]++
			} else {
				require.Equal(t, id, c.LoopOf[x.Node])
				seenNode[x.Node]++
			}
		}
		// Nodes are in topological order, so every edge points forward:
		// the level is acyclic.
		drawn := map[int]bool{}
		for _, e := range l.Edges {
			require.Less(t, e.Src, e.Dst, "level %d edge %d->%d goes backwards", id, e.Src, e.Dst)
			var cnt, tm int64
			for _, ei := range e.Edges {
				require.False(t, drawn[ei], "edge %d drawn twice", ei)
				drawn[ei] = true
				cnt += g.Edges[ei].Count
				tm += g.Edges[ei].Time.Total
			}
			require.Equal(t, cnt, e.Count)
			require.Equal(t, tm, e.Time)
		}
	}
	for v, k := range seenNode {
		require.Equal(t, 1, k, "node %d appears %d times as a plain node", v, k)
	}
	for id := 1; id < len(seenLoop); id++ {
		require.Equal(t, 1, seenLoop[id], "loop %d appears %d times as a loop node", id, seenLoop[id])
	}

	// Top level: everything.
	require.Equal(t, total, c.Levels[0].Total(), "top level total")
	for i := range c.Loops {
		l := &c.Loops[i]
		require.Equal(t, i+1, l.ID)
		if l.Parent != 0 {
			require.Less(t, l.Parent, l.ID, "enclosing loops have smaller IDs")
		}
		mem := membersFromForest(f, l.Header)
		if isSplitSelfLoop(c, l.ID) {
			mem = map[int]bool{l.Header: true}
		}
		splitChild := hasSplitSelfLoop(c, l.ID)
		var want, bytes, calls int64
		for v := range mem {
			want += g.Nodes[v].Time.Total
			bytes += g.Nodes[v].Bytes.Total
			calls += g.Nodes[v].Count
		}
		var back int64
		for ei := range g.Edges {
			e := &g.Edges[ei]
			if mem[e.Src] && mem[e.Dst] {
				want += e.Time.Total
				if e.Dst == l.Header && !(splitChild && e.Src == e.Dst) {
					back += e.Count
				}
			}
		}
		require.Equal(t, want, l.Stats.Time, "loop %d accumulated time", l.ID)
		require.Equal(t, want, c.Levels[l.ID].Total(), "loop %d level total", l.ID)
		require.Equal(t, bytes, l.Stats.Bytes)
		require.Equal(t, calls, l.Stats.Calls)
		require.Equal(t, l.Stats.NodeTime+l.Stats.EdgeTime, l.Stats.Time)
		require.InDelta(t, float64(want)/float64(max(total, 1)), l.Stats.Share, 1e-12)
		sorted := c.Members(l.ID)
		require.Len(t, sorted, len(mem))
		for _, v := range sorted {
			require.True(t, mem[v])
		}
		// Entries: every edge from outside into the loop, and nothing else.
		var entries int64
		nent := 0
		for ei := range g.Edges {
			e := &g.Edges[ei]
			if !mem[e.Src] && mem[e.Dst] {
				entries += e.Count
				nent++
			}
		}
		require.Len(t, l.Entries, nent)
		if l.InitialInside {
			require.True(t, mem[g.Initial])
			entries++
		}
		require.Equal(t, entries, l.Stats.Entries)
		require.Equal(t, back+entries, l.Stats.Iterations)
		var attributed int64
		known := true
		for _, e := range l.Entries {
			if e.Iterations < 0 {
				known = false
			}
			attributed += e.Iterations
		}
		if known && !l.InitialInside && len(l.Entries) > 0 {
			require.Equal(t, l.Stats.Iterations, attributed, "loop %d per-entry iterations", l.ID)
		}
	}
}

// isSplitSelfLoop reports whether loop id is the self-loop of a header that
// also heads the enclosing loop.
func isSplitSelfLoop(c *Collapsed, id int) bool {
	l := &c.Loops[id-1]
	return l.Parent != 0 && c.Loops[l.Parent-1].Header == l.Header
}

// hasSplitSelfLoop reports whether loop id's header self-loop has become a
// nested loop of its own.
func hasSplitSelfLoop(c *Collapsed, id int) bool {
	for _, ch := range c.Loops[id-1].Children {
		if isSplitSelfLoop(c, ch) {
			return true
		}
	}
	return false
}

// headerVisits is how many iterations a loop entered only at its header
// has: the visits of the header, less the repetitions counted by a nested
// self-loop of the header.
func headerVisits(g *flowgraph.Graph, c *Collapsed, id int) int64 {
	l := &c.Loops[id-1]
	n := g.Nodes[l.Header].Count
	if hasSplitSelfLoop(c, id) {
		for _, e := range g.Edges {
			if e.Src == l.Header && e.Dst == l.Header {
				n -= e.Count
			}
		}
	}
	return n
}
