package report

import (
	"fmt"
	"math"
	"strings"

	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// Metric names for coloring graphs. Time, count and bytes exist always
// (bytes for nodes only); the counter metrics exist for edges when the
// recording has the counters they are derived from.
const (
	MetricTime   = "time"
	MetricCount  = "count"
	MetricBytes  = "bytes"
	MetricIPC    = "ipc"
	MetricMIPS   = "mips"
	MetricMFLOPS = "mflops"
	MetricMiss   = "missrate"
)

// counterMap locates the counters that derived metrics need, -1 if absent.
type counterMap struct {
	ins, cyc, fp, miss, access int
}

func newCounterMap(names []string) counterMap {
	cm := counterMap{ins: -1, cyc: -1, fp: -1, miss: -1, access: -1}
	for i, n := range names {
		u := strings.ToUpper(n)
		switch {
		case strings.Contains(u, "TOT_INS") || u == "INSTRUCTIONS":
			cm.ins = i
		case strings.Contains(u, "TOT_CYC") || u == "CYCLES":
			if cm.cyc < 0 {
				cm.cyc = i
			}
		case strings.Contains(u, "FP_OPS") || strings.Contains(u, "DP_OPS") || strings.Contains(u, "SP_OPS") || strings.Contains(u, "FP_INS"):
			if cm.fp < 0 {
				cm.fp = i
			}
		case strings.HasSuffix(u, "_DCM") || strings.HasSuffix(u, "_TCM") || strings.Contains(u, "CACHE-MISSES") || strings.Contains(u, "CACHE_MISSES"):
			if cm.miss < 0 {
				cm.miss = i
			}
		case strings.HasSuffix(u, "_DCA") || strings.HasSuffix(u, "_TCA") || strings.Contains(u, "CACHE-REFERENCES") || strings.Contains(u, "CACHE_REFERENCES"):
			if cm.access < 0 {
				cm.access = i
			}
		}
	}
	return cm
}

// Metrics lists the metrics available for a recording with the given
// counter names, in display order.
func Metrics(counters []string) []string {
	cm := newCounterMap(counters)
	out := []string{MetricTime, MetricCount, MetricBytes}
	if cm.ins >= 0 && cm.cyc >= 0 {
		out = append(out, MetricIPC)
	}
	if cm.ins >= 0 {
		out = append(out, MetricMIPS)
	}
	if cm.fp >= 0 {
		out = append(out, MetricMFLOPS)
	}
	if cm.miss >= 0 && (cm.access >= 0 || cm.ins >= 0) {
		out = append(out, MetricMiss)
	}
	return out
}

// MetricUnit is the unit shown in legends.
func MetricUnit(m string) string {
	switch m {
	case MetricTime:
		return "s"
	case MetricCount:
		return "calls/phases"
	case MetricBytes:
		return "B"
	case MetricIPC:
		return "instr/cycle"
	case MetricMIPS:
		return "MIPS"
	case MetricMFLOPS:
		return "MFLOPS"
	case MetricMiss:
		return "misses per access (or per 1000 instr)"
	}
	return ""
}

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
	Src   int    // edge ends, indices into LevelGraph.Nodes
	Dst   int
	Vals  []float64
	// Extra loop statistics for the tooltip.
	Entries, Calls int64
	Share          float64
	// Signature is the full signature of the call site's function when
	// Where shortens it (flowgraph.CallSite.Signature), for the tooltip.
	Signature string
}

// LevelGraph is one level of a collapsed graph (top level or the inside of
// a loop) ready to be drawn.
type LevelGraph struct {
	Loop   int    // 0 for the top level
	Name   string // "top level" or the loop name
	Parent int    // enclosing level's loop ID
	Header string // loop header description
	Nodes  []Elem
	Edges  []Elem
	// Initial is the node holding the rank's first event, -1 if not here.
	Initial int
}

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
	k := &g.Nodes[v].Key
	obj, addr := "", uint64(0)
	if s := k.Site; s >= 0 && s < len(g.Sites) {
		if cs := &g.Sites[s]; cs.Object != "" {
			obj, addr = cs.Object, cs.Offset
		} else {
			addr = cs.Addr
		}
	}
	return fmt.Sprintf("%s@%s+%#x b%d p%d c%d", k.Call, obj, addr, k.Bytes, k.Partner, k.Comm)
}

