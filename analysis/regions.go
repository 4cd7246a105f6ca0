package analysis

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"mpiflow/flowgraph"
)

// pcontrol is the call whose sites open and close regions.
const pcontrol = "MPI_Pcontrol"

// Region is one region of MPI_Pcontrol over the ranks that entered it:
// IPM's convention, MPI_Pcontrol(1, "name") enters a region and
// MPI_Pcontrol(-1, "name") leaves it. Regions nest; one entered inside
// another is a region of its own (its Path has both names), and the
// outer one's figures include it.
type Region struct {
	// Path names the region after the regions it was entered in,
	// outermost first; Name is its last element.
	Path []string `json:"path"`
	Name string   `json:"name"`
	// Ranks counts the ranks that entered it, RankList names them.
	Ranks    int    `json:"ranks"`
	RankList string `json:"rank_list"`
	// Entries counts how often it was entered over the ranks, Unclosed
	// the entries not left before the rank's last event (counted to it).
	Entries  int64 `json:"entries"`
	Unclosed int64 `json:"unclosed,omitempty"`
	// Wall is the time inside it summed over the ranks (from the end of
	// the MPI_Pcontrol that entered it to the start of the one that left
	// it), WallMin and WallMax the least and largest of a rank, on the
	// ranks MinRank and MaxRank.
	Wall    int64 `json:"wall_ns"`
	WallMin int64 `json:"wall_min_ns"`
	WallMax int64 `json:"wall_max_ns"`
	MinRank int   `json:"wall_min_rank"`
	MaxRank int   `json:"wall_max_rank"`
	// MPI is the time inside MPI calls within it (MPI_Pcontrol's own
	// calls that enter and leave regions aside), Calls their number.
	MPI   int64 `json:"mpi_ns"`
	Calls int64 `json:"calls"`
	// ByCall are its MPI calls by descending time.
	ByCall []RegionCall `json:"by_call"`
	// Compute is the time of the compute phases inside it; Counters the
	// hardware counters of those phases, one sum per Header.Counters
	// entry (none without counters), each phase counted at its edge's mean
	// (exact for an edge whose every traversal is inside, as a loop's
	// body in a region around the loop). IPC and Gflops derive from them
	// when the counters allow (0 otherwise), as the banner's spread.
	Compute  int64   `json:"compute_ns"`
	Counters []int64 `json:"counters,omitempty"`
	IPC      float64 `json:"ipc,omitempty"`
	Gflops   float64 `json:"gflops,omitempty"`
}

// RegionCall is the time of one MPI call within a region.
type RegionCall struct {
	Call  string `json:"call"`
	Count int64  `json:"count"`
	Time  int64  `json:"time_ns"`
}

// MPIPercent is the share of the region's time spent in MPI.
func (r *Region) MPIPercent() float64 { return Percent(r.MPI, r.Wall) }

// Label names the region for people: its path joined by " > ".
func (r *Region) Label() string { return strings.Join(r.Path, " > ") }

// regionNodes returns, per node of g, the region it enters (level 1) or
// leaves (level -1); nil when no node does either.
func regionNodes(g *flowgraph.Graph) []regionMark {
	var marks []regionMark
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Key.Call != pcontrol || n.Key.Site < 0 || n.Key.Site >= len(g.Sites) {
			continue
		}
		s := &g.Sites[n.Key.Site]
		if s.Level != 1 && s.Level != -1 {
			continue
		}
		if marks == nil {
			marks = make([]regionMark, len(g.Nodes))
		}
		name := s.Region
		if name == "" {
			name = "(unnamed)"
		}
		marks[i] = regionMark{name: name, level: s.Level}
	}
	return marks
}

type regionMark struct {
	name  string
	level int // 1 enters, -1 leaves, 0 neither
}

