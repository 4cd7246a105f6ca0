package flowgraph

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Positions (format version 4). A poll that completes after a varying number
// of tries is a run of one node whose length varies; with sequence numbers
// that count every event, each such run shifts the numbers of every later
// event, so every edge of the loop around the poll breaks its arithmetic
// progressions into a term per iteration (HPCC at 2 ranks: 72k terms, of
// which the polls' self-loops hold 31k). Files of version 4 therefore may
// store the sequences in positions: an edge that is not a self-loop stores
// the position of each event it leads to, its index among the events that
// do not repeat the event before them; a self-loop n -> n stores, for each
// event of n at a position (each run of n), the number of events of n up to
// the end of that run. The order of the program around the polls keeps its
// regularity, and what varies, the run lengths, is one ascending sequence
// per polled node. In memory every Seq holds event indices; the conversion
// happens when a graph is encoded and decoded.
//
// Positions cost a walk over the runs and the positions of the polled
// nodes when read, so they are used only where self-loops are irregular
// (more than positionsMinTerms terms in all) and the walk is bounded.
const (
	positionsMinTerms = 64
	// maxPositionsWork bounds the runs and occurrences a conversion
	// walks, so that a crafted file cannot make a reader work without
	// limit; writers fall back to event indices beyond it.
	maxPositionsWork = 1 << 26
)

// selfBlock is a run of consecutive traversals of a self-loop: the events
// at indices start .. start+count-1 (at decoding: from position key, the
// position after the run's first event).
type selfBlock struct {
	start, count int64
	edge         int
}

// runCount is the number of arithmetic runs of the subtree at p, repeats
// expanded.
func runCount(ts []SeqTerm, p int) int64 {
	t := &ts[p]
	if t.Body == 0 {
		return 1
	}
	var n int64
	for c, k := p+1, int32(0); k < t.Body; c, k = c+int(ts[c].Size), k+1 {
		n += runCount(ts, c)
		if n > maxPositionsWork {
			return n
		}
	}
	if n > maxPositionsWork/max(t.Count, 1) {
		return maxPositionsWork + 1
	}
	return t.Count * n
}

// seqRuns is runCount of a whole Seq, saturating above maxPositionsWork.
func seqRuns(s *Seq) int64 {
	ts := s.Terms()
	var n int64
	for p := 0; p < len(ts) && n <= maxPositionsWork; p += int(ts[p].Size) {
		n += runCount(ts, p)
	}
	return n
}

// appendRun appends the numbers of r, which must all be larger than the
// last number of s, with the terms Append would give them one by one.
func (s *Seq) appendRun(r SeqRun) {
	for k := int64(0); k < r.Count; k++ {
		s.Append(r.Start + k*r.Stride)
		if o := &s.open; r.Count > 1 && o.Count >= 2 && o.Stride == r.Stride {
			// The open run ends with number k at stride r.Stride:
			// the rest continue it one by one.
			o.Count += r.Count - 1 - k
			return
		}
	}
}

// usePositions tells whether g's sequences are stored as positions: its
// self-loops are irregular and the conversion's walk is bounded.
func (g *Graph) usePositions() bool {
	terms, work := 0, int64(0)
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src != e.Dst {
			continue
		}
		terms += e.Seq.NumTerms()
		work += seqRuns(&e.Seq) + g.Nodes[e.Src].Count - e.Count
	}
	return terms > positionsMinTerms && work <= maxPositionsWork
}

// positionsWork is what reading sequences stored as positions (seq(i) of
// edge i) walks: their runs, and the events of polled nodes that follow
// another node (self: each node's self-loop or -1), saturating above
// maxPositionsWork.
func positionsWork(g *Graph, seq func(i int) *Seq, self []int) int64 {
	var w int64
	for i := range g.Edges {
		s := seq(i)
		w += seqRuns(s)
		if e := &g.Edges[i]; e.Src != e.Dst && self[e.Dst] >= 0 {
			l := s.Len()
			if l < 0 || l > maxPositionsWork {
				return maxPositionsWork + 1
			}
			w += l
		}
		if w > maxPositionsWork {
			return w
		}
	}
	return w
}

