package aggregate

import (
	"fmt"
	"math"
	"slices"
)

// Aggregate describes one aggregate of a partition, for reports and users.
type Aggregate struct {
	Node      int     `json:"node"`  // index into Hierarchy.Nodes
	Path      string  `json:"path"`  // node names from the root, joined by "/"
	Depth     int     `json:"depth"` // 0 for the root
	Resources int     `json:"resources"`
	First     int     `json:"first_slice"`
	Last      int     `json:"last_slice"`
	Start     float64 `json:"start_s"` // seconds on the trace's time axis
	End       float64 `json:"end_s"`
	// Proportions holds, per state (Model.States order), the share of the
	// aggregate's resource time spent in it:
	// (1/|S|) sum_s (sum_t d_x(s,t) / sum_t d(t)).
	Proportions []float64 `json:"proportions"`
	// Mode is the state with the largest proportion, -1 (and ModeState
	// "") when the aggregate holds no state at all, e.g. ranks that have
	// finished.
	Mode      int    `json:"mode"`
	ModeState string `json:"mode_state"`
	// ModeShare is the mode's proportion, meant as the opacity of the
	// aggregate's colour.
	ModeShare float64 `json:"mode_share"`
	Gain      float64 `json:"gain"`
	Loss      float64 `json:"loss"`
}

// Partition is the best partition for a value of p.
type Partition struct {
	P          float64     `json:"p"`
	Gain       float64     `json:"gain"` // sums over the aggregates
	Loss       float64     `json:"loss"`
	NormGain   float64     `json:"norm_gain"` // divided by those of the full aggregate
	NormLoss   float64     `json:"norm_loss"`
	Aggregates []Aggregate `json:"aggregates"`
}

// Best returns the best partition for p in [0, 1] with every aggregate
// described.
func (a *Aggregator) Best(p float64) (*Partition, error) {
	cells, err := a.BestCells(p)
	if err != nil {
		return nil, err
	}
	part := &Partition{P: p, Aggregates: make([]Aggregate, len(cells))}
	for k, c := range cells {
		ag := a.Describe(c)
		part.Aggregates[k] = ag
		part.Gain += ag.Gain
		part.Loss += ag.Loss
	}
	part.NormGain, part.NormLoss = a.normalize(part.Gain, part.Loss)
	return part, nil
}

func (a *Aggregator) normalize(g, l float64) (float64, float64) {
	if a.gainMax > 0 {
		g /= a.gainMax
	}
	if a.lossMax > 0 {
		l /= a.lossMax
	}
	return g, l
}

// Describe computes the state proportions, mode, gain and loss of cell c.
func (a *Aggregator) Describe(c Cell) Aggregate {
	m := a.m
	n := &a.h.Nodes[c.Node]
	prop := make([]float64, a.nx)
	var slice int64
	for t := c.First; t <= c.Last; t++ {
		slice += m.SliceDur(t)
	}
	weight := 0
	for k := c.Node; k < a.end[c.Node]; k++ {
		r := a.h.Nodes[k].Resource
		if r < 0 {
			continue
		}
		weight += m.weight(r)
		for t := c.First; t <= c.Last; t++ {
			for x, d := range m.Cell(r, t) {
				prop[x] += float64(d)
			}
		}
	}
	den := float64(slice) * float64(weight)
	mode := 0
	for x := range prop {
		prop[x] /= den
		if prop[x] > prop[mode] {
			mode = x
		}
	}
	g, l := a.aggQuality(c.Node, c.First, c.Last)
	ag := Aggregate{
		Node: c.Node, Path: a.h.Path(c.Node), Depth: n.Depth, Resources: weight,
		First: c.First, Last: c.Last,
		Start: float64(m.Bounds[c.First]) / 1e9, End: float64(m.Bounds[c.Last+1]) / 1e9,
		Proportions: prop, Mode: mode, ModeState: m.States[mode], ModeShare: prop[mode],
		Gain: g, Loss: l,
	}
	if prop[mode] == 0 {
		ag.Mode, ag.ModeState = -1, ""
	}
	return ag
}

// PValue is one of the significant values of p: from P on (up to the next
// PValue) the best partition is the one described here.
type PValue struct {
	P          float64 `json:"p"`
	Aggregates int     `json:"aggregates"`
	Gain       float64 `json:"gain"`
	Loss       float64 `json:"loss"`
	NormGain   float64 `json:"norm_gain"`
	NormLoss   float64 `json:"norm_loss"`
}

// DefaultThreshold is the p resolution of PValues, as in Ocelotl.
const DefaultThreshold = 0.001

