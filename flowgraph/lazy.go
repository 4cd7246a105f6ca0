package flowgraph

// Access to the sequences of a graph that may have been read lazily
// (File.ReadLazy): the loop analysis asks for what it needs, and only
// that is mapped from the file's positions.

// seqRead is how a graph's sequences are read.
type seqRead uint8

const (
	readAll  seqRead = iota // decoded as event indices
	readNone                // left out (File.Skeleton)
	readLazy                // positions mapped on demand (File.ReadLazy)
)

// EdgeSeq returns the sequence numbers of edge i, its Edge.Seq. For a graph
// read by File.ReadLazy they are mapped from the stored positions on the
// first call, so it must not be called concurrently on such a graph.
func (g *Graph) EdgeSeq(i int) *Seq {
	if e := &g.Edges[i]; g.lazy != nil && e.Count > 0 && e.Seq.IsZero() {
		e.Seq = g.lazy.seq(g, i)
	}
	return &g.Edges[i].Seq
}

// OrderSeqs returns sequences of the edges es whose numbers order their
// traversals as the event numbers do, for walks that only compare them
// (WalkSeqs): EdgeSeq's, or for a graph read by File.ReadLazy where no
// edge of es is a self-loop the stored positions, which need no mapping.
func (g *Graph) OrderSeqs(es []int) []*Seq {
	seqs := make([]*Seq, len(es))
	for k, i := range es {
		if e := &g.Edges[i]; g.lazy == nil || e.Src == e.Dst {
			return g.edgeSeqs(es, seqs)
		}
		seqs[k] = &g.lazy.pos[i]
	}
	return seqs
}

func (g *Graph) edgeSeqs(es []int, seqs []*Seq) []*Seq {
	for k, i := range es {
		seqs[k] = g.EdgeSeq(i)
	}
	return seqs
}

// RunsAfter returns, for each edge of entries (edges from other nodes into
// the node of self-loop edge self), how many traversals of self follow its
// traversals before another node's event: what a call entered through each
// edge was repeated back to back, summed; nil if an edge has no sequence
// numbers. For a graph read by File.ReadLazy it maps no sequence.
func (g *Graph) RunsAfter(self int, entries []int) []int64 {
	if g.lazy == nil {
		for _, i := range append([]int{self}, entries...) {
			if e := &g.Edges[i]; e.Seq.Len() != e.Count {
				return nil
			}
		}
	}
	// blocks are self's runs of traversals, each starting right after the
	// event of its run's first call, in the numbers of the entries' Seqs.
	var blocks []selfBlock
	seq := func(i int) *Seq { return &g.Edges[i].Seq }
	if g.lazy != nil {
		blocks = g.lazy.edgeBlocks(self)
		seq = func(i int) *Seq { return &g.lazy.pos[i] }
	} else {
		add := func(start, count int64) {
			// runs of the Seq's progressions may touch: one block
			if n := len(blocks); n > 0 && blocks[n-1].start+blocks[n-1].count == start {
				blocks[n-1].count += count
				return
			}
			blocks = appendBlock(blocks, start, count, self)
		}
		g.Edges[self].Seq.Runs(func(r SeqRun) bool {
			if r.Stride == 1 {
				add(r.Start, r.Count)
				return true
			}
			for k := range r.Count {
				add(r.Start+k*r.Stride, 1)
			}
			return true
		})
	}
	out := make([]int64, len(entries))
	for k, ei := range entries {
		j := 0
		seq(ei).All(func(x int64) bool {
			for j < len(blocks) && blocks[j].start <= x {
				j++
			}
			if j < len(blocks) && blocks[j].start == x+1 {
				out[k] += blocks[j].count
			}
			return true
		})
	}
	return out
}

// FirstEvent is the first sequence number of edge i, -1 if it has none
// (also for a graph read by File.Skeleton).
func (g *Graph) FirstEvent(i int) int64 {
	if g.lazy != nil {
		return g.lazy.first[i]
	}
	return g.Edges[i].Seq.First()
}

// DropSequences empties every edge's Seq and keeps only the first and the
// last anchor (Anchors.Ends), as File.Skeleton reads a graph: for views
// that no longer walk its events, so that memory follows the file.
func (g *Graph) DropSequences() {
	for i := range g.Edges {
		g.Edges[i].Seq = Seq{}
	}
	g.lazy = nil
	g.Anchors = g.Anchors.Ends()
}