// heads returns, per node with a self-loop, the events that start its runs
// (those that follow another node), ascending, from the edges' sequences
// seq(i) (event indices or positions alike).
func heads(g *Graph, seq func(i int) *Seq, self []int) [][]int64 {
	n := make([]int64, len(g.Nodes))
	n[g.Initial]++
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src != e.Dst && self[e.Dst] >= 0 {
			n[e.Dst] += seq(i).Len()
		}
	}
	hs := make([][]int64, len(g.Nodes))
	for k := range hs {
		if self[k] >= 0 {
			hs[k] = make([]int64, 0, n[k])
		}
	}
	// runs[k]: where each ascending part of hs[k] starts (one per entry).
	runs := make([][]int, len(g.Nodes))
	if self[g.Initial] >= 0 {
		hs[g.Initial] = append(hs[g.Initial], 0)
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src == e.Dst || self[e.Dst] < 0 {
			continue
		}
		runs[e.Dst] = append(runs[e.Dst], len(hs[e.Dst]))
		h := hs[e.Dst] // a local slice: no write barrier per number
		seq(i).All(func(x int64) bool {
			h = append(h, x)
			return true
		})
		hs[e.Dst] = h
	}
	for k, h := range hs {
		if len(h) > 0 {
			hs[k] = mergeRuns(h, append(append([]int{0}, runs[k]...), len(h)), func(x int64) int64 { return x })
		}
	}
	return hs
}

// toPositions returns g's sequences as positions, one per edge, and the
// runs of its self-looped nodes.
func (g *Graph) toPositions() ([]Seq, []polled) {
	var blocks []selfBlock
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src != e.Dst {
			continue
		}
		e.Seq.Runs(func(r SeqRun) bool {
			if r.Stride == 1 {
				blocks = appendBlock(blocks, r.Start, r.Count, i)
				return true
			}
			for k := int64(0); k < r.Count; k++ {
				blocks = appendBlock(blocks, r.Start+k*r.Stride, 1, i)
			}
			return true
		})
	}
	slices.SortFunc(blocks, func(a, b selfBlock) int { return cmp.Compare(a.start, b.start) })
	// A self-loop's runs from different terms may touch; merge them.
	w := 0
	for _, b := range blocks {
		if w > 0 && blocks[w-1].edge == b.edge && blocks[w-1].start+blocks[w-1].count == b.start {
			blocks[w-1].count += b.count
			continue
		}
		blocks[w] = b
		w++
	}
	blocks = blocks[:w]
	// keys[j] is block j's start; before[j] the traversals of the
	// blocks before j.
	keys := make([]int64, len(blocks))
	before := make([]int64, len(blocks)+1)
	for j, b := range blocks {
		keys[j] = b.start
		before[j+1] = before[j] + b.count
	}
	out := make([]Seq, len(g.Edges))
	self := selfLoops(g)
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src != e.Dst {
			mapRuns(&e.Seq, &out[i], keys, func(x int64, j int) int64 { return x - before[j] })
		}
	}
	// Each self-loop: per run of its node (head h), its length.
	per := make([][]selfBlock, len(g.Edges))
	for _, b := range blocks {
		per[b.edge] = append(per[b.edge], b)
	}
	var runs []polled
	for n, hs := range heads(g, func(i int) *Seq { return &g.Edges[i].Seq }, self) {
		ei := self[n]
		if ei < 0 {
			continue
		}
		bs := per[ei]
		p := polled{edge: ei, heads: hs, lens: make([]int64, len(hs))}
		for k, h := range hs {
			p.lens[k] = 1
			if len(bs) > 0 && bs[0].start == h+1 {
				p.lens[k] += bs[0].count
				bs = bs[1:]
			}
		}
		out[ei] = runEnds(p.lens)
		runs = append(runs, p)
	}
	return out, runs
}

// polled are the runs of a node with a self-loop (edge): the index of
// each run's first event, in order, and its number of events.
type polled struct {
	edge        int
	heads, lens []int64
}

// runEnds returns the stored form of run lengths lens: each run's end,
// counted in the node's events.
func runEnds(lens []int64) Seq {
	var s Seq
	var c int64
	for k := 0; k < len(lens); {
		// a stretch of equal lengths is one progression
		m, n := lens[k], 1
		for k+n < len(lens) && lens[k+n] == m {
			n++
		}
		s.appendRun(SeqRun{Start: c + m, Stride: m, Count: int64(n)})
		c += m * int64(n)
		k += n
	}
	return s
}