// PSample is the best partition at a significant value of p, with its
// quality.
type PSample struct {
	PValue
	Cells []Cell
}

// PValues returns the significant values of p, where the best partition
// changes, found by dichotomy (see SearchP, here without a bound), and a
// suggested p: the middle of the p range of the partition whose
// normalized gain minus normalized loss is largest.
func (a *Aggregator) PValues(threshold float64) ([]PValue, float64, error) {
	samples, _, err := a.SearchP(threshold, 0)
	if err != nil {
		return nil, 0, err
	}
	out := make([]PValue, len(samples))
	for k := range samples {
		out[k] = samples[k].PValue
	}
	return out, Suggest(out), nil
}

// SearchP finds the significant values of p by dichotomy: the partitions at
// p = 0 and p = 1 are computed, and every interval of p whose two
// partitions differ and that is wider than threshold (DefaultThreshold if
// <= 0) is bisected, the widest first. With maxRuns > 0 it stops after
// that many runs of the partitioning and reports complete = false if
// intervals were left. Consecutive equal partitions are dropped, keeping
// the smallest p.
func (a *Aggregator) SearchP(threshold float64, maxRuns int) (samples []PSample, complete bool, err error) {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	at := func(p float64) (PSample, error) {
		c, err := a.BestCells(p)
		return PSample{PValue: PValue{P: p}, Cells: c}, err
	}
	lo, err := at(0)
	if err != nil {
		return nil, false, err
	}
	hi, err := at(1)
	if err != nil {
		return nil, false, err
	}
	list := []PSample{lo, hi}
	complete = true
	for runs := 2; ; runs++ {
		widest := -1
		for i := 0; i+1 < len(list); i++ {
			w := list[i+1].P - list[i].P
			if w > threshold && !slices.Equal(list[i].Cells, list[i+1].Cells) && (widest < 0 || w > list[widest+1].P-list[widest].P) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		if maxRuns > 0 && runs >= maxRuns {
			complete = false
			break
		}
		mid, err := at(list[widest].P + (list[widest+1].P-list[widest].P)/2)
		if err != nil {
			return nil, false, err
		}
		list = slices.Insert(list, widest+1, mid)
	}
	out := list[:1]
	for _, s := range list[1:] {
		if !slices.Equal(s.Cells, out[len(out)-1].Cells) {
			out = append(out, s)
		}
	}
	for k := range out {
		pv := &out[k].PValue
		pv.Aggregates = len(out[k].Cells)
		for _, c := range out[k].Cells {
			g, l := a.aggQuality(c.Node, c.First, c.Last)
			pv.Gain += g
			pv.Loss += l
		}
		pv.NormGain, pv.NormLoss = a.normalize(pv.Gain, pv.Loss)
	}
	return out, complete, nil
}

// Suggest returns the middle of the p range of the partition with the
// largest normalized gain - loss gap (the first one on ties).
func Suggest(pv []PValue) float64 {
	if len(pv) == 0 {
		return 0.5
	}
	best, gap := 0, math.Inf(-1)
	for k, v := range pv {
		if g := v.NormGain - v.NormLoss; g > gap+1e-12 {
			best, gap = k, g
		}
	}
	hi := 1.0
	if best+1 < len(pv) {
		hi = pv[best+1].P
	}
	return (pv[best].P + hi) / 2
}

// String is a one-line summary of a p value.
func (v PValue) String() string {
	return fmt.Sprintf("p=%.4f aggregates=%d gain=%.4g loss=%.4g", v.P, v.Aggregates, v.Gain, v.Loss)
}

// Quality returns the normalized quality (p times the gain minus 1-p times
// the loss, each divided by that of the full aggregate) of a partition
// given as cells, the value that BestCells maximizes. It lets a partition
// found on one model be judged on another model of the same hierarchy and
// slices, e.g. a partition of a rebuilt trace on the recorded one.
func (a *Aggregator) Quality(p float64, cells []Cell) (float64, error) {
	if !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("p = %v: want a value in [0, 1]", p)
	}
	wg, wl := a.weights(p)
	var q float64
	for _, c := range cells {
		if c.Node < 0 || c.Node >= len(a.h.Nodes) || c.First < 0 || c.First > c.Last || c.Last >= a.nt {
			return 0, fmt.Errorf("cell %+v: outside %d hierarchy nodes x %d slices", c, len(a.h.Nodes), a.nt)
		}
		g, l := a.aggQuality(c.Node, c.First, c.Last)
		q += wg*g - wl*l
	}
	return q, nil
}
