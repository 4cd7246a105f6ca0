package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomModel fills every cell with a random split of the slice among the
// states (plus some idle time), so no two cells are equal.
func randomModel(t testing.TB, seed uint64, nres, nt, nx int) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	states := make([]string, nx)
	for x := range states {
		states[x] = fmt.Sprintf("s%d", x)
	}
	m, err := NewModel(resources(nres), states, 0, int64(nt)*1000, nt)
	require.NoError(t, err)
	for r := 0; r < nres; r++ {
		for s := 0; s < nt; s++ {
			left := m.SliceDur(s)
			for x, c := range m.Cell(r, s) {
				_ = c
				d := rng.Int64N(left + 1)
				m.Cell(r, s)[x] = d
				left -= d
			}
		}
	}
	return m
}

func mustHierarchy(t testing.TB, json string, res []Resource) *Hierarchy {
	t.Helper()
	s, err := ParseSpec([]byte(json))
	require.NoError(t, err)
	h, err := NewHierarchy(s, res)
	require.NoError(t, err)
	return h
}

// ref computes qualities straight from the definitions, independently of
// the aggregator's incremental sums.
type ref struct {
	m    *Model
	h    *Hierarchy
	G, L float64 // gain and loss of the full aggregate
}

func newRef(m *Model, h *Hierarchy) *ref {
	r := &ref{m: m, h: h}
	r.G, r.L = r.quality(Cell{0, 0, m.Slices() - 1})
	return r
}

// leaves lists the resources under node n.
func (r *ref) leaves(n int) []int {
	node := r.h.Nodes[n]
	if node.Resource >= 0 {
		return []int{node.Resource}
	}
	var out []int
	for _, c := range node.Children {
		out = append(out, r.leaves(c)...)
	}
	return out
}

// quality is the gain sum_x (V log2 V - sum v log2 v) and the loss
// sum_x sum_i v_i log2(n v_i / V) of one aggregate.
func (r *ref) quality(c Cell) (gain, loss float64) {
	leaves := r.leaves(c.Node)
	n := float64(len(leaves) * (c.Last - c.First + 1))
	for x := range r.m.States {
		var vals []float64
		for _, res := range leaves {
			for t := c.First; t <= c.Last; t++ {
				vals = append(vals, float64(r.m.Cell(res, t)[x])/float64(r.m.SliceDur(t)))
			}
		}
		var V float64
		for _, v := range vals {
			V += v
		}
		if V > 0 {
			gain += V * math.Log2(V)
		}
		for _, v := range vals {
			if v > 0 {
				gain -= v * math.Log2(v)
				loss += v * math.Log2(n*v/V)
			}
		}
	}
	return gain, loss
}

func (r *ref) pIC(p float64, cells []Cell) float64 {
	var s float64
	for _, c := range cells {
		g, l := r.quality(c)
		s += p*g/r.G - (1-p)*l/r.L
	}
	return s
}

// coversExactly checks that cells partition resources x slices.
func coversExactly(t *testing.T, r *ref, cells []Cell) {
	t.Helper()
	nt := r.m.Slices()
	seen := make([]int, len(r.m.Resources)*nt)
	for _, c := range cells {
		require.LessOrEqual(t, c.First, c.Last)
		for _, res := range r.leaves(c.Node) {
			for s := c.First; s <= c.Last; s++ {
				seen[res*nt+s]++
			}
		}
	}
	for i, k := range seen {
		require.Equal(t, 1, k, "cell resource %d slice %d covered %d times", i/nt, i%nt, k)
	}
}

