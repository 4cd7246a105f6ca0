package analysis

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unique"

	"mpiflow/flowgraph"
	"mpiflow/internal/units"
	"mpiflow/loops"
)

// Elem kinds.
const (
	KindNode = iota
	KindLoop
	KindEdge
)

// Elem is one node, loop node or edge of a level graph with its metric
// values (in the order of the metric list; NaN when not applicable).
type Elem struct {
	Kind int
	// Key identifies the element across ranks (call and call site, loop
	// key, or the keys of an edge's ends).
	Key   string
	Call  string
	Site  int    // call site index, -1 if none
	Where string // call site description for people
	Loop  int    // loop ID of a loop node
	Name  string // loop name
	Src   int    // edge ends, indices into Level.Nodes
	Dst   int
	// Back marks a back edge of the level's loop: the compute phases from
	// the end of an iteration to the loop's header, which start the next
	// iteration. Their time is part of the loop's, so a level's nodes and
	// edges, back edges included, add up to the loop's time.
	Back bool
	Vals []float64
	// Loop statistics: entries from outside, MPI calls inside, and the
	// share of the rank's time after MPI_Init (means over the ranks of a
	// group's level).
	Entries, Calls float64
	Share          float64
	// Signature is the full signature of the call site's function when
	// Where shortens it (flowgraph.CallSite.Signature), for hover texts.
	Signature string
	// Merged is the number of the level's nodes this node stands for
	// when the level has too many to show (MaxLevelNodes), 0 for others.
	Merged int
}

// Level is one level of a collapsed graph (top level or the inside of
// a loop) ready to be drawn.
type Level struct {
	Loop   int    // 0 for the top level
	Name   string // "top level" or the loop name
	Parent int    // enclosing level's loop ID
	Header string // loop header description
	Nodes  []Elem
	Edges  []Elem
	// Initial is the node holding the rank's first event, -1 if not here.
	Initial int
}

// intern returns the one copy of s that every rank's levels share: ranks
// of one program name the same calls, sites and edges, and a thousand
// ranks' copies of these keys would otherwise take more than their
// graphs.
func intern(s string) string { return unique.Make(s).Value() }

func siteWhere(g *flowgraph.Graph, s int) string {
	if s < 0 || s >= len(g.Sites) {
		return "unknown call site"
	}
	return g.Sites[s].Label()
}

func siteSignature(g *flowgraph.Graph, s int) string {
	if s < 0 || s >= len(g.Sites) {
		return ""
	}
	return g.Sites[s].Signature
}

func nodeKey(g *flowgraph.Graph, v int) string {
	return string(appendNodeKey(nil, g, v))
}

// appendNodeKey appends the key of node v to b: "call@object+0xoffset
// bBytes pPartner cComm".
func appendNodeKey(b []byte, g *flowgraph.Graph, v int) []byte {
	k := &g.Nodes[v].Key
	obj, addr := "", uint64(0)
	if s := k.Site; s >= 0 && s < len(g.Sites) {
		if cs := &g.Sites[s]; cs.Object != "" {
			obj, addr = cs.Object, cs.Offset
		} else {
			addr = cs.Addr
		}
	}
	b = append(append(append(append(b, k.Call...), '@'), obj...), "+0x"...)
	b = append(strconv.AppendUint(b, addr, 16), " b"...)
	b = append(strconv.AppendInt(b, k.Bytes, 10), " p"...)
	b = append(strconv.AppendInt(b, int64(k.Partner), 10), " c"...)
	return strconv.AppendInt(b, int64(k.Comm), 10)
}

