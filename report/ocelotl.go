package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"mpiflow/aggregate"
	"mpiflow/analysis"
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

// rankWalks are how the overview reads the ranks: load returns rank i
// whole, with its sequences, which the ranks given may lack (it is called
// once per rank), and visit, if set, another view of it walked with the
// overview's (aggregate.FlowOptions).
type rankWalks struct {
	load  func(i int) (*flowgraph.Rank, error)
	visit func(i int, r *flowgraph.Rank) aggregate.RankVisitor
}

// viewBytes bounds the JSON bytes of all the overview's views together.
const viewBytes = 8 << 20

// buildOcelotl aggregates the ranks' state trace under the rank -> host
// -> job hierarchy (analysis.NewOverview). States are the MPI calls (or
// their groups when there are more than fit distinct colors) and Compute.
// initEnd is the latest end of MPI_Init over the ranks (0 if none starts
// with it); rw reads the ranks; calls are the job's calls by descending
// time, with their colors.
func buildOcelotl(hdr *flowgraph.Header, ranks []*flowgraph.Rank, initEnd int64, rw rankWalks, opt Options, calls []string, colors map[string]string) (*ocelotlData, error) {
	ov, err := analysis.NewOverview(hdr, ranks, analysis.OverviewOptions{
		Slices: opt.Slices, WindowFrom: opt.WindowFrom, WindowTo: opt.WindowTo, InitEnd: initEnd, MaxPRuns: opt.MaxPRuns,
		MaxStates: len(palette) + 1, // calls in distinct colors, and Compute
		Calls:     calls, Load: rw.load, Visit: rw.visit, Workers: opt.Workers})
	if errors.Is(err, analysis.ErrWindow) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	d := &ocelotlData{Grouped: ov.Grouped}
	d.States, d.Colors = overviewStates(ov, colors)
	d.Nodes, d.Ranks = overviewRows(ov)
	d.Rows = len(d.Ranks)
	// The views are partitioned one after the other, each with all
	// workers; a view whose JSON would pass the size bound is dropped.
	size := 0
	for i := range ov.Models {
		v, err := aggregateView(ov, i, opt.Workers)
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

// overviewStates are the names and colors of the overview's states.
func overviewStates(ov *analysis.Overview, colors map[string]string) (names, cols []string) {
	for _, s := range ov.Source.States() {
		c, ok := colors[s]
		switch {
		case s == aggregate.ComputeState:
			c = ComputeColor
		case !ok:
			c = OtherColor
		}
		if ov.Grouped && isGroup(s) {
			s = groupLabel(s)
		}
		names, cols = append(names, s), append(cols, c)
	}
	return names, cols
}

// overviewRows are the hierarchy's nodes with their rows, the leaves in
// pre-order, each node covering a contiguous row range, and the world rank
// of each row.
func overviewRows(ov *analysis.Overview) ([]hnode, [][]int) {
	h := ov.Hierarchy
	nodes := make([]hnode, len(h.Nodes))
	var ranks [][]int
	row := 0
	for i := range h.Nodes {
		n := &h.Nodes[i]
		nodes[i] = hnode{Name: n.Name, Parent: n.Parent, Depth: n.Depth, Row: row, Rows: n.Leaves}
		if n.Resource >= 0 {
			ranks = append(ranks, []int{ov.Source.Resources()[n.Resource].Rank})
			row++
		}
	}
	return nodes, ranks
}

// aggregateView is view i of the overview with the partitions of every
// significant p its p search finds.
func aggregateView(ov *analysis.Overview, i, workers int) (*oview, error) {
	a, samples, complete, err := ov.Partitions(i, workers)
	if err != nil {
		return nil, err
	}
	m, h, w := ov.Models[i], ov.Hierarchy, ov.Windows[i]
	v := &oview{Window: w.Name, Slices: m.Slices()}
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
		v.Note = fmt.Sprintf("the slider offers the %d partitions found in %d runs of the aggregation; the search stops there to bound the report's cost (`mpiflow aggregate` lists every significant p)", len(samples), w.Runs)
	}
	// Gain and loss are shown normalized by those of the full aggregate,
	// as Ocelotl does.
	for _, sm := range samples {
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

// legibleSuggest is analysis.LegibleP among the partitions that the
// overview can draw: those with at most a tenth of their area in
// aggregates thinner than minAggPx, which the page could only draw merged
// (the slider still offers them).
func legibleSuggest(samples []aggregate.PSample, h *aggregate.Hierarchy) float64 {
	rows := h.Nodes[0].Leaves
	minLeaves := 0
	if rows > 0 {
		minLeaves = int(math.Ceil(minAggPx / (rowsPx(rows) / float64(rows))))
	}
	return analysis.LegibleP(samples, h, minLeaves)
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
