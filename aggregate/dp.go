package aggregate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Cut values stored per hierarchy node and interval [i, j] of slices: a
// value k with i <= k < j is a temporal cut into [i, k] and [k+1, j]; j
// means no cut (the interval is one aggregate); spatialCut means the node is
// cut into its children over [i, j].
const spatialCut = -1

// tieEps is the relative tolerance under which two qualities are taken as
// equal: gain and loss are differences of sums of x log x terms, so exact
// ties (uniform data) come out with rounding noise of that order.
const tieEps = 1e-9

// DefaultCacheBytes is the default memory budget for keeping the gain and
// loss of every node and interval between runs (see Options.CacheBytes).
const DefaultCacheBytes = 256 << 20

// invLn2 converts natural logarithms to base 2.
const invLn2 = 1 / math.Ln2

// Options tune an Aggregator.
type Options struct {
	// Raw disables the normalization of gain and loss. By default, as in
	// Ocelotl, both are divided by those of the single full aggregate, so
	// that p weighs quantities of the same scale; this only reparametrizes
	// p and never changes the set of best partitions.
	Raw bool
	// Workers bounds the goroutines of a run (GOMAXPROCS if < 1).
	Workers int
	// CacheBytes is the memory allowed for keeping gain and loss matrices
	// between runs, which speeds up PValues; 0 means DefaultCacheBytes,
	// a negative value disables the cache.
	CacheBytes int64
}

// Aggregator computes best partitions of a model under a hierarchy. It is
// not safe for concurrent use: each run rewrites its cut matrices (runs use
// several goroutines themselves, see Options.Workers).
type Aggregator struct {
	m       *Model
	h       *Hierarchy
	opt     Options
	nt, nx  int
	ntri    int
	end     []int     // end[n]: one past the last node of n's subtree
	leaves  []int     // leaves[n]: resources under n
	cuts    [][]int16 // per node, triangular over intervals
	cache   []*quality
	gainMax float64 // gain and loss of the full aggregate
	lossMax float64
	work    sync.Pool
	tris    sync.Pool
}

// quality holds, per interval of one node (triangular layout), the gain,
// the loss and the magnitude of the terms they were computed from (for
// rounding tolerances).
type quality struct {
	gain, loss, mag []float64
}

// New returns an Aggregator of model m under hierarchy h.
func New(m *Model, h *Hierarchy, opt Options) (*Aggregator, error) {
	if m == nil || h == nil || len(h.Nodes) == 0 {
		return nil, errors.New("aggregate: no model or no hierarchy")
	}
	seen := make([]bool, len(m.Resources))
	for i, n := range h.Nodes {
		if (n.Resource >= 0) == (len(n.Children) > 0) {
			return nil, fmt.Errorf("aggregate: hierarchy node %q must be either a leaf with a resource or an inner node", h.Path(i))
		}
		if n.Resource >= len(m.Resources) || (n.Resource >= 0 && seen[n.Resource]) {
			return nil, fmt.Errorf("aggregate: hierarchy leaf %q has resource %d, out of range or repeated", h.Path(i), n.Resource)
		}
		if n.Resource >= 0 {
			seen[n.Resource] = true
		}
		for _, c := range n.Children {
			if c <= i || h.Nodes[c].Parent != i {
				return nil, fmt.Errorf("aggregate: hierarchy is not stored in pre-order at node %q", h.Path(i))
			}
		}
	}
	for r, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("aggregate: resource %d (%s) is not in the hierarchy", r, m.Resources[r].Name)
		}
	}
	nt := m.Slices()
	a := &Aggregator{
		m: m, h: h, opt: opt,
		nt: nt, nx: len(m.States),
		ntri: nt * (nt + 1) / 2,
	}
	if a.opt.Workers < 1 {
		a.opt.Workers = runtime.GOMAXPROCS(0)
	}
	a.end = make([]int, len(h.Nodes))
	a.leaves = make([]int, len(h.Nodes))
	for i := len(h.Nodes) - 1; i >= 0; i-- {
		a.end[i] = i + 1
		if c := h.Nodes[i].Children; len(c) > 0 {
			a.end[i] = a.end[c[len(c)-1]]
		}
		if h.Nodes[i].Resource >= 0 {
			a.leaves[i] = 1
		}
		for _, c := range h.Nodes[i].Children {
			a.leaves[i] += a.leaves[c]
		}
	}
	a.cuts = make([][]int16, len(h.Nodes))
	for i := range a.cuts {
		a.cuts[i] = make([]int16, a.ntri)
	}
	budget := opt.CacheBytes
	if budget == 0 {
		budget = DefaultCacheBytes
	}
	if int64(len(h.Nodes))*int64(a.ntri)*24 <= budget {
		a.cache = make([]*quality, len(h.Nodes))
	}
	g, l := a.aggQuality(0, 0, nt-1)
	a.gainMax, a.lossMax = g, l
	return a, nil
}