// BuildLevels turns the collapsed graph c of g into drawable levels,
// indexed by loop ID (0 is the top level). A level of more than
// MaxLevelNodes nodes keeps those of most time and merges the rest into one
// (Elem.Merged).
func BuildLevels(g *flowgraph.Graph, c *loops.Collapsed, metrics []string, counters []string) []Level {
	cm := newCounterMap(counters)
	keys := loops.LoopKeys(g, c)
	out := make([]Level, len(c.Levels))
	for id := range c.Levels {
		lv := &c.Levels[id]
		l := c.Loop(id)
		lc := newLevelCap(len(lv.Nodes), func(i int) int64 {
			if ln := lv.Nodes[i]; ln.Loop > 0 {
				return c.Loop(ln.Loop).Stats.Time
			}
			return g.Nodes[lv.Nodes[i].Node].Time.Total
		}, func(i int) bool {
			ln := lv.Nodes[i]
			return ln.Loop == 0 && (ln.Node == g.Initial || l != nil && ln.Node == l.Header)
		})
		lg := Level{Loop: id, Name: "top level", Initial: -1, Nodes: make([]Elem, 0, lc.len(len(lv.Nodes))),
			Edges: make([]Elem, 0, lc.len(len(lv.Edges)+len(lv.BackEdges)))}
		if l != nil {
			lg.Name = l.Name
			lg.Parent = l.Parent
			lg.Header = g.Nodes[l.Header].Key.Call + " at " + siteWhere(g, g.Nodes[l.Header].Key.Site)
		}
		for i, ln := range lv.Nodes {
			if ln.Loop > 0 {
				l := c.Loop(ln.Loop)
				st := &l.Stats
				if g.Initial >= 0 && isAncestorLoop(c, ln.Loop, c.LoopOf[g.Initial]) {
					// The first event is inside this nested loop.
					lg.Initial = lc.index(i)
				}
				if !lc.kept(i) {
					lc.merge(st.Time, st.Calls, st.Bytes)
					continue
				}
				e := Elem{Kind: KindLoop, Key: intern("loop " + keys[ln.Loop-1].String()), Loop: ln.Loop, Name: l.Name,
					Call: g.Nodes[l.Header].Key.Call, Site: g.Nodes[l.Header].Key.Site,
					Where: intern(siteWhere(g, g.Nodes[l.Header].Key.Site)), Signature: siteSignature(g, g.Nodes[l.Header].Key.Site), Entries: float64(st.Entries), Calls: float64(st.Calls), Share: st.Share,
					Vals: newVals(metrics, float64(st.Time)/1e9, float64(st.Iterations), float64(st.Bytes))}
				derived(metrics, cm, st.Counters, st.EdgeTime, e.Vals)
				lg.Nodes = append(lg.Nodes, e)
				continue
			}
			if ln.Node == g.Initial {
				lg.Initial = lc.index(i)
			}
			if lc.kept(i) {
				lg.Nodes = append(lg.Nodes, nodeElem(g, ln.Node, metrics))
			} else {
				n := &g.Nodes[ln.Node]
				lc.merge(n.Time.Total, n.Count, n.Bytes.Total)
			}
		}
		lg.Nodes = lc.appendOther(lg.Nodes, metrics)
		for _, le := range lc.edges(lv.Edges) {
			lg.Edges = append(lg.Edges, edgeElem(g, &lg, metrics, cm, le, false))
		}
		for _, le := range lc.edges(backEdges(g, c, id, lv)) {
			lg.Edges = append(lg.Edges, edgeElem(g, &lg, metrics, cm, le, true))
		}
		out[id] = lg
	}
	return out
}

// nodeElem is the element of graph node v.
func nodeElem(g *flowgraph.Graph, v int, metrics []string) Elem {
	n := &g.Nodes[v]
	return Elem{Kind: KindNode, Key: intern("call " + nodeKey(g, v)), Call: n.Key.Call, Site: n.Key.Site,
		Where: intern(siteWhere(g, n.Key.Site)), Signature: siteSignature(g, n.Key.Site),
		Vals: newVals(metrics, float64(n.Time.Total)/1e9, float64(n.Count), float64(n.Bytes.Total))}
}

// MaxLevelNodes bounds the nodes of a level: a level of more keeps its
// nodes of most time, its loop header and the node of the first event, and
// merges the others into one. A program of a million call sites so still
// gives graphs that Graphviz lays out and a person reads (pprof draws its
// 80 heaviest nodes for the same reason), and levels whose memory does not
// grow with the call sites.
const MaxLevelNodes = 400

// otherKey is the key of the node that stands for a level's merged nodes:
// the same on every rank, so that it averages over a group.
const otherKey = "other nodes"

// levelCap tells which nodes of a level are kept and sums the others.
type levelCap struct {
	at    []int // new index of each node, other for the merged ones; nil when all are kept
	other int
	// merged counts the merged nodes, of these sums.
	merged             int
	time, count, bytes int64
}

