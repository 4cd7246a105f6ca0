package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"mpiflow/internal/units"
)

// Chart is an SVG chart drawn by the report template: geometry is computed
// here, every string is escaped by html/template.
type Chart struct {
	ID, Title, Caption string
	W, H               float64
	Rects              []Rect
	Lines              []Line
	Polys              []Poly
	Texts              []Text
	Dots               []Dot
	Legend             []LegendItem
}

// Rect is a filled rectangle with a hover title.
type Rect struct {
	X, Y, W, H  float64
	Fill, Title string
	Opacity     float64
}

// Line is an axis or grid line.
type Line struct {
	X1, Y1, X2, Y2 float64
	Class          string
}

// Poly is a polyline series.
type Poly struct {
	Points, Stroke, Title string
}

// Text is a label; Anchor is start, middle or end; Rotate turns it by -90°.
type Text struct {
	X, Y         float64
	Anchor, Text string
	Class        string
	Rotate       bool
}

// Dot is a data point with a hover title.
type Dot struct {
	X, Y        float64
	Fill, Title string
}

// LegendItem is one entry of a chart legend.
type LegendItem struct {
	Color, Label string
}

// Chart margins.
const (
	padL = 70.0
	padR = 20.0
	padT = 16.0
	padB = 46.0
)

// niceStep returns a round tick step for an axis from 0 to max with about n
// ticks.
func niceStep(max float64, n int) float64 {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return 1
	}
	raw := max / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// yAxis adds a vertical value axis with grid lines from 0 to max; it
// returns the axis top value.
func (c *Chart) yAxis(max float64, label string) float64 {
	step := niceStep(max, 5)
	top := math.Ceil(max/step) * step
	if top <= 0 {
		top = step
	}
	plotH := c.H - padT - padB
	for v := 0.0; v <= top*1.0000001; v += step {
		y := padT + plotH*(1-v/top)
		c.Lines = append(c.Lines, Line{X1: padL, Y1: y, X2: c.W - padR, Y2: y, Class: "grid"})
		c.Texts = append(c.Texts, Text{X: padL - 6, Y: y + 4, Anchor: "end", Text: tickLabel(v), Class: "tick"})
	}
	c.Lines = append(c.Lines, Line{X1: padL, Y1: padT, X2: padL, Y2: c.H - padB, Class: "axis"})
	c.Lines = append(c.Lines, Line{X1: padL, Y1: c.H - padB, X2: c.W - padR, Y2: c.H - padB, Class: "axis"})
	c.Texts = append(c.Texts, Text{X: 14, Y: padT + plotH/2, Anchor: "middle", Text: label, Class: "axislabel", Rotate: true})
	return top
}

func (c *Chart) xLabel(label string) {
	c.Texts = append(c.Texts, Text{X: padL + (c.W-padL-padR)/2, Y: c.H - 8, Anchor: "middle", Text: label, Class: "axislabel"})
}

// callTimes is the input of the statistics charts.
type callTimes struct {
	calls  []string             // by descending total time
	total  map[string]float64   // s per call over all ranks
	count  map[string]int64     // calls per call name
	ranks  []rankTimes          // in rank order
	bySize map[string][]float64 // per call, s per size bucket (index: log2 bucket + 1, 0 for 0 bytes)
	colors map[string]string
}

type rankTimes struct {
	label   string
	mpi     float64 // s
	user    float64 // s of user CPU time
	perCall map[string]float64
}