// exhaustive returns the best pIC over every partition of resources x
// slices into hierarchy-node x interval rectangles: an exact-cover search
// that takes the first uncovered cell and tries every rectangle holding
// it, memoized on the set of covered cells.
func (r *ref) exhaustive(p float64) float64 {
	nt := r.m.Slices()
	type rect struct {
		mask uint64
		val  float64
	}
	var rects []rect
	for n := range r.h.Nodes {
		leaves := r.leaves(n)
		for i := 0; i < nt; i++ {
			for j := i; j < nt; j++ {
				var mask uint64
				for _, res := range leaves {
					for s := i; s <= j; s++ {
						mask |= 1 << (res*nt + s)
					}
				}
				rects = append(rects, rect{mask, r.pIC(p, []Cell{{n, i, j}})})
			}
		}
	}
	full := uint64(1)<<(len(r.m.Resources)*nt) - 1
	memo := map[uint64]float64{}
	var best func(covered uint64) float64
	best = func(covered uint64) float64 {
		if covered == full {
			return 0
		}
		if v, ok := memo[covered]; ok {
			return v
		}
		var first uint64
		for b := 0; ; b++ {
			if covered&(1<<b) == 0 {
				first = 1 << b
				break
			}
		}
		v := math.Inf(-1)
		for _, rc := range rects {
			if rc.mask&first != 0 && rc.mask&covered == 0 {
				v = max(v, rc.val+best(covered|rc.mask))
			}
		}
		memo[covered] = v
		return v
	}
	return best(0)
}

var smallHierarchies = []struct {
	name, json string
}{
	{"flat", `{"name":"j","ranks":[0,1,2,3,4,5]}`},
	{"two hosts", `{"name":"j","children":[{"name":"a","ranks":[0,1,2]},{"name":"b","ranks":[3,4,5]}]}`},
	{"uneven", `{"name":"j","children":[{"name":"a","ranks":[0,1]},{"name":"b","ranks":[2,3,4]},{"name":"c","ranks":[5]}]}`},
}

func TestBestEqualsExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive search")
	}
	for _, hs := range smallHierarchies {
		for seed := uint64(1); seed <= 3; seed++ {
			m := randomModel(t, seed, 6, 6, 3)
			h := mustHierarchy(t, hs.json, m.Resources)
			// Seed 3 checks raw pIC = p gain - (1-p) loss, without the
			// normalization by the full aggregate.
			raw := seed == 3
			a, err := New(m, h, Options{Raw: raw})
			require.NoError(t, err)
			r := newRef(m, h)
			if raw {
				r.G, r.L = 1, 1
			}
			// Test inside every range of p with its own best partition,
			// and at a few fixed values.
			pv, _, err := a.PValues(0)
			require.NoError(t, err)
			ps := []float64{0.05, 0.5, 0.95}
			for k := range pv {
				hi := 1.0
				if k+1 < len(pv) {
					hi = pv[k+1].P
				}
				ps = append(ps, (pv[k].P+hi)/2)
			}
			for _, p := range ps {
				t.Run(fmt.Sprintf("%s/seed%d/p%.3f", hs.name, seed, p), func(t *testing.T) {
					cells, err := a.BestCells(p)
					require.NoError(t, err)
					coversExactly(t, r, cells)
					want := r.exhaustive(p)
					assert.InDelta(t, want, r.pIC(p, cells), 1e-9*max(1, math.Abs(want)))
				})
			}
		}
	}
}

func TestExtremes(t *testing.T) {
	for _, hs := range smallHierarchies {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", hs.name, workers), func(t *testing.T) {
				m := randomModel(t, 3, 6, 10, 4)
				h := mustHierarchy(t, hs.json, m.Resources)
				a, err := New(m, h, Options{Workers: workers})
				require.NoError(t, err)

				cells, err := a.BestCells(0)
				require.NoError(t, err)
				assert.Len(t, cells, 6*10, "p = 0: microscopic")
				for _, c := range cells {
					assert.Equal(t, c.First, c.Last)
					assert.GreaterOrEqual(t, h.Nodes[c.Node].Resource, 0)
				}

				cells, err = a.BestCells(1)
				require.NoError(t, err)
				assert.Equal(t, []Cell{{0, 0, 9}}, cells, "p = 1: one aggregate")

				_, err = a.BestCells(1.5)
				assert.Error(t, err)
				_, err = a.BestCells(math.NaN())
				assert.Error(t, err)
			})
		}
	}
}

// contains reports whether aggregate c lies inside aggregate o.
func contains(h *Hierarchy, o, c Cell) bool {
	if c.First < o.First || c.Last > o.Last {
		return false
	}
	for n := c.Node; n >= 0; n = h.Nodes[n].Parent {
		if n == o.Node {
			return true
		}
	}
	return false
}