// Model returns the aggregator's model.
func (a *Aggregator) Model() *Model { return a.m }

// Hierarchy returns the aggregator's hierarchy.
func (a *Aggregator) Hierarchy() *Hierarchy { return a.h }

// tri is the index of interval [i, j] in a triangular matrix: the rows i
// are stored one after the other, row i holding j = i..nt-1.
func (a *Aggregator) tri(i, j int) int { return i*(2*a.nt-i+1)/2 + j - i }

// weights returns the factors of gain and loss in pIC for p.
func (a *Aggregator) weights(p float64) (wg, wl float64) {
	wg, wl = p, 1-p
	if !a.opt.Raw {
		if a.gainMax > 0 {
			wg /= a.gainMax
		}
		if a.lossMax > 0 {
			wl /= a.lossMax
		}
	}
	return wg, wl
}

// Cell is one aggregate of a partition: hierarchy node Node over slices
// First..Last.
type Cell struct {
	Node, First, Last int
}

// run computes the best cuts for p into a.cuts.
func (a *Aggregator) run(p float64) {
	wg, wl := a.weights(p)
	r := &runState{a: a, p: p, wg: wg, wl: wl, tokens: make(chan struct{}, a.opt.Workers-1)}
	res := r.solve(0)
	a.putTri(res.best)
	a.putTri(res.count)
}

// BestCells returns the best partition for p as cells, ordered by node
// then time for each spatial and temporal cut.
func (a *Aggregator) BestCells(p float64) ([]Cell, error) {
	if !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("p = %v: want a value in [0, 1]", p)
	}
	a.run(p)
	var out []Cell
	a.extract(0, 0, a.nt-1, &out)
	return out, nil
}

func (a *Aggregator) extract(n, i, j int, out *[]Cell) {
	c := int(a.cuts[n][a.tri(i, j)])
	switch {
	case c == j:
		*out = append(*out, Cell{Node: n, First: i, Last: j})
	case c == spatialCut:
		for _, ch := range a.h.Nodes[n].Children {
			a.extract(ch, i, j, out)
		}
	default:
		a.extract(n, i, c, out)
		a.extract(n, c+1, j, out)
	}
}

type runState struct {
	a      *Aggregator
	p      float64
	wg, wl float64
	tokens chan struct{} // one per extra goroutine allowed
}

// nodeResult is what a node hands to its parent: its best pIC per interval
// (triangular), the number of aggregates of that best partition, and its
// per-slice sums.
type nodeResult struct {
	best, count []float64
	sums        *sums
}

// sums are the per-slice sums over a node's cells: agg[t*nx+x] of the
// values, vlv[t] of v log2 v and vabs[t] of |v log2 v|.
type sums struct {
	agg, vlv, vabs []float64
}

// work is the scratch memory of one goroutine.
type work struct {
	bestR, bestC []float64 // best pIC by row [i*nt+j] and by column [j*nt+i]
	cntR, cntC   []float64 // aggregates of those partitions, indexed alike
	q            quality
	vsum         []float64 // nx sums per state, then nt logs
}

func (a *Aggregator) getWork() *work {
	if w, ok := a.work.Get().(*work); ok {
		return w
	}
	return &work{
		bestR: make([]float64, a.nt*a.nt),
		bestC: make([]float64, a.nt*a.nt),
		cntR:  make([]float64, a.nt*a.nt),
		cntC:  make([]float64, a.nt*a.nt),
		q:     quality{gain: make([]float64, a.ntri), loss: make([]float64, a.ntri), mag: make([]float64, a.ntri)},
		vsum:  make([]float64, a.nx+a.nt),
	}
}

func (a *Aggregator) getTri() []float64 {
	if t, ok := a.tris.Get().(*[]float64); ok {
		return *t
	}
	return make([]float64, a.ntri)
}

func (a *Aggregator) putTri(t []float64) { a.tris.Put(&t) }

func (a *Aggregator) newSums() *sums {
	return &sums{agg: make([]float64, a.nt*a.nx), vlv: make([]float64, a.nt), vabs: make([]float64, a.nt)}
}