// rankRegion is a region of one rank while its events are walked.
type rankRegion struct {
	path     []string
	entries  int64
	unclosed int64
	wall     int64
	mpi      int64
	calls    int64
	byCall   map[string]*RegionCall
	compute  int64
	counters []float64
}

// rankRegions walks the events of g and sums up its regions, in order of
// first entry; nil if g has no MPI_Pcontrol that enters or leaves one.
func rankRegions(g *flowgraph.Graph) ([]*rankRegion, error) {
	marks := regionNodes(g)
	if marks == nil {
		return nil, nil
	}
	var out []*rankRegion
	byPath := map[string]*rankRegion{}
	type open struct {
		r     *rankRegion
		name  string
		start int64
	}
	var stack []open
	mean := edgeCounterMeans(g)
	closeTo := func(k int, t int64) {
		for len(stack) > k {
			o := stack[len(stack)-1]
			o.r.wall += max(t-o.start, 0)
			stack = stack[:len(stack)-1]
		}
	}
	var last int64
	it := g.Events()
	for it.Next() {
		ev := it.Event()
		// The compute phase before the event is inside the regions open
		// before it.
		for _, o := range stack {
			o.r.compute += max(ev.Start-last, 0)
			if ev.InEdge >= 0 && ev.InEdge < len(mean) && mean[ev.InEdge] != nil {
				if o.r.counters == nil {
					o.r.counters = make([]float64, len(mean[ev.InEdge]))
				}
				for k, v := range mean[ev.InEdge] {
					if k < len(o.r.counters) {
						o.r.counters[k] += v
					}
				}
			}
		}
		last = ev.End
		m := marks[ev.Node]
		switch m.level {
		case 1:
			path := make([]string, 0, len(stack)+1)
			for _, o := range stack {
				path = append(path, o.name)
			}
			path = append(path, m.name)
			key := strings.Join(path, "\x00")
			r := byPath[key]
			if r == nil {
				r = &rankRegion{path: path, byCall: map[string]*RegionCall{}}
				byPath[key] = r
				out = append(out, r)
			}
			r.entries++
			stack = append(stack, open{r: r, name: m.name, start: ev.End})
			continue
		case -1:
			// The innermost open region of that name ends, and any
			// opened inside it and not left.
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k].name == m.name {
					for _, o := range stack[k+1:] {
						o.r.unclosed++
					}
					closeTo(k, ev.Start)
					break
				}
			}
			continue
		}
		call := g.Nodes[ev.Node].Key.Call
		for _, o := range stack {
			o.r.addCall(call, ev.End-ev.Start)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for _, o := range stack {
		o.r.unclosed++
	}
	closeTo(0, last)
	return out, nil
}

// edgeCounterMeans is each edge's counters per traversal (nil for an edge
// without counters, nil for a graph without any): a phase's are not
// recorded.
func edgeCounterMeans(g *flowgraph.Graph) [][]float64 {
	var mean [][]float64
	for i := range g.Edges {
		e := &g.Edges[i]
		if len(e.Counters) == 0 || e.Count == 0 {
			continue
		}
		if mean == nil {
			mean = make([][]float64, len(g.Edges))
		}
		mean[i] = make([]float64, len(e.Counters))
		for k, v := range e.Counters {
			mean[i][k] = float64(v) / float64(e.Count)
		}
	}
	return mean
}

// addCall counts a call of d ns inside region r.
func (r *rankRegion) addCall(call string, d int64) {
	r.mpi += d
	r.calls++
	c := r.byCall[call]
	if c == nil {
		c = &RegionCall{Call: call}
		r.byCall[call] = c
	}
	c.Count++
	c.Time += d
}

// regionAcc sums the regions of the ranks, in the order they are added.
type regionAcc struct {
	idx   map[string]int
	out   []Region
	calls []map[string]*RegionCall
	ranks [][]int
	ctr   [][]float64
	// counters are the recording's counter names (Header.Counters).
	counters []string
}

