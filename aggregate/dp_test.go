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
		for seed := uint64(1); seed <= 2; seed++ {
			m := randomModel(t, seed, 6, 6, 3)
			h := mustHierarchy(t, hs.json, m.Resources)
			a, err := New(m, h, Options{})
			require.NoError(t, err)
			r := newRef(m, h)
			for _, p := range []float64{0.05, 0.3, 0.5, 0.7, 0.95} {
				t.Run(fmt.Sprintf("%s/seed%d/p%.2f", hs.name, seed, p), func(t *testing.T) {
					cells, err := a.BestCells(p)
					require.NoError(t, err)
					coversExactly(t, r, cells)
					want := r.exhaustive(p)
					assert.InDelta(t, want, r.pIC(p, cells), 1e-9)
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

func TestPartitionsNestAsPGrows(t *testing.T) {
	m := randomModel(t, 5, 12, 15, 3)
	h := mustHierarchy(t, `{"name":"j","children":[
		{"name":"c1","children":[{"name":"a","ranks":[0,1,2]},{"name":"b","ranks":[3,4,5]}]},
		{"name":"c2","children":[{"name":"c","ranks":[6,7]},{"name":"d","ranks":[8,9,10,11]}]}]}`, m.Resources)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	var prev []Cell
	changes := 0
	for k := 0; k <= 100; k++ {
		p := float64(k) / 100
		cells, err := a.BestCells(p)
		require.NoError(t, err)
		if prev != nil {
			if len(cells) != len(prev) {
				changes++
			}
			require.LessOrEqual(t, len(cells), len(prev), "p = %v", p)
			for _, c := range prev {
				found := false
				for _, o := range cells {
					if contains(h, o, c) {
						found = true
						break
					}
				}
				require.True(t, found, "p = %v: aggregate %+v of the previous partition is split", p, c)
			}
		}
		prev = cells
	}
	assert.Greater(t, changes, 3, "the test needs partitions that change")
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

	pv, _, err := a.PValues(0)
	require.NoError(t, err)
	var ok []float64
	for _, v := range pv {
		cells, err := a.BestCells(v.P)
		require.NoError(t, err)
		if isolates(cells) && coarse(cells) {
			ok = append(ok, v.P)
		}
	}
	require.NotEmpty(t, ok, "no significant partition isolates the perturbation")
	assert.Greater(t, ok[0], 0.0)
	assert.Less(t, ok[len(ok)-1], 1.0)

	// A mid p inside that range must show the shape, and both phases must
	// appear as aggregates of whole clusters elsewhere.
	cells, err := a.BestCells(ok[len(ok)/2])
	require.NoError(t, err)
	assert.True(t, isolates(cells))
	clusterPhases := 0
	for _, c := range cells {
		if h.Nodes[c.Node].Depth <= 1 && (c.Last <= 9 || c.First >= 10) {
			clusterPhases++
		}
	}
	assert.GreaterOrEqual(t, clusterPhases, 4, "clusters 0 and 2 should be aggregated per phase: %+v", cells)
}