// derived computes the counter metrics of a compute phase from its counter
// sums and time in ns.
func derived(metrics []string, cm counterMap, ctr []int64, timeNS int64, vals []float64) {
	get := func(i int) float64 {
		if i < 0 || i >= len(ctr) {
			return math.NaN()
		}
		return float64(ctr[i])
	}
	us := float64(timeNS) / 1e3
	for k, m := range metrics {
		v := math.NaN()
		switch m {
		case MetricIPC:
			if c := get(cm.cyc); c > 0 {
				v = get(cm.ins) / c
			}
		case MetricMIPS:
			if us > 0 {
				v = get(cm.ins) / us
			}
		case MetricMFLOPS:
			if us > 0 {
				v = get(cm.fp) / us
			}
		case MetricMiss:
			if a := get(cm.access); a > 0 {
				v = get(cm.miss) / a
			} else if i := get(cm.ins); i > 0 {
				v = 1000 * get(cm.miss) / i
			}
		default:
			continue
		}
		vals[k] = v
	}
}

func newVals(metrics []string, time float64, count float64, bytes float64) []float64 {
	v := make([]float64, len(metrics))
	for k, m := range metrics {
		switch m {
		case MetricTime:
			v[k] = time
		case MetricCount:
			v[k] = count
		case MetricBytes:
			v[k] = bytes
		default:
			v[k] = math.NaN()
		}
	}
	return v
}

// BuildLevels turns the collapsed graph c of g into drawable levels,
// indexed by loop ID (0 is the top level).
func BuildLevels(g *flowgraph.Graph, c *loops.Collapsed, metrics []string, counters []string) []LevelGraph {
	cm := newCounterMap(counters)
	keys := loops.LoopKeys(g, c)
	out := make([]LevelGraph, len(c.Levels))
	for id := range c.Levels {
		lv := &c.Levels[id]
		lg := LevelGraph{Loop: id, Name: "top level", Initial: -1}
		if l := c.Loop(id); l != nil {
			lg.Name = l.Name
			lg.Parent = l.Parent
			lg.Header = g.Nodes[l.Header].Key.Call + " at " + siteWhere(g, g.Nodes[l.Header].Key.Site)
		}
		for i, ln := range lv.Nodes {
			if ln.Loop > 0 {
				l := c.Loop(ln.Loop)
				st := &l.Stats
				e := Elem{Kind: KindLoop, Key: "loop " + keys[ln.Loop-1].String(), Loop: ln.Loop, Name: l.Name,
					Call: g.Nodes[l.Header].Key.Call, Site: g.Nodes[l.Header].Key.Site,
					Where: siteWhere(g, g.Nodes[l.Header].Key.Site), Signature: siteSignature(g, g.Nodes[l.Header].Key.Site), Entries: st.Entries, Calls: st.Calls, Share: st.Share,
					Vals: newVals(metrics, float64(st.Time)/1e9, float64(st.Iterations), float64(st.Bytes))}
				derived(metrics, cm, st.Counters, st.EdgeTime, e.Vals)
				lg.Nodes = append(lg.Nodes, e)
				if g.Initial >= 0 && isAncestorLoop(c, ln.Loop, c.LoopOf[g.Initial]) {
					// The first event is inside this nested loop.
					lg.Initial = i
				}
				continue
			}
			n := &g.Nodes[ln.Node]
			e := Elem{Kind: KindNode, Key: "call " + nodeKey(g, ln.Node), Call: n.Key.Call, Site: n.Key.Site,
				Where: siteWhere(g, n.Key.Site), Signature: siteSignature(g, n.Key.Site),
				Vals: newVals(metrics, float64(n.Time.Total)/1e9, float64(n.Count), float64(n.Bytes.Total))}
			if ln.Node == g.Initial {
				lg.Initial = i
			}
			lg.Nodes = append(lg.Nodes, e)
		}
		for _, le := range lv.Edges {
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
			e := Elem{Kind: KindEdge, Key: "edge " + lg.Nodes[le.Src].Key + " -> " + lg.Nodes[le.Dst].Key,
				Src: le.Src, Dst: le.Dst, Site: -1,
				Vals: newVals(metrics, float64(le.Time)/1e9, float64(le.Count), math.NaN())}
			derived(metrics, cm, ctr, le.Time, e.Vals)
			lg.Edges = append(lg.Edges, e)
		}
		out[id] = lg
	}
	return out
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

// metricIndex returns the position of m in metrics, -1 if absent.
func metricIndex(metrics []string, m string) int {
	for i, x := range metrics {
		if x == m {
			return i
		}
	}
	return -1
}

// FormatSeconds formats seconds the way the event-flow-graph paper labels
// graphs (t=31.69), with enough digits for short times.
func FormatSeconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "n/a"
	case s == 0:
		return "0"
	case math.Abs(s) >= 1:
		return fmt.Sprintf("%.2f", s)
	default:
		return fmt.Sprintf("%.2g", s)
	}
}

