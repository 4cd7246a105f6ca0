package aggregate

import (
	"errors"
	"fmt"
)

// RunOptions describe a whole aggregation, from a source to a Result.
type RunOptions struct {
	Slices int // DefaultSlices if 0
	// P is the trade-off parameter in [0, 1]; a negative value asks for
	// the suggested p, which computes the significant p values.
	P    float64
	Mode Mode
	// Spec is the resource hierarchy; nil means the source's default
	// (rank -> host -> job for mpiflow files) or all ranks under one root.
	Spec *Spec
	// PValues asks for the significant p values in the result.
	PValues    bool
	Threshold  float64 // dichotomy resolution, DefaultThreshold if 0
	Aggregator Options
	Workers    int // goroutines reading the source (GOMAXPROCS if < 1)
}

// Result is an aggregation ready for reports and users.
type Result struct {
	Mode   string   `json:"mode"`
	States []string `json:"states"`
	// Variables tells that the "states" are variables (a Values source:
	// each cell a variable's time integral over the slice).
	Variables  bool    `json:"variables,omitempty"`
	Resources  int     `json:"resources"`
	Slices     int     `json:"slices"`
	Start      float64 `json:"start_s"` // seconds on the trace's time axis
	End        float64 `json:"end_s"`
	SliceWidth float64 `json:"slice_s"`
	// Levels names each depth of the hierarchy by one of its nodes.
	Levels    []string   `json:"levels"`
	Partition *Partition `json:"partition"`
	// Phases is the temporal-only (space integrated) partition at the same
	// p: the coarse phases of the run.
	Phases     []Aggregate `json:"phases"`
	PValues    []PValue    `json:"pvalues,omitempty"`
	SuggestedP float64     `json:"suggested_p,omitempty"`
}

// defaultSpecer is implemented by sources that know their natural hierarchy.
type defaultSpecer interface {
	DefaultSpec() *Spec
}

// Run builds the model of src and aggregates it as opt says.
func Run(src Source, opt RunOptions) (*Result, error) {
	if opt.Slices == 0 {
		opt.Slices = DefaultSlices
	}
	if opt.P > 1 {
		return nil, fmt.Errorf("p = %v: want a value in [0, 1]", opt.P)
	}
	spec := opt.Spec
	if spec == nil {
		if d, ok := src.(defaultSpecer); ok {
			spec = d.DefaultSpec()
		} else {
			spec = FlatSpec("all", src.Resources())
		}
	}
	h, err := NewHierarchy(spec, src.Resources())
	if err != nil {
		return nil, err
	}
	slices := opt.Slices
	if opt.Mode == SpaceOnly {
		slices = 1
	}
	m, err := Build(src, slices, opt.Workers)
	if err != nil {
		return nil, fmt.Errorf("build model: %w", err)
	}
	res, err := AggregateModel(m, h, opt)
	if err == nil {
		_, res.Variables = src.(*Values)
	}
	return res, err
}

// AggregateModel aggregates a model under a hierarchy as opt says (opt.Slices,
// opt.Spec and opt.Workers are not used).
func AggregateModel(m *Model, h *Hierarchy, opt RunOptions) (*Result, error) {
	if m == nil || h == nil {
		return nil, errors.New("aggregate: no model or no hierarchy")
	}
	res := &Result{
		Mode:      opt.Mode.String(),
		States:    m.States,
		Resources: len(m.Resources),
		Slices:    m.Slices(),
		Start:     float64(m.Bounds[0]) / 1e9,
		End:       float64(m.Bounds[m.Slices()]) / 1e9,
	}
	res.SliceWidth = (res.End - res.Start) / float64(res.Slices)
	full := m
	switch opt.Mode {
	case SpaceOnly:
		if m.Slices() > 1 {
			m = IntegrateTime(m)
		}
	case TimeOnly:
		m, h = IntegrateSpace(m, h.Nodes[0].Name)
	}
	for d := 0; d <= h.Height(); d++ {
		for _, n := range h.Nodes {
			if n.Depth == d {
				res.Levels = append(res.Levels, n.Name)
				break
			}
		}
	}
	a, err := New(m, h, opt.Aggregator)
	if err != nil {
		return nil, err
	}
	p := opt.P
	if opt.PValues || p < 0 {
		res.PValues, res.SuggestedP, err = a.PValues(opt.Threshold)
		if err != nil {
			return nil, err
		}
		if p < 0 {
			p = res.SuggestedP
		}
	}
	if res.Partition, err = a.Best(p); err != nil {
		return nil, err
	}
	if opt.Mode == TimeOnly {
		res.Phases = res.Partition.Aggregates
		return res, nil
	}
	tm, th := IntegrateSpace(full, h.Nodes[0].Name)
	ta, err := New(tm, th, opt.Aggregator)
	if err != nil {
		return nil, err
	}
	phases, err := ta.Best(p)
	if err != nil {
		return nil, err
	}
	res.Phases = phases.Aggregates
	return res, nil
}
