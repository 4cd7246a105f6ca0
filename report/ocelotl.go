package report

import (
	"fmt"
	"math"

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
	samples, complete, err := a.SearchP(aggregate.DefaultThreshold, maxRuns)
	if err != nil {
		return nil, fmt.Errorf("ocelotl: %w", err)
	}
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
		d.Parts = append(d.Parts, op)
	}
	d.Suggest = aggregate.Suggest(pv)
	return d, nil
}
