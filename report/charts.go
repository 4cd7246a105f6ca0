package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mpiflow/analysis"
	"mpiflow/internal/units"
)

// Chart is an SVG chart drawn by the report template: geometry is computed
// here, every string is escaped by html/template.
type Chart struct {
	ID, Title, Caption string
	// Wide charts take the page's width.
	Wide   bool
	W, H   float64
	Rects  []Rect
	Lines  []Line
	Polys  []Poly
	Texts  []Text
	Legend []LegendItem
	// Summary sums up per-rank values in words where there are too many
	// ranks to read them one by one.
	Summary string
}

// Rect is a filled rectangle with a hover title.
type Rect struct {
	X, Y, W, H  float64
	Fill, Title string
	Opacity     float64
	// Ranks are the ranks a hover column of a per-rank chart stands for
	// ("0-3,8"), which a click shows in the graphs and the timeline.
	Ranks string
}

// Line is an axis or grid line.
type Line struct {
	X1, Y1, X2, Y2 float64
	Class          string
}

// Poly is a polyline series; Class "dashed" draws a reference line.
type Poly struct {
	Points, Stroke, Title string
	Class                 string
}

// Text is a label; Anchor is start, middle or end; Rotate turns it by -90°.
type Text struct {
	X, Y         float64
	Anchor, Text string
	Class        string
	Rotate       bool
}

// LegendItem is one entry of a chart legend; Dashed for a dashed line.
type LegendItem struct {
	Color, Label string
	Dashed       bool
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
	calls  []string           // by descending total time
	total  map[string]float64 // s per call over all ranks
	count  map[string]int64   // calls per call name
	ranks  []rankTimes        // in rank order
	sizes  []analysis.CallSizes
	colors map[string]string
}

