package flowgraph

// Builder records an event sequence into a Graph, the way the interposer
// does in C. It is used to build graphs from full traces and in tests.
type Builder struct {
	g          Graph
	nodes      map[NodeKey]int
	edges      map[[2]int]int
	sites      map[uint64]int
	budget     int
	spacing    int64
	prevNode   int
	t0         int64 // enter time of event 0
	lastExit   int64
	mpiTime    int64
	ncounters  int
	lastCounts []int64
}

// NewBuilder returns a Builder for graphs whose edges carry ncounters
// counter sums and whose anchor list holds at most anchorBudget entries
// (MaxAnchors if anchorBudget < 2).
func NewBuilder(ncounters, anchorBudget int) *Builder {
	if anchorBudget < 2 {
		anchorBudget = MaxAnchors
	}
	return &Builder{
		g:         Graph{Initial: -1},
		nodes:     make(map[NodeKey]int),
		edges:     make(map[[2]int]int),
		sites:     make(map[uint64]int),
		budget:    anchorBudget,
		spacing:   1,
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
	n.Time.Add(dur, n.Count)
	n.Bytes.Add(c.Bytes, n.Count)
	n.Count++
	if c.CommSize > n.CommSize {
		n.CommSize = c.CommSize
	}
	if c.Partner >= 0 {
		n.addPartner(c.Partner)
	}

	if idx == 0 {
		g.Initial = ni
		b.t0 = c.Enter
	} else {
		key := [2]int{b.prevNode, ni}
		ei, ok := b.edges[key]
		if !ok {
			g.Edges = append(g.Edges, Edge{Src: b.prevNode, Dst: ni, Counters: make([]int64, b.ncounters)})
			ei = len(g.Edges) - 1
			b.edges[key] = ei
		}
		e := &g.Edges[ei]
		e.Time.Add(c.Enter-b.lastExit, e.Count)
		e.Count++
		e.Seq.Append(idx)
		if b.lastCounts != nil && c.CountersEnter != nil {
			for i := range e.Counters {
				e.Counters[i] += c.CountersEnter[i] - b.lastCounts[i]
			}
		}
	}
	if idx%b.spacing == 0 {
		b.anchor(Anchor{Event: idx, Time: c.Enter - b.t0, MPITime: b.mpiTime})
	}
	b.mpiTime += dur
	b.lastExit = c.Exit
	b.lastCounts = c.CountersExit
	b.prevNode = ni
	g.NumEvents++
}

func (b *Builder) anchor(a Anchor) {
	g := &b.g
	if len(g.Anchors) == b.budget {
		// Keep every other anchor and double the spacing, so the budget
		// holds for any number of events.
		k := 0
		for i := 0; i < len(g.Anchors); i += 2 {
			g.Anchors[k] = g.Anchors[i]
			k++
		}
		g.Anchors = g.Anchors[:k]
		b.spacing *= 2
		if a.Event%b.spacing != 0 {
			return
		}
	}
	g.Anchors = append(g.Anchors, a)
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

// Graph finishes the graph: it adds the closing anchor at the end of the
// last event. The Builder must not be used afterwards.
func (b *Builder) Graph() Graph {
	g := b.g
	if g.NumEvents > 0 {
		g.Anchors = append(g.Anchors, Anchor{Event: g.NumEvents, Time: b.lastExit - b.t0, MPITime: b.mpiTime})
	}
	return g
}