// selfLoops returns, per node, the index of its self-loop edge or -1.
func selfLoops(g *Graph) []int {
	self := make([]int, len(g.Nodes))
	for i := range self {
		self[i] = -1
	}
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src == e.Dst && e.Src >= 0 && e.Src < len(self) {
			self[e.Src] = i
		}
	}
	return self
}

func appendBlock(bs []selfBlock, start, count int64, edge int) []selfBlock {
	return append(bs, selfBlock{start: start, count: count, edge: edge})
}

// mapRuns appends to out the numbers of s, each x mapped by f(x, j), where
// j is the number of keys at or below x: a run at a time between keys.
func mapRuns(s, out *Seq, keys []int64, f func(x int64, j int) int64) {
	s.Runs(func(r SeqRun) bool {
		x, left, last := r.Start, r.Count, r.Last()
		j := sort.Search(len(keys), func(k int) bool { return keys[k] > x })
		for left > 0 {
			for j < len(keys) && keys[j] <= x {
				j++
			}
			n := left
			if j < len(keys) && keys[j] <= last {
				n = (keys[j] - x + r.Stride - 1) / r.Stride // the numbers below key j
			}
			out.appendRun(SeqRun{Start: f(x, j), Stride: r.Stride, Count: n})
			x += n * r.Stride
			left -= n
		}
		return true
	})
}

// storedSeqs returns the sequences of g's edges as files store them, one
// after the other (Seq.AppendBinary), and whether they are positions.
func (g *Graph) storedSeqs() (raw []byte, positions bool) {
	seqs, _ := g.positions()
	if seqs != nil {
		for _, s := range seqs {
			raw = s.AppendBinary(raw)
		}
		return raw, true
	}
	for i := range g.Edges {
		raw = g.Edges[i].Seq.AppendBinary(raw)
	}
	return raw, false
}

// positions returns what toPositions does where g's sequences are stored
// as positions, else nil.
func (g *Graph) positions() ([]Seq, []polled) {
	if g.NumEvents == 0 || !g.usePositions() {
		return nil, nil
	}
	seqs, polls := g.toPositions()
	if positionsWork(g, func(i int) *Seq { return &seqs[i] }, selfLoops(g)) > maxPositionsWork {
		return nil, nil
	}
	return seqs, polls
}

var errPositions = errors.New("sequence positions inconsistent")

// fromPositions turns g's sequences, stored as positions, into event
// indices.
func (g *Graph) fromPositions() error {
	m, err := newPosMap(g)
	if err != nil {
		return err
	}
	out := make([]Seq, len(g.Edges))
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src != e.Dst {
			m.mapSeq(&m.pos[i], &out[i])
		}
	}
	for j := range m.keys {
		out[m.edge[j]].appendRun(SeqRun{Start: m.keys[j] + m.before[j], Stride: 1, Count: m.count(j)})
	}
	for i := range g.Edges {
		out[i].seal()
		g.Edges[i].Seq = out[i]
	}
	return nil
}

// posMap maps a graph's sequences stored as positions to event indices.
// The runs of the self-loops after their first event (blocks) are held as
// parallel arrays, by start: a polled rank has millions.
type posMap struct {
	pos    []Seq   // each edge's as stored (a self-loop's: none once mapped)
	keys   []int64 // the blocks' starts
	before []int64 // before[j]: the events of blocks[:j]
	edge   []int32 // each block's self-loop
	first  []int64 // each edge's first event index, -1 if none (lazy reads)
	// byEdge are the blocks of each self-loop, in order (lazy reads).
	byEdge [][]int32
}

// count is the number of events of block j.
func (m *posMap) count(j int) int64 { return m.before[j+1] - m.before[j] }

// indexEdges fills byEdge.
func (m *posMap) indexEdges() {
	n := make([]int, len(m.pos))
	for _, x := range m.edge {
		n[x]++
	}
	m.byEdge = make([][]int32, len(m.pos))
	for j, x := range m.edge {
		if m.byEdge[x] == nil {
			m.byEdge[x] = make([]int32, 0, n[x])
		}
		m.byEdge[x] = append(m.byEdge[x], int32(j))
	}
}

// edgeBlocks returns the blocks of self-loop edge e, in positions.
func (m *posMap) edgeBlocks(e int) []selfBlock {
	bs := make([]selfBlock, len(m.byEdge[e]))
	for k, j := range m.byEdge[e] {
		bs[k] = selfBlock{start: m.keys[j], count: m.count(int(j)), edge: e}
	}
	return bs
}