// requireNested checks that every aggregate of fine lies inside one of
// coarse.
func requireNested(t *testing.T, h *Hierarchy, fine, coarse []Cell, msg string) {
	t.Helper()
	for _, c := range fine {
		found := false
		for _, o := range coarse {
			if contains(h, o, c) {
				found = true
				break
			}
		}
		require.True(t, found, "%s: aggregate %+v is split", msg, c)
	}
}

// structuredModel is a one-slice model for nestHierarchy whose groups of
// resources (a, b, c, d) share a random state mix, blurred by noise of a
// different level in each group, so that aggregation proceeds in steps.
func structuredModel(t testing.TB, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 3))
	m, err := NewModel(resources(12), []string{"x", "y", "z"}, 0, 1_000_000, 1)
	require.NoError(t, err)
	group := []int{0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 3}
	noise := []float64{0.02, 0.1, 0.3, 0.6}
	base := make([][3]float64, 4)
	for g := range base {
		for x := range base[g] {
			base[g][x] = rng.Float64()
		}
	}
	for r, g := range group {
		for x := range 3 {
			v := base[g][x]*(1-noise[g]) + rng.Float64()*noise[g]
			m.Cell(r, 0)[x] = int64(v / 3 * 1_000_000)
		}
	}
	return m
}

var nestHierarchy = `{"name":"j","children":[
	{"name":"c1","children":[{"name":"a","ranks":[0,1,2]},{"name":"b","ranks":[3,4,5]}]},
	{"name":"c2","children":[{"name":"c","ranks":[6,7]},{"name":"d","ranks":[8,9,10,11]}]}]}`

// Partitions into hierarchy nodes nest as p grows: if node n beats every
// partition Q of its subtree at p1, it still does at p2 > p1, because pIC
// grows with p by gain + loss = V log2 n for the aggregate and by
// sum V_c log2 n_c <= V log2 n for Q. (Intervals of time do not nest in
// general: an optimal aggregate can straddle two earlier ones; see
// TestQualityCurvesMonotone for what holds there.)
func TestSpaceOnlyPartitionsNest(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		m := structuredModel(t, seed)
		h := mustHierarchy(t, nestHierarchy, m.Resources)
		a, err := New(m, h, Options{})
		require.NoError(t, err)
		var prev []Cell
		sizes := map[int]bool{}
		for k := 0; k <= 200; k++ {
			p := float64(k) / 200
			cells, err := a.BestCells(p)
			require.NoError(t, err)
			sizes[len(cells)] = true
			if prev != nil {
				requireNested(t, h, prev, cells, fmt.Sprintf("seed %d p %v", seed, p))
			}
			prev = cells
		}
		assert.Greater(t, len(sizes), 3, "seed %d: the test needs partitions that change", seed)
	}
}

// For optimal P1 at p1 < p2 and P2 at p2, pIC_p1(P1) >= pIC_p1(P2) and
// pIC_p2(P2) >= pIC_p2(P1) imply that the gain and the loss of the best
// partition never decrease as p grows: the quality curves are monotone.
func TestQualityCurvesMonotone(t *testing.T) {
	m := randomModel(t, 5, 12, 15, 3)
	h := mustHierarchy(t, nestHierarchy, m.Resources)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	var prev *Partition
	for k := 0; k <= 50; k++ {
		part, err := a.Best(float64(k) / 50)
		require.NoError(t, err)
		if prev != nil {
			assert.GreaterOrEqual(t, part.Gain, prev.Gain-1e-9, "p = %v", part.P)
			assert.GreaterOrEqual(t, part.Loss, prev.Loss-1e-9, "p = %v", part.P)
		}
		prev = part
	}
	assert.InDelta(t, 1, prev.NormGain, 1e-9)
	assert.InDelta(t, 1, prev.NormLoss, 1e-9)
}