func (a *regionAcc) add(rank int, rs []*rankRegion) {
	if a.idx == nil {
		a.idx = map[string]int{}
	}
	for _, r := range rs {
		key := strings.Join(r.path, "\x00")
		x, ok := a.idx[key]
		if !ok {
			x = len(a.out)
			a.idx[key] = x
			a.out = append(a.out, Region{Path: r.path, Name: r.path[len(r.path)-1], WallMin: r.wall, WallMax: r.wall,
				MinRank: rank, MaxRank: rank})
			a.calls = append(a.calls, map[string]*RegionCall{})
			a.ranks = append(a.ranks, nil)
			a.ctr = append(a.ctr, nil)
		}
		g := &a.out[x]
		if r.wall < g.WallMin {
			g.WallMin, g.MinRank = r.wall, rank
		}
		if r.wall > g.WallMax {
			g.WallMax, g.MaxRank = r.wall, rank
		}
		g.Entries += r.entries
		g.Unclosed += r.unclosed
		g.Wall += r.wall
		g.MPI += r.mpi
		g.Calls += r.calls
		g.Compute += r.compute
		if len(r.counters) > 0 && a.ctr[x] == nil {
			a.ctr[x] = make([]float64, len(r.counters))
		}
		for k, v := range r.counters {
			if k < len(a.ctr[x]) {
				a.ctr[x][k] += v
			}
		}
		for name, c := range r.byCall {
			s := a.calls[x][name]
			if s == nil {
				s = &RegionCall{Call: name}
				a.calls[x][name] = s
			}
			s.Count += c.Count
			s.Time += c.Time
		}
		if rs := a.ranks[x]; len(rs) == 0 || rs[len(rs)-1] != rank {
			a.ranks[x] = append(rs, rank)
		}
	}
}

// sorted returns the regions in tree order: each after the region it was
// entered in, siblings by descending time.
func (a *regionAcc) sorted() []Region {
	for i := range a.out {
		r := &a.out[i]
		rs := slices.Compact(slices.Sorted(slices.Values(a.ranks[i])))
		r.Ranks, r.RankList = len(rs), RankRanges(rs)
		r.ByCall = make([]RegionCall, 0, len(a.calls[i]))
		for _, c := range a.calls[i] {
			r.ByCall = append(r.ByCall, *c)
		}
		slices.SortFunc(r.ByCall, func(x, y RegionCall) int {
			return cmp.Or(cmp.Compare(y.Time, x.Time), cmp.Compare(x.Call, y.Call))
		})
		if c := a.ctr[i]; c != nil {
			r.Counters = make([]int64, len(c))
			for k, v := range c {
				r.Counters[k] = int64(math.Round(v))
			}
			cm := newCounterMap(a.counters)
			if cm.ins >= 0 && cm.cyc >= 0 && cm.cyc < len(c) && cm.ins < len(c) && c[cm.cyc] > 0 {
				r.IPC = c[cm.ins] / c[cm.cyc]
			}
			if cm.fp >= 0 && cm.fp < len(c) && r.Compute > 0 {
				r.Gflops = c[cm.fp] / float64(r.Compute)
			}
		}
	}
	wall := map[string]int64{}
	for _, r := range a.out {
		wall[strings.Join(r.Path, "\x00")] = r.Wall
	}
	// Compare path by path: each prefix's time, then its name.
	out := slices.Clone(a.out)
	slices.SortStableFunc(out, func(x, y Region) int {
		for k := 0; k < min(len(x.Path), len(y.Path)); k++ {
			if x.Path[k] == y.Path[k] {
				continue
			}
			wx, wy := wall[strings.Join(x.Path[:k+1], "\x00")], wall[strings.Join(y.Path[:k+1], "\x00")]
			return cmp.Or(cmp.Compare(wy, wx), cmp.Compare(x.Path[k], y.Path[k]))
		}
		return cmp.Compare(len(x.Path), len(y.Path))
	})
	return out
}
