package report

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"mpiflow/analysis"
)

// Colors of the comparison: the ends of the diverging scale of ratios
// (those of the rank comparison's script: blue where B is faster, red
// where slower, full at twice or half the time), its neutral middle,
// which noise gets too, and the items only in one run.
var (
	fasterRGB  = [3]float64{33, 102, 172}
	slowerRGB  = [3]float64{178, 24, 43}
	neutralRGB = [3]float64{247, 247, 247}
)

const (
	newColor    = "#c2a5cf" // only in B
	goneColor   = "#bababa" // only in A
	noDataColor = "#ffffff" // not compared (no item)
)

// maxCompareLevels bounds the levels drawn per group in the comparison;
// the graphs section has them all.
const maxCompareLevels = 12

// ratioColor is the color of ratio r (B over A) on the diverging scale,
// neutral at 1 and full at 2 or 1/2 and beyond.
func ratioColor(r float64) string {
	if r <= 0 || math.IsNaN(r) {
		return rgbHex(neutralRGB[0], neutralRGB[1], neutralRGB[2])
	}
	f := math.Max(-1, math.Min(1, math.Log2(r)))
	end := slowerRGB
	if f < 0 {
		end = fasterRGB
	}
	t := math.Abs(f)
	mix := func(k int) float64 { return neutralRGB[k] + (end[k]-neutralRGB[k])*t }
	return rgbHex(mix(0), mix(1), mix(2))
}

// itemColor is the color of a compared item by its verdict: new and gone
// their own, noise and the launcher's calls neutral, a change its ratio's.
func itemColor(it *analysis.DiffItem) string {
	if it == nil {
		return noDataColor
	}
	if it.Launcher {
		return ratioColor(1)
	}
	switch it.Verdict {
	case analysis.StatusNew:
		return newColor
	case analysis.StatusGone:
		return goneColor
	case "noise":
		return ratioColor(1)
	}
	return ratioColor(it.Ratio)
}

// ratioText is an item's ratio for people ("x1.25"), "-" without one.
func ratioText(it *analysis.DiffItem) string {
	if it == nil || it.Ratio <= 0 {
		return "-"
	}
	return "x" + strconv.FormatFloat(it.Ratio, 'f', 2, 64)
}

// swatch is one entry of a color legend.
type swatch struct {
	Color, Label string
}

// ratioLegend is the legend of the comparison's colors.
func ratioLegend() []swatch {
	return []swatch{{ratioColor(0.5), "x0.5 or faster"}, {ratioColor(0.75), "x0.75"}, {ratioColor(1), "x1 or noise"},
		{ratioColor(1 / 0.75), "x1.33"}, {ratioColor(2), "x2 or slower"}, {newColor, "new in B"}, {noDataColor, "not compared"}}
}

// compareGraphs draws the levels of this run's (B's) groups matched with
// the baseline's, their nodes colored by the ratio of their time B over
// A (ratioDOT), and says what it left out or could not draw.
func compareGraphs(ctx context.Context, d *analysis.JobDiff, job *analysis.Job, opt *Options) ([]groupView, string) {
	var out []groupView
	var note string
	for _, t := range d.Trees {
		if len(out) == opt.MaxGroups {
			note = fmt.Sprintf("The graphs of the first %d matched groups are drawn.", opt.MaxGroups)
			break
		}
		g := d.Groups[t.Group].B
		item := compareItems(d, &t)
		gr := &job.Groups[g]
		gv := groupView{Index: g, Number: g + 1, Members: job.Members(g), Size: len(gr.Members), Rendered: true}
		var dots []string
		var dotLevel []int
		for l := range gr.Levels {
			lg := &gr.Levels[l]
			lv := levelView{Loop: lg.Loop, Name: lg.Name, Header: lg.Header}
			switch {
			case l >= maxCompareLevels:
				lv.Err = fmt.Sprintf("not drawn here: more than %d loops in this rank group (the graphs section has them all)", maxCompareLevels)
			case len(lg.Nodes) > opt.MaxNodes:
				lv.Err = fmt.Sprintf("not drawn: %d nodes, more than %d", len(lg.Nodes), opt.MaxNodes)
			default:
				lv.DOT = ratioDOT(lg, job.Metrics, item, func(loop int) string { return fmt.Sprintf("#cmp-lv-%d-%d", g, loop) })
				dots = append(dots, lv.DOT)
				dotLevel = append(dotLevel, l)
			}
			gv.Levels = append(gv.Levels, lv)
		}
		if err := renderGroup(ctx, opt.renderer(), &gv, dots, dotLevel); err != nil {
			note = "Graphviz failed or is missing: the graphs are given as DOT text."
		}
		out = append(out, gv)
	}
	return out, note
}

// compareItems returns the item of d that compares an element of B's
// group of the aligned tree t: a call by its call and call site label, as
// the diff's call items are, a loop by its aligned row; nil if none.
func compareItems(d *analysis.JobDiff, t *analysis.DiffTree) func(e *analysis.Elem) *analysis.DiffItem {
	calls := map[[2]string]*analysis.DiffItem{}
	for i := range d.Items {
		if it := &d.Items[i]; it.Kind == analysis.ItemCall {
			calls[[2]string{it.Call, it.Site}] = it
		}
	}
	loopsB := map[int]*analysis.DiffItem{}
	for _, r := range t.Rows {
		if r.BLoop > 0 && r.Item >= 0 {
			loopsB[r.BLoop] = &d.Items[r.Item]
		}
	}
	return func(e *analysis.Elem) *analysis.DiffItem {
		if e.Kind == analysis.KindLoop {
			return loopsB[e.Loop]
		}
		site := e.Where
		if e.Site < 0 {
			site = ""
		}
		return calls[[2]string{e.Call, site}]
	}
}

// ratioDOT is the DOT text of level lg with each node colored by its
// item's ratio and verdict (itemColor), which its tooltip adds; href links
// loop nodes.
func ratioDOT(lg *analysis.Level, metrics []string, item func(*analysis.Elem) *analysis.DiffItem, href func(loop int) string) string {
	return DOT(lg, metrics, DOTOptions{NoLegend: true, LoopHref: href,
		NodeStyle: func(i int) (string, string) {
			it := item(&lg.Nodes[i])
			if it == nil {
				return noDataColor, "not compared"
			}
			return itemColor(it), "B / A: " + ratioText(it) + " (" + it.Verdict + ")"
		}})
}
