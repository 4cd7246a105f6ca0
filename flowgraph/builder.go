package flowgraph

// Builder records an event sequence into a Graph, the way the interposer
// does in C. It is used to build graphs from full traces and in tests.
type Builder struct {
	g          Graph
	nodes      map[NodeKey]int
	edges      map[[2]int]int
	sites      map[uint64]int
	timing     *timingRec
	prevNode   int
	lastExit   int64
	ncounters  int
	lastCounts []int64
}

// NewBuilder returns a Builder for graphs whose edges carry ncounters
// counter sums and whose Timing has at most maxIntervals intervals (no
// limit if maxIntervals < 2) in DefaultTimingBytes.
func NewBuilder(ncounters, maxIntervals int) *Builder {
	return NewBuilderBudget(ncounters, TimingBudget{Intervals: maxIntervals})
}

// NewBuilderBudget returns a Builder whose Timing stays within tb.
func NewBuilderBudget(ncounters int, tb TimingBudget) *Builder {
	return &Builder{
		g:         Graph{Initial: -1},
		nodes:     make(map[NodeKey]int),
		edges:     make(map[[2]int]int),
		sites:     make(map[uint64]int),
		timing:    newTimingRec(tb),
		prevNode:  -1,
		ncounters: ncounters,
	}
}

// Site returns the index of the call site with the given address, adding it
// if needed.
func (b *Builder) Site(cs CallSite) int {
	if i, ok := b.sites[cs.Addr]; ok {
		return i
	}
	b.g.Sites = append(b.g.Sites, cs)
	b.sites[cs.Addr] = len(b.g.Sites) - 1
	return len(b.g.Sites) - 1
}

// Call is one MPI call as the recorder sees it.
type Call struct {
	Key      NodeKey
	Enter    int64 // ns, any monotonic clock
	Exit     int64
	Bytes    int64
	Partner  int // world rank, -1 if none
	CommSize int
	// Counters are the counter values read at Enter and at Exit
	// (cumulative, as PAPI reports them); nil without counters.
	CountersEnter, CountersExit []int64
}

// Add appends one event.
func (b *Builder) Add(c Call) {
	g := &b.g
	idx := g.NumEvents
	ni, ok := b.nodes[c.Key]
	if !ok {
		g.Nodes = append(g.Nodes, Node{Key: c.Key})
		ni = len(g.Nodes) - 1
		b.nodes[c.Key] = ni
	}
	n := &g.Nodes[ni]
	dur := c.Exit - c.Enter
	np := past{n.Time.Total, n.Count} // the node's durations before this one
	n.Time.Add(dur, n.Count)
	n.Bytes.Add(c.Bytes, n.Count)
	n.Count++
	if c.CommSize > n.CommSize {
		n.CommSize = c.CommSize
	}
	if c.Partner >= 0 {
		n.addPartner(c.Partner)
	}

	ei := -1
	gap := c.Enter - b.lastExit
	var ep past // the edge's gaps before this one
	if idx == 0 {
		g.Initial = ni
	} else {
		key := [2]int{b.prevNode, ni}
		var ok bool
		ei, ok = b.edges[key]
		if !ok {
			g.Edges = append(g.Edges, Edge{Src: b.prevNode, Dst: ni, Counters: make([]int64, b.ncounters)})
			ei = len(g.Edges) - 1
			b.edges[key] = ei
		}
		e := &g.Edges[ei]
		ep = past{e.Time.Total, e.Count}
		e.Time.Add(gap, e.Count)
		e.Count++
		e.Seq.Append(idx)
		if b.lastCounts != nil && c.CountersEnter != nil {
			for i := range e.Counters {
				e.Counters[i] += c.CountersEnter[i] - b.lastCounts[i]
			}
		}
	}
	b.timing.add(idx, ni, ei, c.Enter, dur, gap, np, ep)
	b.lastExit = c.Exit
	b.lastCounts = c.CountersExit
	b.prevNode = ni
	g.NumEvents++
}

func (n *Node) addPartner(rank int) {
	for i := range n.Partners {
		if n.Partners[i].Rank == rank {
			n.Partners[i].Count++
			return
		}
	}
	if len(n.Partners) < MaxPartners {
		n.Partners = append(n.Partners, PartnerCount{Rank: rank, Count: 1})
		return
	}
	n.OtherPartners++
}

// Graph finishes the graph: it closes the last timing interval and
// derives the anchors from the Timing. The Builder must not be used
// afterwards.
func (b *Builder) Graph() Graph {
	g := b.g
	g.Timing = b.timing.finish(g.NumEvents)
	g.Anchors = g.Timing.Anchors(g.NumEvents)
	return g
}
