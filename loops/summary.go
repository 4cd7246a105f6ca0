package loops

import (
	"slices"
	"strconv"
	"strings"

	"mpiflow/flowgraph"
)

// RankSummary condenses the collapse of one rank to the numbers of the
// overview table.
type RankSummary struct {
	Rank   int `json:"rank"`
	Thread int `json:"thread"`
	// Nodes is the number of nodes of the uncollapsed graph, TopNodes the
	// number of nodes (calls and loop nodes) of the collapsed top level.
	Nodes    int `json:"nodes"`
	TopNodes int `json:"top_nodes"`
	Loops    int `json:"loops"`
	// Total is the rank's time after MPI_Init (Collapsed.Total -
	// Collapsed.Init), LoopTime the part of it spent in loops (the
	// Stats.Time of the outermost loops).
	Total    int64 `json:"total"`
	LoopTime int64 `json:"loop_time"`
	// Signature identifies the rank's structure (the ranks of one
	// signature are in one group); Summarize leaves it to the caller,
	// which groups ranks.
	Signature string `json:"signature"`
}

// Summarize returns the summary of one rank.
func Summarize(r RankLoops) RankSummary {
	c := r.Collapsed
	s := RankSummary{
		Rank: r.Rank, Thread: r.Thread,
		Nodes: len(r.Graph.Nodes), TopNodes: len(c.Levels[0].Nodes), Loops: len(c.Loops),
		Total: c.Total - c.Init, LoopTime: c.Levels[0].LoopTime,
	}
	return s
}

// TableRow is one row of the overview table (Table 1 of the event flow
// graph paper): averages over a set of ranks.
type TableRow struct {
	Ranks       int     `json:"ranks"`
	AvgNodes    float64 `json:"avg_nodes"`
	AvgTopNodes float64 `json:"avg_top_nodes"`
	AvgLoops    float64 `json:"avg_loops"`
	// ReductionPct is how much smaller the collapsed top level is than the
	// uncollapsed graph: 100 * (1 - AvgTopNodes/AvgNodes).
	ReductionPct float64 `json:"reduction_pct"`
	// LoopTimePct is the share of the ranks' total time spent in loops:
	// 100 * sum(LoopTime) / sum(Total).
	LoopTimePct float64 `json:"loop_time_pct"`
}

// Table averages the summaries of rs.
func Table(rs []RankSummary) TableRow {
	row := TableRow{Ranks: len(rs)}
	if len(rs) == 0 {
		return row
	}
	var nodes, top, loops int
	var total, inLoops int64
	for _, s := range rs {
		nodes += s.Nodes
		top += s.TopNodes
		loops += s.Loops
		total += s.Total
		inLoops += s.LoopTime
	}
	n := float64(len(rs))
	row.AvgNodes = float64(nodes) / n
	row.AvgTopNodes = float64(top) / n
	row.AvgLoops = float64(loops) / n
	if nodes > 0 {
		row.ReductionPct = 100 * (1 - float64(top)/float64(nodes))
	}
	if total > 0 {
		row.LoopTimePct = 100 * float64(inLoops) / float64(total)
	}
	return row
}

// TreeRow is one loop of a group's loop tree, with its statistics over the
// group's ranks that have a loop of the same key.
type TreeRow struct {
	// ID, Parent and Depth are those of the loop in the group's
	// representative (GroupTree).
	ID     int     `json:"id"`
	Name   string  `json:"name"`
	Parent int     `json:"parent"`
	Depth  int     `json:"depth"`
	Key    LoopKey `json:"key"`
	// Header describes the header call: name and resolved location if
	// known.
	Header      string `json:"header"`
	Irreducible bool   `json:"irreducible"`
	SelfLoop    bool   `json:"self_loop"`
	// Ranks is how many ranks of the group have this loop; Where lists
	// them ("0-3,8") when not all do.
	Ranks int    `json:"ranks"`
	Where string `json:"where,omitempty"`
	// AvgIterations and the share of the rank's time spent in the loop
	// (average, minimum, maximum) over those ranks.
	AvgIterations float64 `json:"avg_iterations"`
	AvgShare      float64 `json:"avg_share"`
	MinShare      float64 `json:"min_share"`
	MaxShare      float64 `json:"max_share"`
	// MinRank and MaxRank are the ranks with the smallest and largest share.
	MinRank int `json:"min_rank"`
	MaxRank int `json:"max_rank"`
	// AvgTime is the average accumulated time in ns; the per-iteration
	// averages are those of the ranks' summed statistics (total time,
	// calls and bytes divided by total iterations).
	AvgTime           float64 `json:"avg_time"`
	TimePerIteration  float64 `json:"time_per_iteration"`
	CallsPerIteration float64 `json:"calls_per_iteration"`
	BytesPerIteration float64 `json:"bytes_per_iteration"`
}

// RankTree is what a group's loop tree takes of one rank's collapse:
// its loops with their keys and header labels, without the graph and the
// levels, so that these can be released before the ranks are grouped.
type RankTree struct {
	Rank   int
	Thread int
	Loops  []TreeLoop
}

// TreeLoop is one loop of a RankTree, in ID order (index ID-1).
type TreeLoop struct {
	Name                  string
	Parent, Depth         int
	Key                   LoopKey
	Header                string // HeaderLabel of the loop's header
	Irreducible, SelfLoop bool
	Stats                 Stats
}

