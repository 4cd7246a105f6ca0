package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"mpiflow/aggregate"
	"mpiflow/flowgraph"
)

// ocelotlData is the spatiotemporal overview embedded in the report: the
// hierarchy and, per precomputed view (a time window cut into a number
// of slices), the microscopic model (to describe any aggregate on hover)
// and the best partition of every significant p. The page switches
// between views; it does not aggregate.
type ocelotlData struct {
	States  []string `json:"states"`
	Colors  []string `json:"colors"`
	Nodes   []hnode  `json:"nodes"`
	Grouped bool     `json:"grouped"`
	Rows    int      `json:"rows"`
	Ranks   [][]int  `json:"ranks"` // per row: world rank
	Views   []oview  `json:"views"` // Views[0] is shown first
	Notes   []string `json:"notes,omitempty"`
}

// oview is one aggregation of the overview: a window of the run cut into
// slices.
type oview struct {
	Window string    `json:"window"` // "after MPI_Init", "whole run" or the chosen one ("0.5 s to 1.5 s")
	Slices int       `json:"slices"`
	Bounds []float64 `json:"bounds"` // slice bounds, s on the job's time axis
	// Micro holds, per row (leaf in hierarchy order), per slice: k, then
	// k pairs of state and per-mille of the slice spent in it.
	Micro   [][]int `json:"micro"`
	Parts   []opart `json:"parts"`
	Suggest float64 `json:"suggest"`
	// Note says when the p search stopped before finding every
	// significant p.
	Note string `json:"note,omitempty"`
}

type hnode struct {
	Name   string `json:"name"`
	Parent int    `json:"parent"`
	Depth  int    `json:"depth"`
	Row    int    `json:"row"`
	Rows   int    `json:"rows"`
}

// opart is one partition: Cells is flat (node, first slice, last slice,
// mode state, mode share in per-mille) per aggregate.
type opart struct {
	P     float64 `json:"p"`
	NGain float64 `json:"ng"`
	NLoss float64 `json:"nl"`
	N     int     `json:"n"`
	Cells []int   `json:"cells"`
}

// Bounds of the overview's precomputed views beyond the default one: the
// partitioning steps (about hierarchy nodes x slices^3 / 6 per run, some
// 4 ns each) they may take together, the runs of one view (and so the
// partitions its slider offers), the fewest runs worth a view, and the
// JSON bytes all views may take together.
const (
	viewSteps   = 6e8
	viewMaxRuns = 40
	viewMinRuns = 12
	viewBytes   = 8 << 20
)

// window is a time span of the run cut into slices.
type window struct {
	name       string
	start, end int64
	slices     int
}

// ErrWindow is the error of an overview window (Options.WindowFrom,
// WindowTo) that holds no part of the run or is too short to cut.
var ErrWindow = errors.New("overview window")

// userWindow is the window from..to (ns since start) of the run
// start..end, cut short at the end, named by its bounds in seconds.
func userWindow(start, end, from, to int64, slices int) (window, error) {
	name := func(a, b int64) string {
		return fmt.Sprintf("%.6g s to %.6g s", float64(a)/1e9, float64(b)/1e9)
	}
	if from >= to {
		return window{}, fmt.Errorf("%w %s is empty", ErrWindow, name(from, to))
	}
	if start+from >= end {
		return window{}, fmt.Errorf("%w %s starts after the run's end (%.6g s)", ErrWindow, name(from, to), float64(end-start)/1e9)
	}
	to = min(to, end-start)
	if to-from < int64(slices) {
		return window{}, fmt.Errorf("%w %s is shorter than %d ns, one per slice", ErrWindow, name(from, to), slices)
	}
	return window{name(from, to), start + from, start + to, slices}, nil
}

