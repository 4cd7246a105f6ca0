// Package importer reads state traces written by other tools — Pajé text
// traces (PajeNG, ViTE, Framesoc, SimGrid, ...) and, in importer/otf2, OTF2
// archives (Score-P, ...) — into a form the aggregator reads: a Trace is
// an aggregate.Source, and DefaultSpec gives its container tree as the
// hierarchy.
package importer

import (
	"io"
	"regexp"
	"strconv"

	"mpiflow/aggregate"
)

// Container is one node of an imported trace's container tree (a Pajé
// container, an OTF2 system tree node, location group or location).
type Container struct {
	Name string
	// Parent is the index of the parent container, -1 at the top.
	Parent int
	// Resource is the index into Trace.Res of the container's states, -1
	// when the container has no state of its own.
	Resource int
}

// Trace is an imported state trace held in memory: per resource (a
// container with states), intervals of time in one state. It implements
// aggregate.Source.
//
// Nested states (Pajé PushState, OTF2 nested regions) are flattened: time
// goes to the innermost state, so a resource is in at most one state at a
// time, as in the traces mpiflow reconstructs.
type Trace struct {
	// Name is used as the root of the hierarchy when the trace has several
	// top-level containers (the file name).
	Name       string
	Containers []Container
	Res        []aggregate.Resource
	StateNames []string
	Start, End int64 // ns
	// Events holds the intervals of each resource in time order.
	Events [][]aggregate.StateEvent
	// Values, set when the trace was imported as variables (Pajé
	// variables), holds the pieces of each resource's variables; then
	// StateNames names the variables and Events is empty (see Source).
	Values [][]aggregate.ValueEvent
}

var _ aggregate.Source = (*Trace)(nil)

// Resources implements aggregate.Source.
func (t *Trace) Resources() []aggregate.Resource { return t.Res }

// States implements aggregate.Source.
func (t *Trace) States() []string { return t.StateNames }

// Span implements aggregate.Source.
func (t *Trace) Span() (int64, int64) { return t.Start, t.End }

// Open implements aggregate.Source.
func (t *Trace) Open(r int) (aggregate.Reader, error) {
	if r < 0 || r >= len(t.Events) {
		return &sliceReader{}, nil
	}
	return &sliceReader{evs: t.Events[r]}, nil
}

type sliceReader struct{ evs []aggregate.StateEvent }

func (s *sliceReader) Read(buf []aggregate.StateEvent) (int, error) {
	if len(s.evs) == 0 {
		return 0, io.EOF
	}
	n := copy(buf, s.evs)
	s.evs = s.evs[n:]
	return n, nil
}

func (s *sliceReader) Close() error { return nil }

// DefaultSpec is the container tree as a hierarchy: each container with
// states lists its resource, and subtrees without states are left out.
// A single top-level container is the root; several get a root named
// after the trace.
func (t *Trace) DefaultSpec() *aggregate.Spec {
	children := make([][]int, len(t.Containers))
	var tops []int
	for i, c := range t.Containers {
		if c.Parent >= 0 && c.Parent < len(t.Containers) {
			children[c.Parent] = append(children[c.Parent], i)
		} else {
			tops = append(tops, i)
		}
	}
	// build returns the spec of container i's subtree; a container with
	// states and nothing below is a plain rank of its parent (leaf is set).
	var build func(i int) (spec *aggregate.Spec, rank int, leaf bool)
	build = func(i int) (*aggregate.Spec, int, bool) {
		c := t.Containers[i]
		s := &aggregate.Spec{Name: c.Name}
		if s.Name == "" {
			s.Name = "container " + strconv.Itoa(i)
		}
		for _, k := range children[i] {
			cs, rank, leaf := build(k)
			switch {
			case leaf:
				s.Ranks = append(s.Ranks, rank)
			case cs != nil:
				s.Children = append(s.Children, *cs)
			}
		}
		if c.Resource >= 0 {
			rank := t.Res[c.Resource].Rank
			if len(s.Ranks) == 0 && len(s.Children) == 0 {
				return nil, rank, true
			}
			s.Ranks = append([]int{rank}, s.Ranks...)
		}
		if len(s.Ranks) == 0 && len(s.Children) == 0 {
			return nil, 0, false
		}
		return s, 0, false
	}
	root := &aggregate.Spec{}
	for _, i := range tops {
		cs, rank, leaf := build(i)
		switch {
		case leaf:
			root.Ranks = append(root.Ranks, rank)
		case cs != nil:
			root.Children = append(root.Children, *cs)
		}
	}
	if len(root.Ranks) == 0 && len(root.Children) == 1 {
		return &root.Children[0]
	}
	name := t.Name
	if name == "" {
		name = "trace"
	}
	root.Name = name
	return root
}

var rankName = regexp.MustCompile(`^(?:rank|MPI Rank) (\d+)(?: thread \d+)?$`)

// SetRanks numbers the resources of t for the aggregator's hierarchy files
// (importers call it once the resources are known): when every resource
// has a distinct name "rank N", "rank N thread T" or "MPI Rank N" (as
// mpiflow and Score-P name them), N is its rank, so threads of a rank
// group under it; otherwise each resource is its own rank, numbered in
// order.
func SetRanks(t *Trace) {
	ranks := make([]int, len(t.Res))
	seen := map[string]bool{}
	for i, r := range t.Res {
		m := rankName.FindStringSubmatch(r.Name)
		n, err := 0, error(nil)
		if m != nil {
			n, err = strconv.Atoi(m[1])
		}
		if m == nil || err != nil || seen[r.Name] {
			for i := range t.Res {
				t.Res[i].Rank = i
			}
			return
		}
		seen[r.Name] = true
		ranks[i] = n
	}
	for i := range t.Res {
		t.Res[i].Rank = ranks[i]
	}
}