// chartTimePerCall is view (a): each call's share of the MPI time.
func chartTimePerCall(ct *callTimes) Chart {
	const maxRows = 16
	var mpi float64
	for _, c := range ct.calls {
		mpi += ct.total[c]
	}
	rows := ct.calls
	other := 0.0
	if len(rows) > maxRows {
		for _, c := range rows[maxRows-1:] {
			other += ct.total[c]
		}
		rows = rows[:maxRows-1]
	}
	n := len(rows)
	if other > 0 {
		n++
	}
	c := Chart{ID: "chart-calls", Title: "Time per MPI call",
		Caption: "Share of the total MPI time of all ranks spent in each call, from the end of MPI_Init (as IPM).", W: 640, H: padT + padB + 22*float64(max(n, 1))}
	share := func(t float64) float64 {
		if mpi == 0 {
			return 0
		}
		return 100 * t / mpi
	}
	maxShare := 0.0
	for _, r := range rows {
		maxShare = math.Max(maxShare, share(ct.total[r]))
	}
	maxShare = math.Max(maxShare, share(other))
	const labelW = 150.0
	x0 := padL + labelW - 60
	plotW := c.W - x0 - padR - 60
	step := niceStep(maxShare, 5)
	top := math.Max(step, math.Ceil(maxShare/step)*step)
	for v := 0.0; v <= top*1.0000001; v += step {
		x := x0 + plotW*v/top
		c.Lines = append(c.Lines, Line{X1: x, Y1: padT, X2: x, Y2: c.H - padB, Class: "grid"})
		c.Texts = append(c.Texts, Text{X: x, Y: c.H - padB + 14, Anchor: "middle", Text: tickLabel(v), Class: "tick"})
	}
	c.Lines = append(c.Lines, Line{X1: x0, Y1: padT, X2: x0, Y2: c.H - padB, Class: "axis"})
	c.Texts = append(c.Texts, Text{X: x0 + plotW/2, Y: c.H - 8, Anchor: "middle", Text: "% of MPI time", Class: "axislabel"})
	bar := func(i int, name, color string, t float64, count int64) {
		y := padT + 22*float64(i) + 3
		w := plotW * share(t) / top
		c.Rects = append(c.Rects, Rect{X: x0, Y: y, W: math.Max(w, 0.5), H: 16, Fill: color,
			Title: fmt.Sprintf("%s: %s s, %.2f%% of MPI time, %d calls", name, units.Seconds(t), share(t), count)})
		c.Texts = append(c.Texts, Text{X: x0 - 6, Y: y + 12, Anchor: "end", Text: name, Class: "cat"})
		c.Texts = append(c.Texts, Text{X: x0 + w + 4, Y: y + 12, Anchor: "start", Text: fmt.Sprintf("%.1f%%", share(t)), Class: "val"})
	}
	for i, r := range rows {
		bar(i, r, ct.colors[r], ct.total[r], ct.count[r])
	}
	if other > 0 {
		var cnt int64
		for _, r := range ct.calls[maxRows-1:] {
			cnt += ct.count[r]
		}
		bar(len(rows), "other calls", OtherColor, other, cnt)
	}
	return c
}

func sizeLabel(bucket int) string {
	if bucket == 0 {
		return "0"
	}
	return units.Bytes(math.Pow(2, float64(bucket-1)))
}

// chartBySize is view (b): cumulative time of the main calls over message
// size. A node's calls are put at its mean message size.
func chartBySize(ct *callTimes) Chart {
	c := Chart{ID: "chart-sizes", Title: "Cumulative time by message size",
		Caption: "For the calls that move data, the time spent in calls up to a message size (each call site's mean size), summed over ranks.",
		W:       640, H: 300}
	var calls []string
	maxB := 0
	maxT := 0.0
	for _, name := range ct.calls {
		b := ct.bySize[name]
		moves := false
		for i := 1; i < len(b); i++ {
			if b[i] > 0 {
				moves = true
			}
		}
		if !moves {
			continue
		}
		calls = append(calls, name)
		maxB = max(maxB, len(b)-1)
		if len(calls) == 6 {
			break
		}
	}
	for _, name := range calls {
		s := 0.0
		for _, v := range ct.bySize[name] {
			s += v
		}
		maxT = math.Max(maxT, s)
	}
	top := c.yAxis(maxT, "cumulative time (s)")
	c.xLabel("message size (bytes, log scale)")
	plotW, plotH := c.W-padL-padR, c.H-padT-padB
	nb := max(maxB, 1)
	xOf := func(b int) float64 { return padL + plotW*float64(b)/float64(nb) }
	yOf := func(t float64) float64 { return padT + plotH*(1-t/top) }
	stepLbl := max(1, (nb+1)/8)
	for b := 0; b <= nb; b += stepLbl {
		c.Texts = append(c.Texts, Text{X: xOf(b), Y: c.H - padB + 14, Anchor: "middle", Text: sizeLabel(b), Class: "tick"})
	}
	if len(calls) == 0 {
		c.Texts = append(c.Texts, Text{X: padL + plotW/2, Y: padT + plotH/2, Anchor: "middle", Text: "no call moved data", Class: "note"})
	}
	for _, name := range calls {
		b := ct.bySize[name]
		total := 0.0
		for _, v := range b {
			total += v
		}
		var pts []byte
		cum := 0.0
		for i := 0; i <= nb; i++ {
			prev := cum
			if i < len(b) {
				cum += b[i]
			}
			if i > 0 {
				pts = fmt.Appendf(pts, "%.1f,%.1f ", xOf(i), yOf(prev))
			}
			pts = fmt.Appendf(pts, "%.1f,%.1f ", xOf(i), yOf(cum))
			if i < len(b) && b[i] > 0 {
				c.Dots = append(c.Dots, Dot{X: xOf(i), Y: yOf(cum), Fill: ct.colors[name],
					Title: fmt.Sprintf("%s up to %s: %s s (%.1f%% of its time)", name, sizeLabel(i), units.Seconds(cum), 100*cum/math.Max(total, 1e-300))})
			}
		}
		c.Polys = append(c.Polys, Poly{Points: string(pts), Stroke: ct.colors[name], Title: name})
		c.Legend = append(c.Legend, LegendItem{Color: ct.colors[name], Label: name})
	}
	return c
}

