package aggregate

// Mode selects the dimensions an aggregation runs over.
type Mode int

// Aggregation modes.
const (
	// SpaceTime aggregates over the hierarchy and over time (Ocelotl).
	SpaceTime Mode = iota
	// SpaceOnly integrates time into one slice and aggregates over the
	// hierarchy only, as Viva's treemaps.
	SpaceOnly
	// TimeOnly integrates the resources into one and aggregates over time
	// only, as Ocelotl's timeline.
	TimeOnly
)

// String is the mode's name as the CLI spells it.
func (m Mode) String() string {
	switch m {
	case SpaceOnly:
		return "space"
	case TimeOnly:
		return "time"
	}
	return "spacetime"
}

// IntegrateTime returns the model with its slices summed into one that
// covers the whole span.
func IntegrateTime(m *Model) *Model {
	nx, nt := len(m.States), m.Slices()
	out := &Model{
		Resources: m.Resources,
		States:    m.States,
		Bounds:    []int64{m.Bounds[0], m.Bounds[nt]},
		Dur:       make([]int64, len(m.Resources)*nx),
		Weight:    m.Weight,
	}
	for r := range m.Resources {
		dst := out.Dur[r*nx : (r+1)*nx]
		for t := 0; t < nt; t++ {
			for x, d := range m.Cell(r, t) {
				dst[x] += d
			}
		}
	}
	return out
}

// IntegrateSpace returns the model with its resources summed into one
// resource named name, and the one-node hierarchy over it.
func IntegrateSpace(m *Model, name string) (*Model, *Hierarchy) {
	nx, nt := len(m.States), m.Slices()
	w := 0
	for r := range m.Resources {
		w += m.weight(r)
	}
	out := &Model{
		Resources: []Resource{{Name: name, Rank: -1}},
		States:    m.States,
		Bounds:    m.Bounds,
		Dur:       make([]int64, nt*nx),
		Weight:    []int{w},
	}
	for r := range m.Resources {
		for t := 0; t < nt; t++ {
			dst := out.Dur[t*nx : (t+1)*nx]
			for x, d := range m.Cell(r, t) {
				dst[x] += d
			}
		}
	}
	h := &Hierarchy{Nodes: []Node{{Name: name, Parent: -1, Resource: 0, Leaves: 1}}}
	return out, h
}