// newPosMap checks the positions of g's sequences (its Edge.Seq) and
// prepares their mapping.
func newPosMap(g *Graph) (*posMap, error) {
	nn := len(g.Nodes)
	self := make([]int, nn)
	for i := range self {
		self[i] = -1
	}
	m := &posMap{pos: make([]Seq, len(g.Edges))}
	for i := range g.Edges {
		e := &g.Edges[i]
		m.pos[i] = e.Seq
		if e.Src < 0 || e.Src >= nn || e.Dst < 0 || e.Dst >= nn {
			return nil, fmt.Errorf("edge %d: %d -> %d out of range (%d nodes)", i, e.Src, e.Dst, nn)
		}
		if e.Src == e.Dst {
			if self[e.Src] >= 0 {
				return nil, fmt.Errorf("edges %d and %d: two self-loops of node %d", self[e.Src], i, e.Src)
			}
			self[e.Src] = i
		}
	}
	if g.NumEvents <= 0 || g.Initial < 0 || g.Initial >= nn {
		return nil, fmt.Errorf("%w: no events or initial node out of range", errPositions)
	}
	// An edge that is not a self-loop has a position per traversal.
	// Checked before anything is allocated by the positions: heads
	// allocates a number for each that leads into a polled node.
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Src != e.Dst {
			if l := m.pos[i].Len(); l != e.Count || l < 0 || l >= g.NumEvents {
				return nil, fmt.Errorf("edge %d: count %d but %d positions (%d events)", i, e.Count, l, g.NumEvents)
			}
		}
	}
	seq := func(i int) *Seq { return &m.pos[i] }
	if positionsWork(g, seq, self) > maxPositionsWork {
		return nil, fmt.Errorf("%w: more than %d runs and positions to walk", errPositions, maxPositionsWork)
	}
	var lists []*edgeRuns
	for n, hs := range heads(g, seq, self) {
		ei := self[n]
		if ei < 0 {
			continue
		}
		s := &m.pos[ei]
		if l := s.Len(); l != int64(len(hs)) {
			return nil, fmt.Errorf("edge %d: %d run lengths for %d runs of node %d", ei, l, len(hs), n)
		}
		if l := newEdgeRuns(int32(ei), hs, s); l.next() {
			lists = append(lists, l)
		}
	}
	if err := m.mergeBlocks(lists, g.NumEvents); err != nil {
		return nil, err
	}
	for _, ei := range self {
		if ei >= 0 {
			m.pos[ei] = Seq{} // in the blocks now
		}
	}
	return m, nil
}

// edgeRuns are the blocks of one self-loop, by start, from the events
// that start its node's runs (heads) and the runs' ends (a cursor over the
// stored ends).
type edgeRuns struct {
	edge       int32
	heads      []int64
	ends       seqCursor
	k          int   // the run of the next end
	prev       int64 // the previous end
	key, count int64 // the current block
	n          int   // the blocks
}

func newEdgeRuns(edge int32, heads []int64, ends *Seq) *edgeRuns {
	l := &edgeRuns{edge: edge, heads: heads}
	// The blocks are counted first, so that posMap's arrays are made
	// once to size.
	for l.ends.Init(ends); l.next(); {
		l.n++
	}
	l.k, l.prev = 0, 0
	l.ends.Init(ends)
	return l
}

// next moves to the next block, if any: a run longer than its head.
func (l *edgeRuns) next() bool {
	for l.ends.val != math.MaxInt64 {
		c, k := l.ends.val, l.k
		d := c - l.prev
		l.ends.Next()
		l.prev, l.k = c, k+1
		if d > 1 {
			l.key, l.count = l.heads[k]+1, d-1
			return true
		}
	}
	return false
}