// chartBalance is view (c): user CPU time and MPI time per rank, each
// sorted ascending, as % of its maximum.
func chartBalance(ct *callTimes) Chart {
	c := Chart{ID: "chart-balance", Title: "Load balance",
		Caption: "User CPU time and MPI time (after MPI_Init) per rank, each sorted ascending, as % of its largest value.", W: 640, H: 300}
	top := c.yAxis(100, "% of maximum")
	c.xLabel("ranks, sorted by value")
	plotW, plotH := c.W-padL-padR, c.H-padT-padB
	n := len(ct.ranks)
	series := []struct {
		name, color string
		get         func(r *rankTimes) float64
	}{
		{"user CPU time", "#2ca02c", func(r *rankTimes) float64 { return r.user }},
		{"MPI time", "#d62728", func(r *rankTimes) float64 { return r.mpi }},
	}
	for _, s := range series {
		idx := make([]int, n)
		mx := 0.0
		for i := range idx {
			idx[i] = i
			mx = math.Max(mx, s.get(&ct.ranks[i]))
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.get(&ct.ranks[idx[a]]) < s.get(&ct.ranks[idx[b]]) })
		var pts []byte
		for k, i := range idx {
			v := 0.0
			if mx > 0 {
				v = 100 * s.get(&ct.ranks[i]) / mx
			}
			x := padL + plotW*(float64(k)+0.5)/float64(max(n, 1))
			y := padT + plotH*(1-v/top)
			pts = fmt.Appendf(pts, "%.1f,%.1f ", x, y)
			if n <= 256 {
				c.Dots = append(c.Dots, Dot{X: x, Y: y, Fill: s.color,
					Title: fmt.Sprintf("%s %s: %s s (%.1f%% of max)", ct.ranks[i].label, s.name, units.Seconds(s.get(&ct.ranks[i])), v)})
			}
		}
		c.Polys = append(c.Polys, Poly{Points: string(pts), Stroke: s.color, Title: fmt.Sprintf("%s, max %s s", s.name, units.Seconds(mx))})
		c.Legend = append(c.Legend, LegendItem{Color: s.color, Label: fmt.Sprintf("%s (max %s s)", s.name, units.Seconds(mx))})
	}
	return c
}

// chartPerRank is view (d): MPI time per rank stacked by call, ranks in
// order.
func chartPerRank(ct *callTimes) Chart {
	const maxCalls = 8
	n := len(ct.ranks)
	c := Chart{ID: "chart-ranks", Title: "MPI time per rank by call",
		Caption: "MPI time of each rank after MPI_Init, stacked by call (largest calls first), ranks in order.", W: 1220, H: 320}
	mx := 0.0
	for i := range ct.ranks {
		mx = math.Max(mx, ct.ranks[i].mpi)
	}
	top := c.yAxis(mx, "MPI time (s)")
	c.xLabel("rank")
	plotW, plotH := c.W-padL-padR, c.H-padT-padB
	bw := plotW / float64(max(n, 1))
	shown := ct.calls
	if len(shown) > maxCalls {
		shown = shown[:maxCalls]
	}
	stepLbl := max(1, n/16)
	for i := range ct.ranks {
		r := &ct.ranks[i]
		x := padL + bw*float64(i)
		y := padT + plotH
		rest := r.mpi
		title := fmt.Sprintf("%s: MPI %s s", r.label, units.Seconds(r.mpi))
		add := func(name, color string, t float64) {
			if t <= 0 {
				return
			}
			h := plotH * t / top
			y -= h
			c.Rects = append(c.Rects, Rect{X: x, Y: y, W: math.Max(bw*0.85, 0.3), H: h, Fill: color})
			title += fmt.Sprintf("\n%s: %s s", name, units.Seconds(t))
		}
		for _, name := range shown {
			t := r.perCall[name]
			rest -= t
			add(name, ct.colors[name], t)
		}
		add("other calls", OtherColor, rest)
		c.Rects = append(c.Rects, Rect{X: x, Y: padT, W: bw, H: plotH, Fill: "#000000", Opacity: 0.0001, Title: title})
		if i%stepLbl == 0 {
			c.Texts = append(c.Texts, Text{X: x + bw/2, Y: c.H - padB + 14, Anchor: "middle", Text: tickRank(r.label), Class: "tick"})
		}
	}
	for _, name := range shown {
		c.Legend = append(c.Legend, LegendItem{Color: ct.colors[name], Label: name})
	}
	if len(ct.calls) > maxCalls {
		c.Legend = append(c.Legend, LegendItem{Color: OtherColor, Label: "other calls"})
	}
	return c
}

// tickRank shortens "rank 12" to "12" for axis ticks.
func tickRank(label string) string {
	var n int
	if _, err := fmt.Sscanf(label, "rank %d", &n); err == nil {
		return strconv.Itoa(n)
	}
	return label
}