// newLevelCap keeps the nodes must says and the heaviest of the others by
// weight, at most MaxLevelNodes-1 in all, in their order.
func newLevelCap(n int, weight func(int) int64, must func(int) bool) *levelCap {
	if n <= MaxLevelNodes {
		return &levelCap{other: -1}
	}
	keep := make([]bool, n)
	kept := 0
	for i := range keep {
		if must(i) {
			keep[i] = true
			kept++
		}
	}
	order := make([]int, n)
	w := make([]int64, n)
	for i := range order {
		order[i], w[i] = i, weight(i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w[b], w[a]) })
	for _, i := range order {
		if kept >= MaxLevelNodes-1 {
			break
		}
		if !keep[i] {
			keep[i] = true
			kept++
		}
	}
	lc := &levelCap{at: make([]int, n), other: kept}
	next := 0
	for i, k := range keep {
		if k {
			lc.at[i] = next
			next++
		} else {
			lc.at[i] = lc.other
		}
	}
	return lc
}

// len is how many of n elements a capped level holds at most.
func (lc *levelCap) len(n int) int {
	if lc.at == nil {
		return n
	}
	return min(n, 2*MaxLevelNodes)
}

// index is the index of node i in the level.
func (lc *levelCap) index(i int) int {
	if lc.at == nil {
		return i
	}
	return lc.at[i]
}

func (lc *levelCap) kept(i int) bool { return lc.index(i) != lc.other }

// merge adds a merged node's time, calls and bytes (a loop's calls, not its
// iterations: the merged node counts calls).
func (lc *levelCap) merge(time, count, bytes int64) {
	lc.merged++
	lc.time += time
	lc.count += count
	lc.bytes += bytes
}

// appendOther appends the node of the merged nodes, if any.
func (lc *levelCap) appendOther(nodes []Elem, metrics []string) []Elem {
	if lc.merged == 0 {
		return nodes
	}
	return append(nodes, Elem{Kind: KindNode, Key: otherKey, Call: "other nodes", Site: -1, Merged: lc.merged,
		Where: fmt.Sprintf("%s nodes of least time, merged: a level shows at most %d", units.Count(float64(lc.merged)), MaxLevelNodes),
		Vals:  newVals(metrics, float64(lc.time)/1e9, float64(lc.count), float64(lc.bytes))})
}

// edges maps level edges onto the kept nodes: those to or from merged nodes
// become edges of the merged node, one per pair of ends, in order of first
// appearance.
func (lc *levelCap) edges(les []loops.LevelEdge) []loops.LevelEdge {
	if lc.at == nil {
		return les
	}
	var m edgeMerger
	for _, le := range les {
		m.add(lc.at[le.Src], lc.at[le.Dst], le.Count, le.Time, le.Edges...)
	}
	return m.out
}

// edgeMerger merges edges into one level edge per pair of ends, in order of
// first appearance.
type edgeMerger struct {
	out []loops.LevelEdge
	at  map[[2]int]int
}

// add adds graph edges from s to d of count traversals and time.
func (m *edgeMerger) add(s, d int, count, time int64, edges ...int) {
	k, ok := m.at[[2]int{s, d}]
	if !ok {
		if m.at == nil {
			m.at = map[[2]int]int{}
		}
		k = len(m.out)
		m.at[[2]int{s, d}] = k
		m.out = append(m.out, loops.LevelEdge{Src: s, Dst: d})
	}
	e := &m.out[k]
	e.Edges = append(e.Edges, edges...)
	e.Count += count
	e.Time += time
}

// edgeElem is the element of level edge le of lg, a back edge if back.
func edgeElem(g *flowgraph.Graph, lg *Level, metrics []string, cm counterMap, le loops.LevelEdge, back bool) Elem {
	var ctr []int64
	for _, gi := range le.Edges {
		ec := g.Edges[gi].Counters
		if ctr == nil && len(ec) > 0 {
			ctr = make([]int64, len(ec))
		}
		for k := range ec {
			if k < len(ctr) {
				ctr[k] += ec[k]
			}
		}
	}
	key := "edge "
	if back {
		key = "back edge "
	}
	e := Elem{Kind: KindEdge, Key: intern(key + lg.Nodes[le.Src].Key + " -> " + lg.Nodes[le.Dst].Key),
		Src: le.Src, Dst: le.Dst, Site: -1, Back: back,
		Vals: newVals(metrics, float64(le.Time)/1e9, float64(le.Count), math.NaN())}
	derived(metrics, cm, ctr, le.Time, e.Vals)
	return e
}