// plantedModel is 3 clusters of 4 resources over 20 slices in two
// homogeneous phases (slices 0-9 mostly "compute", 10-19 mostly "send"),
// with a little noise, and a perturbation: resources 5, 6, 7 of cluster 1
// spend slices 12-15 mostly in "wait".
func plantedModel(t testing.TB) (*Model, *Hierarchy) {
	rng := rand.New(rand.NewPCG(11, 12))
	m, err := NewModel(resources(12), []string{"compute", "send", "wait"}, 0, 20_000_000, 20)
	require.NoError(t, err)
	for r := 0; r < 12; r++ {
		for s := 0; s < 20; s++ {
			share := []float64{0.8, 0.2, 0}
			if s >= 10 {
				share = []float64{0.25, 0.75, 0}
			}
			if r >= 5 && r <= 7 && s >= 12 && s <= 15 {
				share = []float64{0.05, 0.05, 0.9}
			}
			d := float64(m.SliceDur(s))
			for x, sh := range share {
				m.Cell(r, s)[x] = int64(d * sh * (0.97 + 0.03*rng.Float64()))
			}
		}
	}
	h := mustHierarchy(t, `{"name":"job","children":[
		{"name":"c0","ranks":[0,1,2,3]},{"name":"c1","ranks":[4,5,6,7]},{"name":"c2","ranks":[8,9,10,11]}]}`, m.Resources)
	return m, h
}

func TestPlantedPerturbation(t *testing.T) {
	m, h := plantedModel(t)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	perturbed := func(res, s int) bool { return res >= 5 && res <= 7 && s >= 12 && s <= 15 }
	r := newRef(m, h)

	// isolates reports whether the partition isolates exactly the
	// perturbation: one aggregate per perturbed resource over exactly its
	// slices, and no other aggregate touches them.
	isolates := func(cells []Cell) bool {
		for _, c := range cells {
			in, out := 0, 0
			for _, res := range r.leaves(c.Node) {
				for s := c.First; s <= c.Last; s++ {
					if perturbed(res, s) {
						in++
					} else {
						out++
					}
				}
			}
			if in > 0 && (out > 0 || c.First != 12 || c.Last != 15 || h.Nodes[c.Node].Resource < 0) {
				return false
			}
		}
		return true
	}
	// coarse reports whether the unperturbed cells are summarized by few
	// aggregates: at most the phases of each cluster plus the pieces
	// around the perturbation.
	coarse := func(cells []Cell) bool { return len(cells) <= 3+12 }

	for _, p := range []float64{0.3, 0.5, 0.7} {
		cells, err := a.BestCells(p)
		require.NoError(t, err)
		assert.True(t, isolates(cells), "p = %v: %+v", p, cells)
		assert.True(t, coarse(cells), "p = %v: %d aggregates", p, len(cells))
		for _, c := range cells {
			// The phase change between slices 9 and 10 is kept.
			assert.False(t, c.First <= 9 && c.Last >= 10, "p = %v: %+v straddles the phases", p, c)
			// Only the perturbed cluster is split below cluster level,
			// and only around the perturbation.
			if h.Nodes[c.Node].Depth == 2 {
				assert.True(t, c.First >= 12 && c.Last <= 15, "p = %v: leaf aggregate %+v", p, c)
			}
		}
	}

	// The perturbation is significant: it appears at some p and is
	// merged away before p = 1.
	pv, _, err := a.PValues(0)
	require.NoError(t, err)
	seen := false
	for _, v := range pv {
		cells, err := a.BestCells(v.P)
		require.NoError(t, err)
		seen = seen || (isolates(cells) && coarse(cells))
	}
	assert.True(t, seen)
	last, err := a.BestCells(1)
	require.NoError(t, err)
	assert.False(t, isolates(last))
}

// Runs do not depend on scheduling: children are merged in order, so one
// worker and several give the same significant partitions bit for bit.
func TestDeterministicAcrossWorkers(t *testing.T) {
	m := randomModel(t, 21, 40, 12, 4)
	h, err := NewHierarchy(HostSpec("j", m.Resources, func(r int) string { return fmt.Sprint(r / 5) }), m.Resources)
	require.NoError(t, err)
	var lists [][]PValue
	for _, w := range []int{1, 4} {
		a, err := New(m, h, Options{Workers: w, CacheBytes: -1})
		require.NoError(t, err)
		pv, _, err := a.PValues(0)
		require.NoError(t, err)
		lists = append(lists, pv)
	}
	assert.Greater(t, len(lists[0]), 5)
	assert.Equal(t, lists[0], lists[1])
}