// leafSums fills the sums of the leaf of resource r: values are the state
// proportions rho = d / d(t) of the model.
func (a *Aggregator) leafSums(r int, s *sums) {
	m := a.m
	for t := 0; t < a.nt; t++ {
		inv := 1 / float64(m.SliceDur(t))
		cell := m.Cell(r, t)
		row := s.agg[t*a.nx : (t+1)*a.nx]
		var l, ab float64
		for x, d := range cell {
			v := float64(d) * inv
			row[x] = v
			if v > 0 {
				e := v * fastLog(v)
				l += e
				ab += math.Abs(e)
			}
		}
		s.vlv[t], s.vabs[t] = l*invLn2, ab*invLn2
	}
}

func (s *sums) add(o *sums) {
	for i, v := range o.agg {
		s.agg[i] += v
	}
	for i, v := range o.vlv {
		s.vlv[i] += v
		s.vabs[i] += o.vabs[i]
	}
}

// solve computes the best cuts of node n's subtree. Children are solved in
// new goroutines while tokens are available, inline otherwise.
func (r *runState) solve(n int) nodeResult {
	a := r.a
	node := &a.h.Nodes[n]
	var spatial, spatialCnt []float64
	var s *sums
	// With the qualities cached, the per-slice sums are not needed.
	cached := a.cache != nil && a.cache[n] != nil
	if node.Resource >= 0 {
		if !cached {
			s = a.newSums()
			a.leafSums(node.Resource, s)
		}
	} else {
		spatial, spatialCnt = a.getTri(), a.getTri()
		clear(spatial)
		clear(spatialCnt)
		if !cached {
			s = a.newSums()
		}
		// Children are merged in their order whatever order they finish
		// in, so that sums, and the decisions on near ties, do not depend
		// on scheduling.
		var (
			mu      sync.Mutex
			wg      sync.WaitGroup
			pending = map[int]nodeResult{}
			next    int
		)
		merge := func(k int, c nodeResult) {
			mu.Lock()
			defer mu.Unlock()
			pending[k] = c
			for {
				c, ok := pending[next]
				if !ok {
					return
				}
				delete(pending, next)
				next++
				for i, v := range c.best {
					spatial[i] += v
					spatialCnt[i] += c.count[i]
				}
				if s != nil {
					s.add(c.sums)
				}
				a.putTri(c.best)
				a.putTri(c.count)
			}
		}
		for k, ch := range node.Children {
			select {
			case r.tokens <- struct{}{}:
				wg.Add(1)
				go func() {
					defer wg.Done()
					merge(k, r.solve(ch))
					<-r.tokens
				}()
			default:
				merge(k, r.solve(ch))
			}
		}
		wg.Wait()
	}
	w := a.getWork()
	defer a.work.Put(w)
	q := w.q
	if cached {
		q = *a.cache[n]
	} else {
		a.qualities(s, a.leaves[n], q, w.vsum)
		if a.cache != nil {
			c := quality{gain: append([]float64(nil), q.gain...), loss: append([]float64(nil), q.loss...), mag: append([]float64(nil), q.mag...)}
			a.cache[n] = &c
		}
	}
	best, count := a.getTri(), a.getTri()
	r.dp(n, w, q, spatial, spatialCnt, best, count)
	if spatial != nil {
		a.putTri(spatial)
		a.putTri(spatialCnt)
	}
	return nodeResult{best: best, count: count, sums: s}
}

// qualities computes the gain and loss of every interval of a node with
// the given sums and number of leaves. For an aggregate of n cells with
// values v_i of one state and V = sum v_i:
//
//	gain = V log2 V - sum v_i log2 v_i
//	loss = sum v_i log2(n v_i / V) = V log2 n - gain
//
// both summed over states.
func (a *Aggregator) qualities(s *sums, leaves int, q quality, vsum []float64) {
	nt, nx := a.nt, a.nx
	// log2 of the number of cells of an interval of k slices, k = 1..nt.
	logn := vsum[nx:]
	for k := 1; k <= nt; k++ {
		logn[k-1] = math.Log2(float64(leaves * k))
	}
	vsum = vsum[:nx]
	for i := 0; i < nt; i++ {
		clear(vsum)
		var sv, sabs float64
		idx := a.tri(i, i)
		for j := i; j < nt; j++ {
			row := s.agg[j*nx : (j+1)*nx]
			var vlogv, vtot float64
			for x, v := range row {
				w := vsum[x] + v
				vsum[x] = w
				vtot += w
				if w > 0 {
					// Natural logs, converted once below: this is the
					// hot loop.
					vlogv += w * fastLog(w)
				}
			}
			vlogv *= invLn2
			sv += s.vlv[j]
			sabs += s.vabs[j]
			g := vlogv - sv
			vl := vtot * logn[j-i]
			q.gain[idx] = max(g, 0)
			q.loss[idx] = max(vl-g, 0)
			// The terms w log2 w are negative only for w < 1, down to
			// -1/(e ln 2) = -0.531 each, so |vlogv| + 1.07 nx bounds the
			// sum of their sizes.
			q.mag[idx] = math.Abs(vlogv) + 1.07*float64(nx) + sabs + vl
			idx++
		}
	}
}