// Tree returns the loops of r as GroupTree compares them.
func (r RankLoops) Tree() RankTree {
	keys := LoopKeys(r.Graph, r.Collapsed)
	t := RankTree{Rank: r.Rank, Thread: r.Thread, Loops: make([]TreeLoop, len(keys))}
	for i := range r.Collapsed.Loops {
		l := &r.Collapsed.Loops[i]
		t.Loops[i] = TreeLoop{Name: l.Name, Parent: l.Parent, Depth: l.Depth, Key: keys[i],
			Header: HeaderLabel(r.Graph, l.Header), Irreducible: l.Irreducible, SelfLoop: l.SelfLoop, Stats: l.Stats}
	}
	return t
}

// GroupTree returns the loop tree of the ranks rs[m] for m in members:
// the loops of the first member (the representative) in its ID order (a
// pre-order of the tree), then the loops that only other members have,
// numbered after them and nested in the loop of the same key if the
// representative has it; loops are matched across members by LoopKey.
func GroupTree(rs []RankTree, members []int) []TreeRow {
	if len(members) == 0 {
		return nil
	}
	rep := rs[members[0]]
	index := make(map[LoopKey]int, len(rep.Loops))
	rows := make([]TreeRow, len(rep.Loops))
	for i := range rep.Loops {
		l := &rep.Loops[i]
		index[l.Key] = i
		rows[i] = TreeRow{
			ID: i + 1, Name: l.Name, Parent: l.Parent, Depth: l.Depth, Key: l.Key,
			Header: l.Header, Irreducible: l.Irreducible, SelfLoop: l.SelfLoop,
		}
	}
	type sums struct{ time, iter, calls, bytes int64 }
	acc := make([]sums, len(rows))
	where := make([][]int, len(rows))
	for _, m := range members {
		r := rs[m]
		for i := range r.Loops {
			l := &r.Loops[i]
			k := l.Key
			j, ok := index[k]
			if !ok {
				// A loop the representative does not have: a row of its
				// own, under its parent's row if there is one (parents
				// have smaller IDs, so theirs exists by now).
				j = len(rows)
				row := TreeRow{ID: j + 1, Name: "Loop " + strconv.Itoa(j+1), Depth: 1, Key: k,
					Header: l.Header, Irreducible: l.Irreducible, SelfLoop: l.SelfLoop}
				if l.Parent > 0 {
					if p, ok := index[r.Loops[l.Parent-1].Key]; ok {
						row.Parent, row.Depth = rows[p].ID, rows[p].Depth+1
					}
				}
				index[k] = j
				rows = append(rows, row)
				acc = append(acc, sums{})
				where = append(where, nil)
			}
			st := &l.Stats
			row := &rows[j]
			if row.Ranks == 0 || st.Share < row.MinShare {
				row.MinShare, row.MinRank = st.Share, r.Rank
			}
			if row.Ranks == 0 || st.Share > row.MaxShare {
				row.MaxShare, row.MaxRank = st.Share, r.Rank
			}
			row.Ranks++
			row.AvgIterations += float64(st.Iterations)
			row.AvgShare += st.Share
			a := &acc[j]
			a.time += st.Time
			a.iter += st.Iterations
			a.calls += st.Calls
			a.bytes += st.Bytes
			where[j] = append(where[j], r.Rank)
		}
	}
	for i := range rows {
		r, a := &rows[i], &acc[i]
		if n := float64(r.Ranks); n > 0 {
			r.AvgIterations /= n
			r.AvgShare /= n
			r.AvgTime = float64(a.time) / n
		}
		r.TimePerIteration = perIter(a.time, a.iter)
		r.CallsPerIteration = perIter(a.calls, a.iter)
		r.BytesPerIteration = perIter(a.bytes, a.iter)
		if r.Ranks < len(members) {
			slices.Sort(where[i])
			r.Where = Ranges(slices.Compact(where[i]))
		}
	}
	return preorder(rows)
}

// Ranges formats ascending rank numbers as "0-3,8,10-11".
func Ranges(rs []int) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		k := i
		for k+1 < len(rs) && rs[k+1] == rs[k]+1 {
			k++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(rs[i]))
		if k > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(rs[k]))
		}
		i = k + 1
	}
	return b.String()
}

// preorder sorts rows (indexed by ID-1) so that every loop is followed by
// its nested loops; siblings stay in ID order.
func preorder(rows []TreeRow) []TreeRow {
	children := make([][]int, len(rows)+1)
	for i, r := range rows {
		children[r.Parent] = append(children[r.Parent], i)
	}
	out := make([]TreeRow, 0, len(rows))
	stack := make([]int, 0, len(rows))
	for k := len(children[0]) - 1; k >= 0; k-- {
		stack = append(stack, children[0][k])
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, rows[i])
		ch := children[rows[i].ID]
		for k := len(ch) - 1; k >= 0; k-- {
			stack = append(stack, ch[k])
		}
	}
	return out
}

// HeaderLabel describes node v of g for people: the call, " at ", and its
// call site's label (flowgraph.CallSite.Label), as the report shows it.
func HeaderLabel(g *flowgraph.Graph, v int) string {
	n := &g.Nodes[v]
	s := n.Key.Site
	if s < 0 || s >= len(g.Sites) {
		return n.Key.Call
	}
	return n.Key.Call + " at " + g.Sites[s].Label()
}