func TestQualityMatchesReference(t *testing.T) {
	m := randomModel(t, 7, 6, 6, 3)
	h := mustHierarchy(t, smallHierarchies[1].json, m.Resources)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	r := newRef(m, h)
	for _, p := range []float64{0, 0.3, 0.7, 1} {
		best, err := a.BestCells(p)
		require.NoError(t, err)
		micro, err := a.BestCells(0)
		require.NoError(t, err)
		for _, cells := range [][]Cell{best, micro, {{Node: 0, First: 0, Last: m.Slices() - 1}}} {
			q, err := a.Quality(p, cells)
			require.NoError(t, err)
			assert.InDelta(t, r.pIC(p, cells), q, 1e-9, "p=%g cells=%v", p, cells)
		}
		bq, err := a.Quality(p, best)
		require.NoError(t, err)
		mq, err := a.Quality(p, micro)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, bq, mq-1e-9, "the best partition is no worse than the microscopic one")
	}
	for _, bad := range []Cell{{Node: len(h.Nodes)}, {Node: 0, First: 2, Last: 1}, {Node: 0, Last: m.Slices()}} {
		_, err := a.Quality(0.5, []Cell{bad})
		assert.Error(t, err, "%+v", bad)
	}
	_, err = a.Quality(math.NaN(), nil)
	assert.Error(t, err)
}

func TestSearchPBudget(t *testing.T) {
	m := randomModel(t, 11, 6, 8, 3)
	h := mustHierarchy(t, smallHierarchies[2].json, m.Resources)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	all, complete, err := a.SearchP(0, 0)
	require.NoError(t, err)
	assert.True(t, complete)
	require.Greater(t, len(all), 3, "the random model has several partitions")
	pv, _, err := a.PValues(0)
	require.NoError(t, err)
	require.Len(t, pv, len(all))
	for k := range all {
		assert.Equal(t, pv[k], all[k].PValue)
		assert.Equal(t, len(all[k].Cells), all[k].Aggregates)
		if k > 0 {
			assert.Greater(t, all[k].P, all[k-1].P)
			assert.NotEqual(t, all[k].Cells, all[k-1].Cells)
		}
	}
	few, complete, err := a.SearchP(0, 3)
	require.NoError(t, err)
	assert.False(t, complete)
	assert.LessOrEqual(t, len(few), 3)
	assert.Equal(t, all[0].Cells, few[0].Cells, "p = 0 is always sampled")
}

// Equal qualities go to the partition of fewer aggregates for p > 0 and
// of more at p = 0, whichever cut the search meets first: one rank idle,
// idle, busy is [0-1], [2] as soon as p > 0 (it was [0], [1], [2], the
// cut [0] | [1-2] being met before the tie [0-1] | [2]).
func TestTiesGoToFewerAggregates(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cells [][]int64 // one state, per slice of 10 ns
		p     float64
		want  []Cell
	}{
		{"idle idle busy p=0", [][]int64{{0}, {0}, {10}}, 0, []Cell{{1, 0, 0}, {1, 1, 1}, {1, 2, 2}}},
		{"idle idle busy p=0.1", [][]int64{{0}, {0}, {10}}, 0.1, []Cell{{1, 0, 1}, {1, 2, 2}}},
		{"idle idle busy p=0.5", [][]int64{{0}, {0}, {10}}, 0.5, []Cell{{1, 0, 1}, {1, 2, 2}}},
		{"idle idle busy p=0.9", [][]int64{{0}, {0}, {10}}, 0.9, []Cell{{1, 0, 1}, {1, 2, 2}}},
		{"busy idle idle p=0.5", [][]int64{{10}, {0}, {0}}, 0.5, []Cell{{1, 0, 0}, {1, 1, 2}}},
		{"busy busy idle idle p=0.5", [][]int64{{10}, {10}, {0}, {0}}, 0.5, []Cell{{1, 0, 1}, {1, 2, 3}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, raw := range []bool{false, true} {
				m, err := NewModel(resources(1), []string{"busy"}, 0, int64(10*len(tt.cells)), len(tt.cells))
				require.NoError(t, err)
				for s, c := range tt.cells {
					copy(m.Cell(0, s), c)
				}
				h := mustHierarchy(t, `{"name":"j","ranks":[0]}`, m.Resources)
				a, err := New(m, h, Options{Raw: raw})
				require.NoError(t, err)
				got, err := a.BestCells(tt.p)
				require.NoError(t, err)
				assert.Equal(t, tt.want, got, "raw %v", raw)
			}
		})
	}
}