// mergeBlocks sets m's blocks to those of lists merged by start, checking
// that no two start at one position and that they hold at most nev events.
// Each list is at its first block.
func (m *posMap) mergeBlocks(lists []*edgeRuns, nev int64) error {
	var n int
	for _, l := range lists {
		n += l.n
	}
	// Local slices and a heap of plain values: no write barriers.
	keys, before, edge := make([]int64, 0, n), make([]int64, 1, n+1), make([]int32, 0, n)
	// A heap of the lists by their current block's start.
	type head struct {
		key int64
		l   int
	}
	h := make([]head, len(lists))
	for i, l := range lists {
		h[i] = head{l.key, i}
	}
	down := func(i int) {
		for {
			l, c := 2*i+1, i
			if l < len(h) && h[l].key < h[c].key {
				c = l
			}
			if r := l + 1; r < len(h) && h[r].key < h[c].key {
				c = r
			}
			if c == i {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		l := lists[h[0].l]
		b := before[len(before)-1] + l.count
		if j := len(keys); j > 0 && l.key == keys[j-1] {
			return fmt.Errorf("%w: two runs at position %d", errPositions, l.key)
		}
		if b > nev {
			return fmt.Errorf("%w: runs longer than the %d events", errPositions, nev)
		}
		keys, before, edge = append(keys, l.key), append(before, b), append(edge, l.edge)
		if l.next() {
			h[0].key = l.key
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	m.keys, m.before, m.edge = keys, before, edge
	return nil
}

// mergeRuns sorts xs by key, given that each xs[runs[i]:runs[i+1]]
// ascends (runs ascending from 0 to len(xs)), by merging the runs pairwise:
// O(n log runs), where sorting took a third of reading a rank's positions.
func mergeRuns[T any](xs []T, runs []int, key func(T) int64) []T {
	runs = slices.Compact(runs)
	if len(runs) <= 2 {
		return xs
	}
	tmp := make([]T, len(xs))
	for len(runs) > 2 {
		next := runs[:1]
		for i := 0; i+1 < len(runs); i += 2 {
			lo, mid := runs[i], runs[i+1]
			hi := mid
			if i+2 < len(runs) {
				hi = runs[i+2]
			}
			a, b, k := xs[lo:mid], xs[mid:hi], lo
			for len(a) > 0 && len(b) > 0 {
				if key(b[0]) < key(a[0]) {
					tmp[k], b = b[0], b[1:]
				} else {
					tmp[k], a = a[0], a[1:]
				}
				k++
			}
			copy(tmp[k+copy(tmp[k:], a):], b)
			next = append(next, hi)
		}
		xs, tmp = tmp, xs
		runs = next
	}
	return xs
}

// mapSeq appends to out the event indices of the positions s.
func (m *posMap) mapSeq(s, out *Seq) {
	mapRuns(s, out, m.keys, func(x int64, j int) int64 { return x + m.before[j] })
}

// index is the event index of position x.
func (m *posMap) index(x int64) int64 {
	j, _ := slices.BinarySearch(m.keys, x+1)
	return x + m.before[j]
}

// lazy readies m to map g's sequences on demand (Graph.EdgeSeq): it checks
// what Validate would check of the mapped sequences, records each edge's
// first event, indexes the blocks by edge, and empties the edges' Seq.
func (m *posMap) lazy(g *Graph) error {
	m.indexEdges()
	m.first = make([]int64, len(g.Edges))
	last := make([]int64, len(g.Edges))
	count := make([]int64, len(g.Edges))
	for i := range g.Edges {
		m.first[i], last[i] = -1, -1
		if e := &g.Edges[i]; e.Src != e.Dst {
			// newPosMap checked that it holds e.Count positions.
			if count[i] = e.Count; count[i] > 0 {
				m.first[i], last[i] = m.index(m.pos[i].First()), m.index(m.pos[i].Last())
			}
		}
	}
	for j, e := range m.edge {
		start := m.keys[j] + m.before[j]
		if m.first[e] < 0 {
			m.first[e] = start
		}
		last[e] = start + m.count(j) - 1
		count[e] += m.count(j)
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if count[i] != e.Count {
			return fmt.Errorf("edge %d: count %d but %d sequence numbers", i, e.Count, count[i])
		}
		if e.Count > 0 && (m.first[i] < 1 || last[i] >= g.NumEvents) {
			return fmt.Errorf("edge %d: sequence numbers outside 1..%d", i, g.NumEvents-1)
		}
		e.Seq = Seq{}
	}
	return nil
}

// seq returns the event indices of edge i of g.
func (m *posMap) seq(g *Graph, i int) Seq {
	var s Seq
	if e := &g.Edges[i]; e.Src != e.Dst {
		m.mapSeq(&m.pos[i], &s)
	} else {
		for _, j := range m.byEdge[i] {
			s.appendRun(SeqRun{Start: m.keys[j] + m.before[j], Stride: 1, Count: m.count(int(j))})
		}
	}
	s.seal()
	return s
}
