package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/emicklei/dot"

	"mpiflow/analysis"
)

// DOTOptions shape the DOT text of a level graph.
type DOTOptions struct {
	// Metric colors nodes and edges (analysis.MetricTime if empty).
	Metric string
	// Title is drawn above the graph with the color legend.
	Title string
	// ElemID, if set, gives the SVG id of each element (nodes then edges,
	// as indexed in the level), so that a report can recolor it.
	ElemID func(kind, i int) string
	// LoopHref, if set, gives the link target of a loop node.
	LoopHref func(loop int) string
	// NoLegend leaves out the title and legend, for pages that show them
	// around the drawing.
	NoLegend bool
	// Scale is the value drawn at the red end for nodes and edges alike,
	// e.g. RankScale of the rank's levels so that colors compare across
	// levels; 0 scales the level on its own, nodes and edges separately.
	Scale float64
	// NodeStyle, if set, gives node i's fill color instead of Metric's
	// and a line added to its tooltip; edges are then drawn gray.
	NodeStyle func(i int) (fill, note string)
}

// Color scales of the graphs: one for the whole rank (ScaleRank, the
// default) or one per level (ScaleLevel).
const (
	ScaleRank  = "rank"
	ScaleLevel = "level"
)

// RankScale is the largest value of metric over all elements of all
// levels (MPI_Init nodes left out), the red end of a rank-wide color
// scale; 0 if there is none.
func RankScale(levels []analysis.Level, metrics []string, metric string) float64 {
	k := analysis.MetricIndex(metrics, metric)
	if k < 0 {
		return 0
	}
	m := 0.0
	for i := range levels {
		m = max(m, maxOf(levels[i].Nodes, k), maxOf(levels[i].Edges, k))
	}
	return m
}

// startUpColor fills MPI_Init nodes: their start-up cost is outside the
// color scale, as it is outside the shares of mpiflow stats and loops, so
// that one long MPI_Init does not turn every other node yellow.
const startUpColor = "#e4e4e4"

// maxOf returns the largest non-NaN value of metric k over elems (0 if
// none), start-up nodes left out.
func maxOf(elems []analysis.Elem, k int) float64 {
	m := 0.0
	for i := range elems {
		if elems[i].StartUp() {
			continue
		}
		if v := elems[i].Vals[k]; !math.IsNaN(v) && v > m {
			m = v
		}
	}
	return m
}

func heatOf(v, max float64) string {
	if math.IsNaN(v) {
		return "#ffffff"
	}
	if max <= 0 {
		return Heat(0)
	}
	return Heat(v / max)
}

// DOT returns the DOT text of a level, colored by opt.Metric on the
// yellow-to-red gradient up to opt.Scale (or the level's own maxima).
// Back edges are dashed.
func DOT(lg *analysis.Level, metrics []string, opt DOTOptions) string {
	if opt.Metric == "" {
		opt.Metric = analysis.MetricTime
	}
	k := analysis.MetricIndex(metrics, opt.Metric)
	g := newDOTGraph()
	nmax, emax, legend := dotScale(lg, k, opt)
	if !opt.NoLegend {
		g.Attr("label", legend)
	}
	nodes := make([]dot.Node, len(lg.Nodes))
	for i := range lg.Nodes {
		nodes[i] = dotNode(g, lg, i, metrics, k, nmax, opt)
	}
	for i := range lg.Edges {
		dotEdge(g, lg, i, nodes, metrics, k, emax, opt)
	}
	return g.String()
}

// newDOTGraph is an empty graph with the fonts and spacing of every
// drawing.
func newDOTGraph() *dot.Graph {
	g := dot.NewGraph(dot.Directed)
	g.Attr("rankdir", "TB")
	g.Attr("nodesep", "0.25")
	g.Attr("ranksep", "0.35")
	g.Attr("fontname", "Helvetica")
	g.Attr("fontsize", "11")
	g.Attr("labelloc", "t")
	g.NodeInitializer(func(n dot.Node) {
		n.Attr("fontname", "Helvetica")
		n.Attr("fontsize", "10")
	})
	g.EdgeInitializer(func(e dot.Edge) {
		e.Attr("fontname", "Helvetica")
		e.Attr("fontsize", "9")
	})
	return g
}

// dotScale is the value of metric k coloured full red on the nodes and
// on the edges, and the legend that says so.
func dotScale(lg *analysis.Level, k int, opt DOTOptions) (nmax, emax float64, legend string) {
	switch {
	case opt.Scale > 0:
		nmax, emax = opt.Scale, opt.Scale
		legend = fmt.Sprintf("color: %s, yellow = 0, red = %s on every level; MPI_Init grey", opt.Metric,
			formatMetric(opt.Metric, opt.Scale))
	default:
		if k >= 0 {
			nmax, emax = maxOf(lg.Nodes, k), maxOf(lg.Edges, k)
		}
		legend = fmt.Sprintf("color: %s, yellow = 0, red = %s (nodes), %s (edges) of this level; MPI_Init grey", opt.Metric,
			formatMetric(opt.Metric, nmax), formatMetric(opt.Metric, emax))
	}
	if opt.Title != "" {
		legend = opt.Title + "\n" + legend
	}
	return nmax, emax, legend
}

