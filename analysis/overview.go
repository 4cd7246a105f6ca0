package analysis

import (
	"errors"
	"fmt"
	"math"

	"mpiflow/aggregate"
	"mpiflow/flowgraph"
)

// Bounds of the overview's precomputed views beyond the first one: the
// partitioning steps (about hierarchy nodes x slices^3 / 6 per run, some
// 4 ns each) they may take together, the runs of one view (and so the
// partitions its slider offers), and the fewest runs worth a view.
const (
	viewSteps   = 6e8
	viewMaxRuns = 40
	viewMinRuns = 12
)

// ErrWindow is the error of an overview window (OverviewOptions.WindowFrom,
// WindowTo) that holds no part of the run or is too short to cut.
var ErrWindow = errors.New("overview window")

// OverviewOptions choose the views of an overview. Slices is required.
type OverviewOptions struct {
	// Slices is the number of time slices of the first view.
	Slices int
	// WindowFrom and WindowTo, when WindowTo > 0, are the first view's
	// window in ns since the start of the run; else the first view starts
	// at InitEnd, the latest end of MPI_Init (0 if none).
	WindowFrom, WindowTo, InitEnd int64
	// MaxPRuns bounds the runs of the partitioning of the first view
	// (by default from 40 for large jobs to 300 for small ones).
	MaxPRuns int
	// MaxStates bounds the distinct states (0: no bound): with more, the
	// calls beyond the first MaxStates-6 of Calls (the job's calls by
	// descending time) are grouped.
	MaxStates int
	Calls     []string
	// Load returns rank i whole, with its sequences (aggregate.FlowOptions).
	Load func(i int) (*flowgraph.Rank, error)
	// Visit returns another view walked with rank i's
	// (aggregate.FlowOptions).
	Visit func(i int, r *flowgraph.Rank) aggregate.RankVisitor
	// Workers bounds parallel work.
	Workers int
}

// OverviewWindow is a view of the overview: a time span of the run cut
// into slices, and the runs of the partitioning its p search may take.
type OverviewWindow struct {
	Name       string // "after MPI_Init", "whole run" or the chosen one ("0.5 s to 1.5 s")
	Start, End int64
	Slices     int
	Runs       int
}

// Overview is the spatiotemporal overview (Ocelotl's) of the ranks' state
// trace under the rank -> host -> job hierarchy: its states, hierarchy,
// and the views within the overview's time bounds with their microscopic
// models, to be partitioned one after the other (Partitions).
type Overview struct {
	Source    *aggregate.RankSource
	Grouped   bool // the source's states include groups of calls
	Hierarchy *aggregate.Hierarchy
	Windows   []OverviewWindow
	Models    []*aggregate.Model
}

// NewOverview chooses the overview's views of ranks and builds their
// models. The first view is opt's window or starts at the end of MPI_Init,
// as mpiflow stats does, with opt.Slices slices; the others (the whole
// run, and 2 and 4 times as many slices) follow as far as the time bound
// allows. A window of opt outside the run is ErrWindow.
func NewOverview(hdr *flowgraph.Header, ranks []*flowgraph.Rank, opt OverviewOptions) (*Overview, error) {
	src, grouped, err := overviewSource(hdr, ranks, opt)
	if err != nil {
		return nil, err
	}
	h, err := aggregate.NewHierarchy(src.DefaultSpec(), src.Resources())
	if err != nil {
		return nil, err
	}
	start, end := src.Span()
	wins, err := overviewWindows(start, end, opt)
	if err != nil {
		return nil, err
	}
	wins = budgetViews(wins, len(h.Nodes), opt.MaxPRuns)
	ws := make([]aggregate.Window, len(wins))
	for i, w := range wins {
		ws[i] = aggregate.Window{Start: w.Start, End: w.End, Slices: w.Slices}
	}
	// Each model is built from the ranks' timing intervals where they
	// allow (aggregate.BuildWindows), so that the cost follows the
	// intervals rather than the events.
	models, err := aggregate.BuildWindows(src, ws, opt.Workers)
	if err != nil {
		return nil, err
	}
	return &Overview{Source: src, Grouped: grouped, Hierarchy: h, Windows: wins, Models: models}, nil
}

// overviewSource is the state trace of the ranks: their MPI calls and
// Compute, or, with more than opt.MaxStates states, the calls of most time
// as states of their own and the rest grouped (at most 5 groups).
func overviewSource(hdr *flowgraph.Header, ranks []*flowgraph.Rank, opt OverviewOptions) (*aggregate.RankSource, bool, error) {
	src, err := aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{Load: opt.Load, Visit: opt.Visit})
	if err != nil {
		return nil, false, err
	}
	if opt.MaxStates <= 0 || len(src.States()) <= opt.MaxStates {
		return src, false, nil
	}
	keep := map[string]bool{}
	for _, c := range opt.Calls[:min(len(opt.Calls), max(opt.MaxStates-6, 0))] {
		keep[c] = true
	}
	src, err = aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{Group: true, Keep: keep, Load: opt.Load, Visit: opt.Visit})
	return src, true, err
}