// buildOcelotl aggregates the ranks' state trace under the rank -> host
// -> job hierarchy. States are the MPI calls (or their groups when there
// are more than fit distinct colors) and Compute. The first view is
// opt's window or starts at the end of MPI_Init, as mpiflow stats does,
// with opt.Slices slices; the others (the whole run, and 2 and 4 times as
// many slices) follow as far as the report's time and size bounds allow.
// initEnd is the latest end of MPI_Init over the ranks (0 if none starts
// with it); load returns rank i whole, with its sequences, which ranks
// may lack (it is called once per rank); calls are the job's calls by
// descending time, with their colors.
func buildOcelotl(hdr *flowgraph.Header, ranks []*flowgraph.Rank, initEnd int64, load func(i int) (*flowgraph.Rank, error), opt Options, calls []string, colors map[string]string) (*ocelotlData, error) {
	slices, maxRuns, workers := opt.Slices, opt.MaxPRuns, opt.Workers
	maxStates := len(palette) + 1 // calls in distinct colors, and Compute
	src, err := aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{Load: load})
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	grouped := false
	if len(src.States()) > maxStates {
		// The calls of most time stay states of their own, in the colors
		// of the other views; the rest are grouped (at most 5 groups).
		grouped = true
		keep := map[string]bool{}
		for _, c := range calls[:min(len(calls), maxStates-6)] {
			keep[c] = true
		}
		if src, err = aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{Group: true, Keep: keep, Load: load}); err != nil {
			return nil, fmt.Errorf("ocelotl: %w", err)
		}
	}
	h, err := aggregate.NewHierarchy(src.DefaultSpec(), src.Resources())
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	start, end := src.Span()
	var wins []window
	if opt.WindowTo > 0 {
		w, err := userWindow(start, end, opt.WindowFrom, opt.WindowTo, slices)
		if err != nil {
			return nil, err
		}
		wins = append(wins, w)
	} else if initEnd > start && end-initEnd >= int64(4*slices) {
		wins = append(wins, window{"after MPI_Init", initEnd, end, slices})
	}
	wins = append(wins, window{"whole run", start, end, slices})
	nw := len(wins)
	for _, k := range []int{2, 4} {
		if k*slices > aggregate.MaxSlices {
			break
		}
		for _, w := range wins[:nw] {
			if w.end-w.start >= int64(k*slices) {
				wins = append(wins, window{w.name, w.start, w.end, k * slices})
			}
		}
	}
	// Views that cannot get a few runs of the partitioning within the
	// budget are left out before their models are built.
	steps := func(w window) float64 { return float64(len(h.Nodes)) * math.Pow(float64(w.slices), 3) / 6 }
	runs := make([]int, len(wins))
	left := viewSteps
	for i, w := range wins {
		switch {
		case i == 0 && maxRuns > 0:
			runs[i] = maxRuns
		case i == 0:
			// By default from 40 runs for large jobs to 300 for small ones.
			runs[i] = int(math.Max(40, math.Min(300, 2.5e8/math.Max(steps(w), 1))))
		default:
			runs[i] = int(math.Min(viewMaxRuns, left/math.Max(steps(w), 1)))
		}
		if i > 0 && runs[i] < viewMinRuns {
			runs[i] = 0
			continue
		}
		left -= float64(runs[i]) * steps(w)
	}
	var kept []window
	var keptRuns []int
	for i, w := range wins {
		if runs[i] > 0 {
			kept, keptRuns = append(kept, w), append(keptRuns, runs[i])
		}
	}
	models, err := buildModels(src, kept, workers)
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	d := &ocelotlData{Grouped: grouped}
	for _, s := range src.States() {
		c, ok := colors[s]
		switch {
		case s == aggregate.ComputeState:
			c = ComputeColor
		case !ok:
			c = OtherColor
		}
		if grouped && isGroup(s) {
			s = groupLabel(s)
		}
		d.States, d.Colors = append(d.States, s), append(d.Colors, c)
	}
	// Rows: leaves in pre-order; each node covers a contiguous row range.
	d.Nodes = make([]hnode, len(h.Nodes))
	row := 0
	for i := range h.Nodes {
		n := &h.Nodes[i]
		d.Nodes[i] = hnode{Name: n.Name, Parent: n.Parent, Depth: n.Depth, Row: row, Rows: n.Leaves}
		if n.Resource >= 0 {
			d.Ranks = append(d.Ranks, []int{src.Resources()[n.Resource].Rank})
			row++
		}
	}
	d.Rows = row
	// The views are partitioned one after the other, each with all
	// workers; a view whose JSON would pass the size bound is dropped.
	size := 0
	for i, m := range models {
		v, err := aggregateView(m, h, kept[i], keptRuns[i], workers)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("ocelotl: %w", err)
			}
			continue
		}
		n, err := jsonSize(v)
		if err != nil {
			return nil, fmt.Errorf("ocelotl: %w", err)
		}
		if i > 0 && size+n > viewBytes {
			continue
		}
		size += n
		d.Views = append(d.Views, *v)
	}
	return d, nil
}

// buildModels builds the model of every window, each from the ranks' timing
// intervals where they allow (aggregate.BuildWindow), so that the cost
// follows the intervals rather than the events.
func buildModels(src aggregate.Source, wins []window, workers int) ([]*aggregate.Model, error) {
	ws := make([]aggregate.Window, len(wins))
	for i, w := range wins {
		ws[i] = aggregate.Window{Start: w.start, End: w.end, Slices: w.slices}
	}
	return aggregate.BuildWindows(src, ws, workers)
}

