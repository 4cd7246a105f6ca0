package report

import (
	"fmt"
	"math"
	"slices"

	"mpiflow/aggregate"
	"mpiflow/flowgraph"
)

// ocelotlData is the spatiotemporal overview embedded in the report: the
// hierarchy, the microscopic model (to describe any aggregate on hover) and
// the best partition of every significant p.
type ocelotlData struct {
	States []string  `json:"states"`
	Colors []string  `json:"colors"`
	Bounds []float64 `json:"bounds"` // slice bounds, s on the job's time axis
	Nodes  []hnode   `json:"nodes"`
	// Micro holds, per row (leaf in hierarchy order), per slice: k, then
	// k pairs of state and per-mille of the slice spent in it.
	Micro   [][]int  `json:"micro"`
	Parts   []opart  `json:"parts"`
	Suggest float64  `json:"suggest"`
	Grouped bool     `json:"grouped"`
	Rows    int      `json:"rows"`
	Ranks   [][]int  `json:"ranks"` // per row: world rank
	Notes   []string `json:"notes,omitempty"`
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

// psample is the best partition at one value of p.
type psample struct {
	p     float64
	cells []aggregate.Cell
}

// searchP finds the values of p where the best partition changes, by
// bisection as aggregate.PValues does, but always splitting the widest
// interval whose ends differ first and stopping after budget runs of the
// partitioning algorithm, so the report's cost is bounded whatever the
// trace. Consecutive equal partitions are kept once, at their smallest p.
func searchP(a *aggregate.Aggregator, budget int, threshold float64) ([]psample, bool, error) {
	at := func(p float64) (psample, error) {
		c, err := a.BestCells(p)
		return psample{p, c}, err
	}
	lo, err := at(0)
	if err != nil {
		return nil, false, err
	}
	hi, err := at(1)
	if err != nil {
		return nil, false, err
	}
	list := []psample{lo, hi}
	complete := true
	for runs := 2; ; runs++ {
		best := -1
		for i := 0; i+1 < len(list); i++ {
			w := list[i+1].p - list[i].p
			if w > threshold && !slices.Equal(list[i].cells, list[i+1].cells) && (best < 0 || w > list[best+1].p-list[best].p) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		if runs >= budget {
			complete = false
			break
		}
		mid, err := at(list[best].p + (list[best+1].p-list[best].p)/2)
		if err != nil {
			return nil, false, err
		}
		list = slices.Insert(list, best+1, mid)
	}
	out := list[:1]
	for _, s := range list[1:] {
		if !slices.Equal(s.cells, out[len(out)-1].cells) {
			out = append(out, s)
		}
	}
	return out, complete, nil
}

// buildOcelotl aggregates the ranks' state trace over slices time slices
// under the rank -> host -> job hierarchy. States are the MPI calls (or
// their groups when there are more than maxStates calls) and Compute.
func buildOcelotl(hdr *flowgraph.Header, ranks []*flowgraph.Rank, slices, maxRuns, workers int, colors map[string]string) (*ocelotlData, error) {
	const maxStates = 16
	src, err := aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{})
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	grouped := false
	if len(src.States()) > maxStates {
		grouped = true
		if src, err = aggregate.NewRankSource(hdr, ranks, aggregate.FlowOptions{Group: true}); err != nil {
			return nil, fmt.Errorf("ocelotl: %w", err)
		}
	}
	m, err := aggregate.Build(src, slices, workers)
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	h, err := aggregate.NewHierarchy(src.DefaultSpec(), src.Resources())
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	a, err := aggregate.New(m, h, aggregate.Options{Workers: workers})
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	if maxRuns <= 0 {
		// One run costs about (hierarchy nodes) x slices^3 / 6 steps.
		cost := float64(len(h.Nodes)) * math.Pow(float64(m.Slices()), 3)
		maxRuns = int(math.Max(40, math.Min(300, 1.5e9/math.Max(cost, 1))))
	}
	samples, complete, err := searchP(a, maxRuns, aggregate.DefaultThreshold)
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
	// Gain and loss are shown normalized by those of the full aggregate,
	// as Ocelotl does.
	full := a.Describe(aggregate.Cell{Node: 0, First: 0, Last: m.Slices() - 1})
	norm := func(v, by float64) float64 {
		if by == 0 {
			return 0
		}
		return v / by
	}
	var suggest float64
	bestGap := math.Inf(-1)
	d := &ocelotlData{States: m.States, Grouped: grouped}
	groupColors := map[string]string{aggregate.GroupP2P: "#1f77b4", aggregate.GroupCollective: "#ff7f0e",
		aggregate.GroupWait: "#d62728", aggregate.GroupIO: "#9467bd", aggregate.GroupOther: "#8c564b"}
	for _, s := range m.States {
		c, ok := colors[s]
		switch {
		case s == aggregate.ComputeState:
			c = ComputeColor
		case grouped:
			c = groupColors[s]
		case !ok:
			c = OtherColor
		}
		if c == "" {
			c = OtherColor
		}
		d.Colors = append(d.Colors, c)
	}
	for _, b := range m.Bounds {
		d.Bounds = append(d.Bounds, float64(b)/1e9)
	}
	// Rows: leaves in pre-order; each node covers a contiguous row range.
	d.Nodes = make([]hnode, len(h.Nodes))
	row := 0
	for i := range h.Nodes {
		n := &h.Nodes[i]
		d.Nodes[i] = hnode{Name: n.Name, Parent: n.Parent, Depth: n.Depth, Row: row, Rows: n.Leaves}
		if n.Resource >= 0 {
			cells := make([]int, 0, m.Slices()*3)
			for t := 0; t < m.Slices(); t++ {
				dur := float64(m.SliceDur(t))
				k := len(cells)
				cells = append(cells, 0)
				for x, v := range m.Cell(n.Resource, t) {
					if pm := int(math.Round(1000 * float64(v) / dur)); pm > 0 {
						cells = append(cells, x, pm)
						cells[k]++
					}
				}
			}
			d.Micro = append(d.Micro, cells)
			d.Ranks = append(d.Ranks, []int{m.Resources[n.Resource].Rank})
			row++
		}
	}
	d.Rows = row
	if !complete {
		d.Notes = append(d.Notes, fmt.Sprintf("The slider offers the %d partitions found in %d runs of the aggregation; the search stops there to bound the report's cost (`mpiflow aggregate` lists every significant p).", len(samples), maxRuns))
	}
	for k, sm := range samples {
		op := opart{P: sm.p, N: len(sm.cells), Cells: make([]int, 0, 5*len(sm.cells))}
		var g, l float64
		for _, c := range sm.cells {
			ag := a.Describe(c)
			g += ag.Gain
			l += ag.Loss
			op.Cells = append(op.Cells, c.Node, c.First, c.Last, ag.Mode, int(math.Round(1000*ag.ModeShare)))
		}
		op.NGain, op.NLoss = norm(g, full.Gain), norm(l, full.Loss)
		if gap := op.NGain - op.NLoss; gap > bestGap+1e-12 {
			bestGap = gap
			next := 1.0
			if k+1 < len(samples) {
				next = samples[k+1].p
			}
			suggest = (sm.p + next) / 2
		}
		d.Parts = append(d.Parts, op)
	}
	d.Suggest = suggest
	return d, nil
}