// rankTimes are the values of one rank (block) for the per-rank charts.
type rankTimes struct {
	rank        int
	label, host string
	order       int     // the index in rank (and thread) order
	mpi         float64 // s inside MPI after MPI_Init
	user, sys   float64 // s of user and system CPU time
	wall        float64 // s after MPI_Init
	rss         float64 // bytes, peak resident memory
	perCall     map[string]float64
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

// sizeTick names the upper bound of a message size bucket: "none" for
// the calls that moved no data, else a power of two ("256 B", "4 KiB").
func sizeTick(max int64) string {
	if max == 0 {
		return "none"
	}
	return strings.Replace(units.Bytes(float64(max)), ".0 ", " ", 1)
}

// sizeRange names a bucket for hover texts.
func sizeRange(max int64) string {
	switch max {
	case 0:
		return "no data"
	case 1:
		return "up to 1 B"
	}
	return fmt.Sprintf("over %s up to %s", sizeTick(max/2), sizeTick(max))
}

// chartBySize is view (b): the time of each call that moves data by
// message size, one row per call so that no call hides another. A node's
// calls are put at its mean message size.
func chartBySize(ct *callTimes) Chart {
	const maxRows, rowH, labelW, totalW = 8, 30.0, 110.0, 64.0
	rows := ct.sizes
	more := 0
	if len(rows) > maxRows {
		more = len(rows) - maxRows
		rows = rows[:maxRows]
	}
	c := Chart{ID: "chart-sizes", Title: "Time by message size",
		Caption: "Time of the calls that move data by message size, summed over ranks: a call site's calls count at their mean size, in power-of-two bins. One row per call, its bars relative to the row's largest and its total time on the right; calls that move no data are left out.",
		W:       640, H: padT + 36 + rowH*float64(max(len(rows), 1))}
	if more > 0 {
		c.Caption += fmt.Sprintf(" The %d calls with the most time are shown, %d more move data.", maxRows, more)
	}
	if len(rows) == 0 {
		c.Texts = append(c.Texts, Text{X: c.W / 2, Y: padT + rowH/2, Anchor: "middle", Text: "no call moved data", Class: "note"})
		return c
	}
	// Columns: "none" if some shown call has sites without data, then
	// every power of two from the smallest to the largest bucket.
	none := false
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, r := range rows {
		for _, b := range r.Buckets {
			if b.Max == 0 {
				none = true
				continue
			}
			lo, hi = min(lo, b.Max), max(hi, b.Max)
		}
	}
	var cols []int64
	if none {
		cols = append(cols, 0)
	}
	for v := lo; v <= hi && v > 0; v *= 2 {
		cols = append(cols, v)
	}
	col := make(map[int64]int, len(cols))
	for i, v := range cols {
		col[v] = i
	}
	x0 := labelW
	plotW := c.W - x0 - totalW
	cw := plotW / float64(len(cols))
	bottom := padT + rowH*float64(len(rows))
	c.Lines = append(c.Lines, Line{X1: x0, Y1: bottom, X2: x0 + plotW, Y2: bottom, Class: "axis"})
	step := max(1, int(math.Ceil(38/cw)))
	for i, v := range cols {
		if i%step == 0 {
			c.Texts = append(c.Texts, Text{X: x0 + cw*(float64(i)+0.5), Y: bottom + 14, Anchor: "middle", Text: sizeTick(v), Class: "tick"})
		}
	}
	c.Texts = append(c.Texts, Text{X: x0 + plotW/2, Y: bottom + 30, Anchor: "middle", Text: "mean message size of the call site (upper bound of the bin)", Class: "axislabel"})
	for k, r := range rows {
		top := padT + rowH*float64(k)
		color := ct.colors[r.Call]
		c.Lines = append(c.Lines, Line{X1: x0, Y1: top + rowH, X2: x0 + plotW, Y2: top + rowH, Class: "grid"})
		c.Texts = append(c.Texts, Text{X: x0 - 6, Y: top + rowH/2 + 4, Anchor: "end", Text: r.Call, Class: "cat"})
		c.Texts = append(c.Texts, Text{X: x0 + plotW + 4, Y: top + rowH/2 + 4, Anchor: "start", Text: units.NS(r.Time) + " s", Class: "val"})
		var most int64
		for _, b := range r.Buckets {
			most = max(most, b.Time)
		}
		for _, b := range r.Buckets {
			h := (rowH - 6) * float64(b.Time) / float64(max(most, 1))
			h = math.Max(h, 1)
			c.Rects = append(c.Rects, Rect{X: x0 + cw*float64(col[b.Max]) + cw*0.1, Y: top + rowH - h, W: math.Max(cw*0.8, 1), H: h, Fill: color,
				Title: fmt.Sprintf("%s, message size %s: %s s in %d calls (%.1f%% of its time)", r.Call, sizeRange(b.Max),
					units.NS(b.Time), b.Count, analysis.Percent(b.Time, r.Time))})
		}
	}
	return c
}

// rankColumns splits n ranks into columns for hover texts: one rank per
// column when they fit in width pixels, else runs of consecutive ranks.
func rankColumns(n int, width float64) [][2]int {
	k := max(1, int(math.Ceil(float64(n)/math.Max(width, 1))))
	var out [][2]int
	for lo := 0; lo < n; lo += k {
		out = append(out, [2]int{lo, min(lo+k, n)})
	}
	return out
}

// rankSeries is one per-rank value drawn by drawRanks.
type rankSeries struct {
	name, color string
	get         func(r *rankTimes) float64
	dashed      bool // a reference line, never bars
}

// rankAxis draws the rank ticks under a per-rank chart whose columns are
// bw wide from padL.
func (c *Chart) rankAxis(ranks []rankTimes, bw float64) {
	step := max(1, int(math.Ceil(28/bw)))
	for i := 0; i < len(ranks); i += step {
		c.Texts = append(c.Texts, Text{X: padL + bw*(float64(i)+0.5), Y: c.H - padB + 14, Anchor: "middle", Text: tickRank(ranks[i].label), Class: "tick"})
	}
	c.xLabel("rank")
}

// drawRanks draws series per rank in rank order on one scale: grouped
// bars when each rank's group is at least 3 px a bar, else lines; dashed
// series are lines. hover titles a column of ranks.
func (c *Chart) drawRanks(ranks []rankTimes, top float64, series []rankSeries, hover func(lo, hi int) string) {
	n := len(ranks)
	plotW, plotH := c.W-padL-padR, c.H-padT-padB
	bw := plotW / float64(max(n, 1))
	yOf := func(v float64) float64 { return padT + plotH*(1-v/top) }
	var bars []rankSeries
	for _, s := range series {
		if !s.dashed {
			bars = append(bars, s)
		}
	}
	asBars := len(bars) > 0 && bw*0.8/float64(len(bars)) >= 3
	for _, s := range series {
		if asBars && !s.dashed {
			continue
		}
		var pts []byte
		for i := range ranks {
			pts = fmt.Appendf(pts, "%.1f,%.1f ", padL+bw*(float64(i)+0.5), yOf(s.get(&ranks[i])))
		}
		p := Poly{Points: string(pts), Stroke: s.color, Title: s.name}
		if s.dashed {
			p.Class = "dashed"
		}
		c.Polys = append(c.Polys, p)
	}
	if asBars {
		w := bw * 0.8 / float64(len(bars))
		for i := range ranks {
			for k, s := range bars {
				v := s.get(&ranks[i])
				y := yOf(v)
				c.Rects = append(c.Rects, Rect{X: padL + bw*(float64(i)+0.1) + w*float64(k), Y: y, W: w, H: padT + plotH - y, Fill: s.color})
			}
		}
	}
	for _, col := range rankColumns(n, plotW) {
		c.Rects = append(c.Rects, Rect{X: padL + bw*float64(col[0]), Y: padT, W: bw * float64(col[1]-col[0]), H: plotH,
			Fill: "#000000", Opacity: 0.0001, Title: hover(col[0], col[1]), Ranks: rankList(ranks[col[0]:col[1]])})
	}
	c.rankAxis(ranks, bw)
}

// chartBalance is view (c): user and system CPU time, MPI time and wall
// time of every rank, in rank order on one scale.
func chartBalance(ct *callTimes) Chart {
	c := Chart{ID: "chart-balance", Title: "Load balance by rank", Wide: true, W: 1220, H: 320,
		Caption: "Per rank, in rank order and on one scale: the user and system CPU time of its process over its whole life (MPI_Init included), its time inside MPI after MPI_Init, and its wall time after MPI_Init (dashed). MPI libraries that poll while they wait count that wait as user time too. Hover a rank for its values."}
	series := []rankSeries{
		{name: "user CPU time", color: UserColor, get: func(r *rankTimes) float64 { return r.user }},
		{name: "system CPU time", color: SystemColor, get: func(r *rankTimes) float64 { return r.sys }},
		{name: "MPI time", color: MPITimeColor, get: func(r *rankTimes) float64 { return r.mpi }},
		{name: "wall time", color: "#7f7f7f", get: func(r *rankTimes) float64 { return r.wall }, dashed: true},
	}
	mx := 0.0
	maxOf := make([]float64, len(series))
	for k, s := range series {
		for i := range ct.ranks {
			maxOf[k] = math.Max(maxOf[k], s.get(&ct.ranks[i]))
		}
		mx = math.Max(mx, maxOf[k])
	}
	top := c.yAxis(mx, "time (s)")
	c.drawRanks(ct.ranks, top, series, func(lo, hi int) string {
		var b strings.Builder
		b.WriteString(rankNames(ct.ranks, lo, hi))
		for _, s := range series {
			fmt.Fprintf(&b, "\n%s: %s s", s.name, valueSpan(ct.ranks[lo:hi], s.get, units.Seconds))
		}
		return b.String()
	})
	for k, s := range series {
		c.Legend = append(c.Legend, LegendItem{Color: s.color, Label: fmt.Sprintf("%s (max %s s)", s.name, units.Seconds(maxOf[k])), Dashed: s.dashed})
	}
	if len(ct.ranks) > summaryRanks {
		wall, mpi := series[3].get, series[2].get
		c.Summary = fmt.Sprintf("%d ranks. Wall time after MPI_Init: %s. MPI time: %s. Slowest: %s.", len(ct.ranks),
			spread(ct.ranks, wall), spread(ct.ranks, mpi), topRanks(ct.ranks, wall, 5))
	}
	return c
}

// summaryRanks is the number of ranks beyond which per-rank charts are
// summed up in words (Chart.Summary): their ranks can no longer be told
// apart by eye.
const summaryRanks = 32

// spread gives the least, median and largest value over ranks, with the
// ranks of the extremes.
func spread(ranks []rankTimes, get func(r *rankTimes) float64) string {
	order := ranksBy(ranks, get)
	lo, hi := &ranks[order[len(order)-1]], &ranks[order[0]]
	med := get(&ranks[order[len(order)/2]])
	return fmt.Sprintf("least %s s (%s), median %s s, largest %s s (%s)",
		units.Seconds(get(lo)), lo.label, units.Seconds(med), units.Seconds(get(hi)), hi.label)
}

// topRanks names the k ranks of the largest values, with their values.
func topRanks(ranks []rankTimes, get func(r *rankTimes) float64, k int) string {
	var parts []string
	for _, i := range ranksBy(ranks, get)[:min(k, len(ranks))] {
		parts = append(parts, fmt.Sprintf("%s (%s s)", ranks[i].label, units.Seconds(get(&ranks[i]))))
	}
	return strings.Join(parts, ", ")
}

// ranksBy returns the indexes of ranks by descending value, in rank order
// on ties.
func ranksBy(ranks []rankTimes, get func(r *rankTimes) float64) []int {
	order := make([]int, len(ranks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return get(&ranks[order[a]]) > get(&ranks[order[b]]) })
	return order
}

// chartMemory is the peak resident memory of every rank, in rank order
// under the load balance.
func chartMemory(ct *callTimes) Chart {
	c := Chart{ID: "chart-memory", Title: "Memory by rank", Wide: true, W: 1220, H: 220,
		Caption: "Peak resident memory (max RSS) of each rank's process, in rank order."}
	mx := 0.0
	for i := range ct.ranks {
		mx = math.Max(mx, ct.ranks[i].rss)
	}
	unit, div := "MiB", float64(1<<20)
	if mx >= 10<<30 {
		unit, div = "GiB", 1<<30
	}
	top := c.yAxis(mx/div, "max RSS ("+unit+")")
	if mx == 0 {
		c.Texts = append(c.Texts, Text{X: c.W / 2, Y: padT + (c.H-padT-padB)/2, Anchor: "middle", Text: "memory not recorded", Class: "note"})
	}
	rss := rankSeries{name: "max RSS", color: MemoryColor, get: func(r *rankTimes) float64 { return r.rss / div }}
	c.drawRanks(ct.ranks, top, []rankSeries{rss}, func(lo, hi int) string {
		return rankNames(ct.ranks, lo, hi) + "\nmax RSS: " + valueSpan(ct.ranks[lo:hi], func(r *rankTimes) float64 { return r.rss }, units.Bytes)
	})
	c.Legend = append(c.Legend, LegendItem{Color: rss.color, Label: "max RSS (largest " + units.Bytes(mx) + ")"})
	return c
}

// rankList is the ranks of rs as ranges ("0-3,8").
func rankList(rs []rankTimes) string {
	var ns []int
	for _, r := range rs {
		ns = append(ns, r.rank)
	}
	slices.Sort(ns)
	return analysis.RankRanges(slices.Compact(ns))
}

// rankNames names the ranks lo..hi-1 of a per-rank chart: a range when
// they follow each other in rank order, else the first few.
func rankNames(ranks []rankTimes, lo, hi int) string {
	r := ranks[lo].label
	inOrder := true
	for i := lo + 1; i < hi; i++ {
		inOrder = inOrder && ranks[i].order == ranks[i-1].order+1
	}
	switch {
	case hi-lo > 1 && inOrder:
		r = fmt.Sprintf("%s to %s", r, ranks[hi-1].label)
	case hi-lo > 1:
		const few = 4
		var names []string
		for i := lo; i < min(hi, lo+few); i++ {
			names = append(names, ranks[i].label)
		}
		r = strings.Join(names, ", ")
		if hi-lo > few {
			r += fmt.Sprintf(" and %d more", hi-lo-few)
		}
	}
	if h := ranks[lo].host; h != "" && hi-lo == 1 {
		r += " (" + h + ")"
	}
	return r
}

// valueSpan formats the value of one rank, or the range of several.
func valueSpan(ranks []rankTimes, get func(r *rankTimes) float64, format func(float64) string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range ranks {
		v := get(&ranks[i])
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo == hi {
		return format(lo)
	}
	return format(lo) + " to " + format(hi)
}

// chartPerRank is view (d): MPI time per rank stacked by call, ranks in
// order.
func chartPerRank(ct *callTimes) Chart {
	const maxCalls = 8
	n := len(ct.ranks)
	c := Chart{ID: "chart-ranks", Title: "MPI time per rank by call", Wide: true,
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
		c.Rects = append(c.Rects, Rect{X: x, Y: padT, W: bw, H: plotH, Fill: "#000000", Opacity: 0.0001, Title: title, Ranks: strconv.Itoa(r.rank)})
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