// dp fills the cuts of node n and its best pIC per interval. For each
// interval [i, j], by increasing j and decreasing i so that every
// sub-interval is done, it compares the spatial cut (the sum of the
// children's best, given in spatial, nil for a leaf), every temporal cut
// and no cut. Ties (within tieEps) go to the partition of more aggregates
// at p = 0 and to the one of fewer for p > 0, so p = 0 yields the
// microscopic partition and p = 1 the full aggregate even where the data
// are uniform or empty (a rank that has finished), and such regions are
// merged as soon as p > 0: idle, idle, busy is [0-1], [2], not [0], [1-2]
// split again. spatialCnt and count hold the aggregates of spatial and
// best.
func (r *runState) dp(n int, w *work, q quality, spatial, spatialCnt, best, count []float64) {
	a := r.a
	nt := a.nt
	cut := a.cuts[n]
	wg, wl := r.wg, r.wl
	tolw := tieEps * (wg + wl)
	preferAgg := r.p > 0
	bestR, bestC, cntR, cntC := w.bestR, w.bestC, w.cntR, w.cntC
	// tieWins tells whether a partition of cv aggregates beats one of bc
	// aggregates of the same value.
	tieWins := func(cv, bc float64) bool { return cv < bc == preferAgg && cv != bc }
	for j := 0; j < nt; j++ {
		for i := j; i >= 0; i-- {
			idx := a.tri(i, j)
			tol := tolw * q.mag[idx]
			bv, bc := math.Inf(-1), 0.0
			c := j
			if spatial != nil {
				bv, bc, c = spatial[idx], spatialCnt[idx], spatialCut
			}
			row := bestR[i*nt+i : i*nt+j]
			col := bestC[j*nt+i+1 : j*nt+j+1]
			col = col[:len(row)]
			crow := cntR[i*nt+i : i*nt+j]
			ccol := cntC[j*nt+i+1 : j*nt+j+1]
			for k, v := range row {
				if v += col[k]; v > bv+tol || (v >= bv-tol && tieWins(crow[k]+ccol[k], bc)) {
					bv, bc, c = v, crow[k]+ccol[k], i+k
				}
			}
			nc := wg*q.gain[idx] - wl*q.loss[idx]
			if c == j || nc > bv+tol || (preferAgg && nc >= bv-tol) {
				bv, bc, c = nc, 1, j
			}
			bestR[i*nt+j], cntR[i*nt+j] = bv, bc
			bestC[j*nt+i], cntC[j*nt+i] = bv, bc
			cut[idx] = int16(c)
			best[idx], count[idx] = bv, bc
		}
	}
}

// aggQuality computes the gain and loss of the aggregate of node n over
// slices i..j directly from the model.
func (a *Aggregator) aggQuality(n, i, j int) (gain, loss float64) {
	if a.cache != nil && a.cache[n] != nil {
		k := a.tri(i, j)
		return a.cache[n].gain[k], a.cache[n].loss[k]
	}
	vsum := make([]float64, a.nx)
	var cellLogs float64
	cells := 0
	for k := n; k < a.end[n]; k++ {
		r := a.h.Nodes[k].Resource
		if r < 0 {
			continue
		}
		for t := i; t <= j; t++ {
			inv := 1 / float64(a.m.SliceDur(t))
			for x, d := range a.m.Cell(r, t) {
				v := float64(d) * inv
				vsum[x] += v
				if v > 0 {
					cellLogs += v * fastLog(v)
				}
			}
			cells++
		}
	}
	var vlogv, vtot float64
	for _, w := range vsum {
		vtot += w
		if w > 0 {
			vlogv += w * fastLog(w)
		}
	}
	gain = max((vlogv-cellLogs)*invLn2, 0)
	loss = max(vtot*math.Log2(float64(cells))-gain, 0)
	return gain, loss
}