// aggregateView finds the partitions of every significant p of model m
// (window w) with at most maxRuns runs of the partitioning.
func aggregateView(m *aggregate.Model, h *aggregate.Hierarchy, w window, maxRuns, workers int) (*oview, error) {
	a, err := aggregate.New(m, h, aggregate.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	samples, complete, err := a.SearchP(aggregate.DefaultThreshold, maxRuns)
	if err != nil {
		return nil, err
	}
	v := &oview{Window: w.name, Slices: m.Slices()}
	for _, b := range m.Bounds {
		v.Bounds = append(v.Bounds, float64(b)/1e9)
	}
	for i := range h.Nodes {
		n := &h.Nodes[i]
		if n.Resource < 0 {
			continue
		}
		cells := make([]int, 0, m.Slices()*3)
		for t := 0; t < m.Slices(); t++ {
			dur := float64(m.SliceDur(t))
			k := len(cells)
			cells = append(cells, 0)
			for x, d := range m.Cell(n.Resource, t) {
				if pm := int(math.Round(1000 * float64(d) / dur)); pm > 0 {
					cells = append(cells, x, pm)
					cells[k]++
				}
			}
		}
		v.Micro = append(v.Micro, cells)
	}
	if !complete {
		v.Note = fmt.Sprintf("the slider offers the %d partitions found in %d runs of the aggregation; the search stops there to bound the report's cost (`mpiflow aggregate` lists every significant p)", len(samples), maxRuns)
	}
	// Gain and loss are shown normalized by those of the full aggregate,
	// as Ocelotl does.
	pv := make([]aggregate.PValue, len(samples))
	for k, sm := range samples {
		pv[k] = sm.PValue
		op := opart{P: sm.P, N: len(sm.Cells), NGain: sm.NormGain, NLoss: sm.NormLoss, Cells: make([]int, 0, 5*len(sm.Cells))}
		for _, c := range sm.Cells {
			ag := a.Describe(c)
			op.Cells = append(op.Cells, c.Node, c.First, c.Last, ag.Mode, int(math.Round(1000*ag.ModeShare)))
		}
		v.Parts = append(v.Parts, op)
	}
	v.Suggest = legibleSuggest(samples, h)
	return v, nil
}

// The overview is drawn rowsPx(rows) pixels tall (templates/report.js
// draws it so), and aggregates thinner than minAggPx are drawn merged.
const minAggPx = 4

func rowsPx(rows int) float64 { return math.Max(160, math.Min(560, float64(rows)*14)) }

// legibleSuggest is aggregate.Suggest among the partitions that the
// overview can draw: those with at most a tenth of their area in
// aggregates thinner than minAggPx. With many ranks, the partition of the
// largest gain-loss gap can be made of aggregates of one rank, a fraction
// of a pixel each, which the page could only draw merged; the slider still
// offers it. Without such a partition, the one with the least thin area.
func legibleSuggest(samples []aggregate.PSample, h *aggregate.Hierarchy) float64 {
	pv := make([]aggregate.PValue, len(samples))
	for k, sm := range samples {
		pv[k] = sm.PValue
	}
	rows := h.Nodes[0].Leaves
	if len(samples) == 0 || rows == 0 {
		return aggregate.Suggest(pv)
	}
	minLeaves := int(math.Ceil(minAggPx / (rowsPx(rows) / float64(rows))))
	thin := make([]float64, len(samples))
	for k, sm := range samples {
		var area, small float64
		for _, c := range sm.Cells {
			a := float64(h.Nodes[c.Node].Leaves * (c.Last - c.First + 1))
			area += a
			if h.Nodes[c.Node].Leaves < minLeaves {
				small += a
			}
		}
		if area > 0 {
			thin[k] = small / area
		}
	}
	best := -1
	for k := range samples {
		if thin[k] <= 0.1 && (best < 0 || pv[k].NormGain-pv[k].NormLoss > pv[best].NormGain-pv[best].NormLoss+1e-12) {
			best = k
		}
	}
	if best < 0 {
		for k := range samples {
			if best < 0 || thin[k] < thin[best] {
				best = k
			}
		}
	}
	hi := 1.0
	if best+1 < len(pv) {
		hi = pv[best+1].P
	}
	return (pv[best].P + hi) / 2
}

// jsonSize is the length of v's JSON encoding.
func jsonSize(v any) (int, error) {
	var n countWriter
	err := json.NewEncoder(&n).Encode(v)
	return int(n), err
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