// overviewWindows are the candidate views of the run start..end: the first
// (opt's window, else after MPI_Init when enough of the run follows it),
// the whole run, then those with 2 and 4 times as many slices.
func overviewWindows(start, end int64, opt OverviewOptions) ([]OverviewWindow, error) {
	slices := opt.Slices
	var wins []OverviewWindow
	if opt.WindowTo > 0 {
		w, err := userWindow(start, end, opt.WindowFrom, opt.WindowTo, slices)
		if err != nil {
			return nil, err
		}
		wins = append(wins, w)
	} else if opt.InitEnd > start && end-opt.InitEnd >= int64(4*slices) {
		wins = append(wins, OverviewWindow{Name: "after MPI_Init", Start: opt.InitEnd, End: end, Slices: slices})
	}
	wins = append(wins, OverviewWindow{Name: "whole run", Start: start, End: end, Slices: slices})
	nw := len(wins)
	for _, k := range []int{2, 4} {
		if k*slices > aggregate.MaxSlices {
			break
		}
		for _, w := range wins[:nw] {
			if w.End-w.Start >= int64(k*slices) {
				wins = append(wins, OverviewWindow{Name: w.Name, Start: w.Start, End: w.End, Slices: k * slices})
			}
		}
	}
	return wins, nil
}

// userWindow is the window from..to (ns since start) of the run
// start..end, cut short at the end, named by its bounds in seconds.
func userWindow(start, end, from, to int64, slices int) (OverviewWindow, error) {
	name := func(a, b int64) string {
		return fmt.Sprintf("%.6g s to %.6g s", float64(a)/1e9, float64(b)/1e9)
	}
	if from >= to {
		return OverviewWindow{}, fmt.Errorf("%w %s is empty", ErrWindow, name(from, to))
	}
	if start+from >= end {
		return OverviewWindow{}, fmt.Errorf("%w %s starts after the run's end (%.6g s)", ErrWindow, name(from, to), float64(end-start)/1e9)
	}
	to = min(to, end-start)
	if to-from < int64(slices) {
		return OverviewWindow{}, fmt.Errorf("%w %s is shorter than %d ns, one per slice", ErrWindow, name(from, to), slices)
	}
	return OverviewWindow{Name: name(from, to), Start: start + from, End: start + to, Slices: slices}, nil
}

// budgetViews gives each window its runs of the partitioning: the first
// maxRuns (or a default by its size), the others what is left of the
// budget; views that cannot get a few runs within it are left out before
// their models are built. nodes is the hierarchy's size.
func budgetViews(wins []OverviewWindow, nodes, maxRuns int) []OverviewWindow {
	steps := func(w OverviewWindow) float64 { return float64(nodes) * math.Pow(float64(w.Slices), 3) / 6 }
	left := float64(viewSteps)
	var kept []OverviewWindow
	for i, w := range wins {
		switch {
		case i == 0 && maxRuns > 0:
			w.Runs = maxRuns
		case i == 0:
			// By default from 40 runs for large jobs to 300 for small ones.
			w.Runs = int(math.Max(40, math.Min(300, 2.5e8/math.Max(steps(w), 1))))
		default:
			w.Runs = int(math.Min(viewMaxRuns, left/math.Max(steps(w), 1)))
		}
		if i > 0 && w.Runs < viewMinRuns {
			continue
		}
		left -= float64(w.Runs) * steps(w)
		if w.Runs > 0 {
			kept = append(kept, w)
		}
	}
	return kept
}

// Partitions runs the p search of view i: the partitions of every
// significant p found within the view's runs (complete is false when the
// search stopped before finding them all), and the aggregator that
// describes their aggregates.
func (o *Overview) Partitions(i, workers int) (a *aggregate.Aggregator, samples []aggregate.PSample, complete bool, err error) {
	a, err = aggregate.New(o.Models[i], o.Hierarchy, aggregate.Options{Workers: workers})
	if err != nil {
		return nil, nil, false, err
	}
	samples, complete, err = a.SearchP(aggregate.DefaultThreshold, o.Windows[i].Runs)
	return a, samples, complete, err
}

// LegibleP is aggregate.Suggest among the partitions whose aggregates can
// be drawn apart: those with at most a tenth of their area in aggregates
// of fewer than minLeaves leaves of h. With many ranks, the partition of
// the largest gain-loss gap can be made of aggregates of one rank, too
// thin to draw. Without such a partition, the one with the least thin
// area.
func LegibleP(samples []aggregate.PSample, h *aggregate.Hierarchy, minLeaves int) float64 {
	pv := make([]aggregate.PValue, len(samples))
	for k, sm := range samples {
		pv[k] = sm.PValue
	}
	if len(samples) == 0 || h.Nodes[0].Leaves == 0 {
		return aggregate.Suggest(pv)
	}
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