// FormatBytes formats a byte count compactly: 8B, 4KB, 1.5MB.
func FormatBytes(b float64) string {
	switch {
	case math.IsNaN(b):
		return "n/a"
	case b < 1024:
		return fmt.Sprintf("%.0fB", b)
	case b < 1<<20:
		return trimZero(fmt.Sprintf("%.1f", b/1024)) + "KB"
	case b < 1<<30:
		return trimZero(fmt.Sprintf("%.1f", b/(1<<20))) + "MB"
	default:
		return trimZero(fmt.Sprintf("%.1f", b/(1<<30))) + "GB"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

func formatCount(c float64) string {
	if c == math.Trunc(c) || c >= 100 {
		return fmt.Sprintf("%.0f", c)
	}
	return fmt.Sprintf("%.1f", c)
}

// formatMetric formats a metric value for legends and tooltips.
func formatMetric(m string, v float64) string {
	switch m {
	case MetricTime:
		return FormatSeconds(v) + " s"
	case MetricCount:
		return formatCount(v)
	case MetricBytes:
		return FormatBytes(v)
	default:
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.3g", v)
	}
}

// Label is the text drawn on an element, as in the paper: node
// "MPI_Allreduce 8B cs=68 t=31.69", edge "200 (0.01)", loop node with its
// iterations and accumulated time.
func (e *Elem) Label(metrics []string) string {
	val := func(m string) float64 {
		if i := metricIndex(metrics, m); i >= 0 {
			return e.Vals[i]
		}
		return math.NaN()
	}
	t, n := val(MetricTime), val(MetricCount)
	switch e.Kind {
	case KindLoop:
		return fmt.Sprintf("%s\n%s it t=%s", e.Name, formatCount(n), FormatSeconds(t))
	case KindEdge:
		return fmt.Sprintf("%s (%s)", formatCount(n), FormatSeconds(t))
	}
	size := 0.0
	if n > 0 {
		size = val(MetricBytes) / n
	}
	if e.Site >= 0 {
		return fmt.Sprintf("%s %s cs=%d t=%s", e.Call, FormatBytes(size), e.Site, FormatSeconds(t))
	}
	return fmt.Sprintf("%s %s t=%s", e.Call, FormatBytes(size), FormatSeconds(t))
}

// Tooltip is the hover text of an element: call site function, file and
// line, the function's full signature, and every metric.
func (e *Elem) Tooltip(metrics []string, lg *LevelGraph) string {
	var b strings.Builder
	switch e.Kind {
	case KindNode:
		// The call site id links the hover text to the label's cs=N.
		fmt.Fprintf(&b, "%s at %s", shortName(e), e.Where)
		b.WriteString(e.signatureLine())
	case KindLoop:
		fmt.Fprintf(&b, "%s: header %s at %s; %d entries, %d calls, %.1f%% of the rank's time (click to open)",
			e.Name, e.Call, e.Where, e.Entries, e.Calls, 100*e.Share)
		b.WriteString(e.signatureLine())
		if t, n := e.Vals[metricIndex(metrics, MetricTime)], e.Vals[metricIndex(metrics, MetricCount)]; n > 0 {
			fmt.Fprintf(&b, "\nper iteration: %s s, %.3g calls", FormatSeconds(t/n), float64(e.Calls)/n)
		}
	case KindEdge:
		src, dst := &lg.Nodes[e.Src], &lg.Nodes[e.Dst]
		fmt.Fprintf(&b, "compute phase %s -> %s", shortName(src), shortName(dst))
	}
	for k, m := range metrics {
		if math.IsNaN(e.Vals[k]) {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s", m, formatMetric(m, e.Vals[k]))
	}
	return b.String()
}

// signatureLine is a line of the tooltip with the full signature of the
// call site's function, if Where shortens it.
func (e *Elem) signatureLine() string {
	if e.Signature == "" {
		return ""
	}
	return "\nfunction " + e.Signature
}

func shortName(e *Elem) string {
	if e.Kind == KindLoop {
		return e.Name
	}
	if e.Site >= 0 {
		return fmt.Sprintf("%s cs=%d", e.Call, e.Site)
	}
	return e.Call
}