// backEdges merges the back edges of loop id (graph edges to its header,
// which the collapse leaves out of the level's drawn edges) into level
// edges between the level's nodes: from the node or nested loop where an
// iteration ends to the header (or the nested self-loop holding it), in
// order of first appearance.
func backEdges(g *flowgraph.Graph, c *loops.Collapsed, id int, lv *loops.Level) []loops.LevelEdge {
	if id == 0 || len(lv.BackEdges) == 0 {
		return nil
	}
	// local is the index in lv.Nodes of a graph node's representative at
	// this level: the node itself, or the loop node of the nested loop
	// directly inside loop id that holds it.
	nodeAt := make(map[int]int, len(lv.Nodes))
	loopAt := make(map[int]int)
	for i, ln := range lv.Nodes {
		if ln.Loop > 0 {
			loopAt[ln.Loop] = i
		} else {
			nodeAt[ln.Node] = i
		}
	}
	local := func(v int) (int, bool) {
		if i, ok := nodeAt[v]; ok {
			return i, true
		}
		for x := c.LoopOf[v]; x > 0; x = c.Loop(x).Parent {
			if c.Loop(x).Parent == id {
				i, ok := loopAt[x]
				return i, ok
			}
		}
		return 0, false
	}
	var m edgeMerger
	for _, gi := range lv.BackEdges {
		e := &g.Edges[gi]
		s, ok1 := local(e.Src)
		d, ok2 := local(e.Dst)
		if !ok1 || !ok2 {
			continue // not inside this loop: not possible for a back edge
		}
		m.add(s, d, e.Count, e.Time.Total, gi)
	}
	return m.out
}

// isAncestorLoop reports whether loop anc encloses loop id (or is it).
func isAncestorLoop(c *loops.Collapsed, anc, id int) bool {
	for id > 0 {
		if id == anc {
			return true
		}
		id = c.Loop(id).Parent
	}
	return false
}

// StartUp reports whether e is an MPI_Init or MPI_Init_thread node, whose
// start-up cost is left out of shares and color scales, as IPM does.
func (e *Elem) StartUp() bool { return e.Kind == KindNode && flowgraph.IsInit(e.Call) }

// rawLevels is the uncollapsed graph as one level, used when the loop
// analysis fails for a rank; capped as BuildLevels caps a level.
func rawLevels(g *flowgraph.Graph, metrics []string, counters []string) []Level {
	cm := newCounterMap(counters)
	lc := newLevelCap(len(g.Nodes), func(v int) int64 { return g.Nodes[v].Time.Total }, func(v int) bool { return v == g.Initial })
	lg := Level{Name: "whole graph (loops not collapsed)", Initial: -1}
	if g.Initial >= 0 && g.Initial < len(g.Nodes) {
		lg.Initial = lc.index(g.Initial)
	}
	for v := range g.Nodes {
		if lc.kept(v) {
			lg.Nodes = append(lg.Nodes, nodeElem(g, v, metrics))
		} else {
			n := &g.Nodes[v]
			lc.merge(n.Time.Total, n.Count, n.Bytes.Total)
		}
	}
	lg.Nodes = lc.appendOther(lg.Nodes, metrics)
	les := make([]loops.LevelEdge, len(g.Edges))
	for i := range g.Edges {
		e := &g.Edges[i]
		les[i] = loops.LevelEdge{Src: e.Src, Dst: e.Dst, Edges: []int{i}, Count: e.Count, Time: e.Time.Total}
	}
	for _, le := range lc.edges(les) {
		lg.Edges = append(lg.Edges, edgeElem(g, &lg, metrics, cm, le, false))
	}
	return []Level{lg}
}

// RankLevels returns the levels of a rank's graph and its collapse: the
// collapsed levels, or the whole graph as one level, a nil collapse and
// the error when the loop analysis fails.
func RankLevels(g *flowgraph.Graph, counters []string) ([]Level, *loops.Collapsed, error) {
	metrics := Metrics(counters)
	c, err := loops.Collapse(g)
	if err != nil {
		return rawLevels(g, metrics, counters), nil, err
	}
	return BuildLevels(g, c, metrics, counters), c, nil
}