// dotNode draws node i of the level.
func dotNode(g *dot.Graph, lg *analysis.Level, i int, metrics []string, k int, nmax float64, opt DOTOptions) dot.Node {
	e := &lg.Nodes[i]
	n := g.Node(fmt.Sprintf("n%d", i))
	n.Attr("label", Label(e, metrics))
	tip := Tooltip(e, metrics, lg)
	fill := "#ffffff"
	switch {
	case opt.NodeStyle != nil:
		var note string
		fill, note = opt.NodeStyle(i)
		tip += "\n" + note
	case e.StartUp():
		fill = startUpColor
	case k >= 0:
		fill = heatOf(e.Vals[k], nmax)
	}
	n.Attr("tooltip", tip)
	n.Attr("fillcolor", fill)
	n.Attr("fontcolor", TextColor(fill))
	if e.Kind == analysis.KindLoop {
		n.Attr("shape", "box3d")
		n.Attr("style", "filled,bold")
		if opt.LoopHref != nil {
			n.Attr("href", opt.LoopHref(e.Loop))
		}
	} else {
		n.Attr("shape", "box")
		n.Attr("style", "rounded,filled")
	}
	if i == lg.Initial {
		n.Attr("peripheries", "2")
	}
	if opt.ElemID != nil {
		n.Attr("id", opt.ElemID(e.Kind, i))
	}
	return n
}

// dotEdge draws edge i of the level between its nodes.
func dotEdge(g *dot.Graph, lg *analysis.Level, i int, nodes []dot.Node, metrics []string, k int, emax float64, opt DOTOptions) {
	e := &lg.Edges[i]
	ed := g.Edge(nodes[e.Src], nodes[e.Dst])
	ed.Attr("label", Label(e, metrics))
	ed.Attr("tooltip", Tooltip(e, metrics, lg))
	color := "#555555"
	if k >= 0 && !math.IsNaN(e.Vals[k]) && opt.NodeStyle == nil {
		color = EdgeColor(heatOf(e.Vals[k], emax))
	}
	ed.Attr("color", color)
	ed.Attr("penwidth", "2")
	if e.Back {
		// Back edges start the next iteration: drawn dashed, going
		// up, without pulling the layout out of its top-down order.
		ed.Attr("style", "dashed")
		ed.Attr("constraint", "false")
	}
	if opt.ElemID != nil {
		ed.Attr("id", opt.ElemID(analysis.KindEdge, i))
	}
}

// Elements and attributes that SanitizeSVG keeps: what Graphviz uses to
// draw, nothing that runs script or loads anything. Graphviz's own <title>
// elements (internal node names) are dropped.
var (
	svgElems = map[string]bool{"svg": true, "g": true, "path": true, "polygon": true,
		"polyline": true, "ellipse": true, "circle": true, "text": true, "a": true, "line": true, "rect": true}
	svgAttrs = map[string]bool{"id": true, "class": true, "x": true, "y": true, "width": true, "height": true,
		"viewBox": true, "transform": true, "d": true, "points": true, "cx": true, "cy": true, "rx": true,
		"ry": true, "r": true, "fill": true, "stroke": true, "stroke-width": true, "stroke-dasharray": true,
		"font-family": true, "font-size": true, "font-weight": true, "font-style": true, "text-anchor": true,
		"fill-opacity": true, "stroke-opacity": true, "x1": true, "y1": true, "x2": true, "y2": true,
		"preserveAspectRatio": true}
)

// SanitizeSVG re-serializes an SVG document keeping only the elements and
// attributes needed to draw it, with every value escaped: it can be put
// into an HTML page whatever the labels contain. Link targets are kept only
// when they are fragments (#...); link titles become <title> children, which
// browsers show on hover.
func SanitizeSVG(doc []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Entity = xml.HTMLEntity
	var b strings.Builder
	skip := 0 // depth inside a dropped element
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("sanitize svg: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skip > 0 || !svgElems[t.Name.Local] {
				skip++
				continue
			}
			b.WriteString("<" + t.Name.Local)
			title := ""
			for _, a := range t.Attr {
				name, val := a.Name.Local, a.Value
				switch {
				case a.Name.Space == "xmlns" || name == "xmlns":
					continue
				case name == "href":
					if strings.HasPrefix(val, "#") {
						writeAttr(&b, "href", val)
					}
					continue
				case name == "title" && t.Name.Local == "a":
					title = val
					continue
				case !svgAttrs[name] || strings.Contains(strings.ToLower(val), "url("):
					continue
				}
				writeAttr(&b, name, val)
			}
			b.WriteString(">")
			if title != "" {
				b.WriteString("<title>")
				xml.EscapeText(&b, []byte(title))
				b.WriteString("</title>")
			}
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			if skip > 0 {
				skip--
				continue
			}
			if len(stack) == 0 {
				return "", errors.New("sanitize svg: unbalanced elements")
			}
			b.WriteString("</" + stack[len(stack)-1] + ">")
			stack = stack[:len(stack)-1]
		case xml.CharData:
			switch {
			case skip > 0 || len(stack) == 0:
			case len(bytes.TrimSpace(t)) == 0:
				b.WriteByte('\n') // layout whitespace between elements
			default:
				xml.EscapeText(&b, t)
			}
		}
	}
	if len(stack) != 0 {
		return "", errors.New("sanitize svg: unclosed elements")
	}
	return b.String(), nil
}

func writeAttr(b *strings.Builder, name, val string) {
	b.WriteString(" " + name + `="`)
	xml.EscapeText(b, []byte(val))
	b.WriteString(`"`)
}