// structure is the text form of the structure of all levels of a rank:
// element keys and level nesting, no values. Ranks with equal structure
// form one group.
func structure(levels []Level) string {
	var b strings.Builder
	for i := range levels {
		lg := &levels[i]
		fmt.Fprintf(&b, "L%d<%d %d\n", lg.Loop, lg.Parent, lg.Initial)
		for _, e := range lg.Nodes {
			b.WriteString(e.Key)
			b.WriteByte('\n')
		}
		for _, e := range lg.Edges {
			if e.Back {
				b.WriteByte('^')
			}
			fmt.Fprintf(&b, "%d>%d\n", e.Src, e.Dst)
		}
	}
	return b.String()
}

// signature is a short hash of a structure.
func signature(structure string) string {
	h := sha256.Sum256([]byte(structure))
	return hex.EncodeToString(h[:12])
}

// meanLevels returns the levels of members[0], the representative of a
// group, with the values and loop statistics of each element averaged over
// the members that have it: levels are matched by the keys of their
// enclosing loops, elements by key, so members whose structure differs
// add what they share with the representative.
func meanLevels(members [][]Level) []Level {
	type acc struct {
		vals                  []float64
		entries, calls, share float64
		n                     int
	}
	rep := members[0]
	out := make([]Level, len(rep))
	nodes := make([][]acc, len(rep))
	edges := make([][]acc, len(rep))
	for l := range rep {
		nodes[l] = make([]acc, len(rep[l].Nodes))
		edges[l] = make([]acc, len(rep[l].Edges))
	}
	repLevel := levelIndex(rep)
	add := func(a []acc, index map[string]int, es []Elem) {
		for i := range es {
			e := &es[i]
			k, ok := index[e.Key]
			if !ok {
				continue
			}
			x := &a[k]
			if x.vals == nil {
				x.vals = make([]float64, len(e.Vals))
			}
			for v := range min(len(e.Vals), len(x.vals)) {
				x.vals[v] += e.Vals[v]
			}
			x.entries += e.Entries
			x.calls += e.Calls
			x.share += e.Share
			x.n++
		}
	}
	nodeIndex := make([]map[string]int, len(rep))
	edgeIndex := make([]map[string]int, len(rep))
	for l := range rep {
		nodeIndex[l], edgeIndex[l] = elemIndex(rep[l].Nodes), elemIndex(rep[l].Edges)
	}
	for m, levels := range members {
		at := repLevel
		if m > 0 {
			at = levelIndex(levels)
		}
		for key, ml := range at {
			l, ok := repLevel[key]
			if !ok {
				continue
			}
			add(nodes[l], nodeIndex[l], levels[ml].Nodes)
			add(edges[l], edgeIndex[l], levels[ml].Edges)
		}
	}
	mean := func(es []Elem, a []acc) []Elem {
		out := make([]Elem, len(es))
		for i := range es {
			out[i] = es[i]
			if n := float64(a[i].n); n > 0 {
				for v := range a[i].vals {
					a[i].vals[v] /= n
				}
				out[i].Vals = a[i].vals
				out[i].Entries, out[i].Calls, out[i].Share = a[i].entries/n, a[i].calls/n, a[i].share/n
			}
		}
		return out
	}
	for l := range rep {
		out[l] = rep[l]
		out[l].Nodes = mean(rep[l].Nodes, nodes[l])
		out[l].Edges = mean(rep[l].Edges, edges[l])
	}
	return out
}

// levelIndex maps the key of each level (the keys of the loop nodes that
// enclose it, outermost first; "" for the top level) to its index.
func levelIndex(levels []Level) map[string]int {
	keys := make([]string, len(levels))
	out := make(map[string]int, len(levels))
	// Enclosing loops have smaller IDs, so parents come first.
	for l := range levels {
		if l == 0 {
			out[""] = 0
			continue
		}
		p := levels[l].Parent
		if p < 0 || p >= l {
			continue
		}
		for _, e := range levels[p].Nodes {
			if e.Kind == KindLoop && e.Loop == levels[l].Loop {
				keys[l] = keys[p] + "/" + e.Key
				out[keys[l]] = l
				break
			}
		}
	}
	return out
}

func elemIndex(es []Elem) map[string]int {
	out := make(map[string]int, len(es))
	for i := range es {
		if _, ok := out[es[i].Key]; !ok {
			out[es[i].Key] = i
		}
	}
	return out
}
