package aggregate

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"mpiflow/internal/parallel"
)

// DefaultSlices is the default number of time slices of a model.
const DefaultSlices = 30

// MaxSlices bounds the number of time slices: the best-partition algorithm
// costs O(|S| |T|^3) time and O(|S| |T|^2) memory.
const MaxSlices = 1000

// Model is the microscopic model of a trace: for each resource, time slice
// and state, the ns the resource spent in the state during the slice.
type Model struct {
	Resources []Resource
	States    []string
	// Bounds holds the slice boundaries in ns: slice t is
	// [Bounds[t], Bounds[t+1]). len(Bounds) = number of slices + 1.
	Bounds []int64
	// Dur is indexed [(resource*slices + slice)*states + state].
	Dur []int64
	// Weight, if not nil, is the number of original resources that each
	// resource sums (see IntegrateSpace); proportions divide by it.
	Weight []int
}

func (m *Model) weight(r int) int {
	if m.Weight == nil {
		return 1
	}
	return m.Weight[r]
}

// Slices is the number of time slices.
func (m *Model) Slices() int { return len(m.Bounds) - 1 }

// Cell returns the durations of resource r in slice t, one per state.
func (m *Model) Cell(r, t int) []int64 {
	x := len(m.States)
	i := (r*m.Slices() + t) * x
	return m.Dur[i : i+x : i+x]
}

// SliceDur is the length of slice t in ns.
func (m *Model) SliceDur(t int) int64 { return m.Bounds[t+1] - m.Bounds[t] }

// NewModel returns an empty model of the given resources and states over
// [start, end) cut into slices regular slices. Slice boundaries are rounded
// down to whole ns, so slices differ in length by at most 1 ns.
func NewModel(res []Resource, states []string, start, end int64, slices int) (*Model, error) {
	switch {
	case slices < 1 || slices > MaxSlices:
		return nil, fmt.Errorf("%d time slices: want 1 to %d", slices, MaxSlices)
	case end-start < int64(slices):
		return nil, fmt.Errorf("time span [%d, %d) ns is shorter than %d slices of 1 ns", start, end, slices)
	case len(res) == 0:
		return nil, errors.New("no resources")
	case len(states) == 0:
		return nil, errors.New("no states")
	}
	span := uint64(end - start)
	b := make([]int64, slices+1)
	for t := range b {
		// t*span may not fit in 64 bits for long spans, hence Mul64.
		hi, lo := bits.Mul64(uint64(t), span)
		q, _ := bits.Div64(hi, lo, uint64(slices))
		b[t] = start + int64(q)
	}
	return &Model{
		Resources: res,
		States:    states,
		Bounds:    b,
		Dur:       make([]int64, len(res)*slices*len(states)),
	}, nil
}

// accumulator adds the events of one resource to that resource's row of
// the model. Its cursor remembers the slice of the last event, because
// events mostly come in time order and then no division is needed.
type accumulator struct {
	row    []int64 // the resource's slices x states durations
	bounds []int64
	nx     int
	cursor int
}

// add splits [s, e) of state x over the slices it overlaps.
func (a *accumulator) add(x int, s, e int64) {
	b := a.bounds
	nt := len(b) - 1
	if s < b[0] {
		s = b[0]
	}
	if e > b[nt] {
		e = b[nt]
	}
	if e <= s {
		return
	}
	t := a.cursor
	if s < b[t] || s >= b[t+1] {
		if s < b[t] || t+2 > nt || s >= b[t+2] {
			t = a.locate(s)
		} else {
			t++
		}
	}
	for {
		if e <= b[t+1] {
			a.row[t*a.nx+x] += e - s
			break
		}
		a.row[t*a.nx+x] += b[t+1] - s
		s = b[t+1]
		t++
	}
	a.cursor = t
}

// slice tells where [s, e] falls in a's window: in slice t >= 0, outside
// the window (t = -1), or across slice bounds (ok false).
func (a *accumulator) slice(s, e int64) (t int, ok bool) {
	b := a.bounds
	nt := len(b) - 1
	if e <= b[0] || s >= b[nt] {
		return -1, true
	}
	if s >= b[0] && e <= b[nt] {
		if t := a.locate(s); e <= b[t+1] {
			return t, true
		}
	}
	return 0, false
}

// locate returns the slice that holds time s, with b[0] <= s < b[nt].
func (a *accumulator) locate(s int64) int {
	b := a.bounds
	nt := len(b) - 1
	span := uint64(b[nt] - b[0])
	hi, lo := bits.Mul64(uint64(s-b[0]), uint64(nt))
	q, _ := bits.Div64(hi, lo, span)
	t := int(q)
	// The estimate can be one slice short because the bounds are rounded.
	for t+1 < nt && s >= b[t+1] {
		t++
	}
	for t > 0 && s < b[t] {
		t--
	}
	return t
}

// Builder builds a model from events given one at a time in any order, for
// sources that interleave the events of all resources in one stream.
type Builder struct {
	m   *Model
	acc []accumulator
}

// NewBuilder returns a Builder of an empty model (see NewModel).
func NewBuilder(res []Resource, states []string, start, end int64, slices int) (*Builder, error) {
	m, err := NewModel(res, states, start, end, slices)
	if err != nil {
		return nil, err
	}
	acc := make([]accumulator, len(res))
	for r := range acc {
		acc[r] = m.accumulator(r)
	}
	return &Builder{m: m, acc: acc}, nil
}

func (m *Model) accumulator(r int) accumulator {
	n := m.Slices() * len(m.States)
	return accumulator{row: m.Dur[r*n : (r+1)*n], bounds: m.Bounds, nx: len(m.States)}
}

// Add adds one event; the parts outside the model's span are dropped.
func (b *Builder) Add(ev StateEvent) error {
	if uint(ev.Resource) >= uint(len(b.acc)) {
		return fmt.Errorf("event of resource %d: the trace has %d resources", ev.Resource, len(b.acc))
	}
	if uint(ev.State) >= uint(len(b.m.States)) {
		return fmt.Errorf("event of state %d: the trace has %d states", ev.State, len(b.m.States))
	}
	if ev.End < ev.Start {
		return fmt.Errorf("event of resource %d ends (%d ns) before it starts (%d ns)", ev.Resource, ev.End, ev.Start)
	}
	b.acc[ev.Resource].add(ev.State, ev.Start, ev.End)
	return nil
}

// Model returns the model built so far.
func (b *Builder) Model() *Model { return b.m }

// readBatch is the number of events read from a Reader at once.
const readBatch = 4096

// Build reads every resource of src once and returns its microscopic model
// over its span with the given number of slices. Resources are read by up
// to workers goroutines (GOMAXPROCS if workers < 1); each writes only its
// own rows.
func Build(src Source, slices, workers int) (*Model, error) {
	start, end := src.Span()
	return BuildWindow(src, start, end, slices, workers)
}

// BuildWindow is Build over the window [start, end) of the source's time
// axis: states outside it are left out.
func BuildWindow(src Source, start, end int64, slices, workers int) (*Model, error) {
	ms, err := BuildWindows(src, []Window{{start, end, slices}}, workers)
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// Window is a part [Start, End) of a source's time axis cut into Slices
// slices.
type Window struct {
	Start, End int64
	Slices     int
}

// BuildWindows returns the models of the windows wins (see BuildWindow),
// reading each resource of src once for all of them: a RankSource loads
// each rank once (FlowOptions.Load).
func BuildWindows(src Source, wins []Window, workers int) ([]*Model, error) {
	ms := make([]*Model, len(wins))
	for i, w := range wins {
		var err error
		if ms[i], err = NewModel(src.Resources(), src.States(), w.Start, w.End, w.Slices); err != nil {
			return nil, err
		}
	}
	if len(ms) == 0 {
		return ms, nil
	}
	var pool sync.Pool
	err := parallel.For(len(ms[0].Resources), workers, func(r int) error {
		buf, ok := pool.Get().(*[]StateEvent)
		if !ok {
			b := make([]StateEvent, readBatch)
			buf = &b
		}
		defer pool.Put(buf)
		if err := read(ms, src, r, *buf); err != nil {
			return fmt.Errorf("resource %d (%s): %w", r, ms[0].Resources[r].Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// read adds every event of resource r of src to the models ms. The
// sources of mpiflow ranks add their states themselves, by timing
// interval where they can (addRank), Values integrate their variables;
// any other source, a type that embeds one and has an Open of its own
// included, is read through Open.
func read(ms []*Model, src Source, r int, buf []StateEvent) error {
	accs := make([]*accumulator, len(ms))
	for i, m := range ms {
		acc := m.accumulator(r)
		accs[i] = &acc
	}
	if v, ok := src.(*Values); ok {
		return v.add(r, accs)
	}
	if s, ok := src.(*RankSource); ok {
		rk, err := s.rank(r)
		if err != nil {
			return err
		}
		var v RankVisitor
		if s.visit != nil {
			v = s.visit(r, rk)
		}
		walked, err := s.addRank(r, rk, accs, buf, v)
		if v != nil {
			v.End(walked)
		}
		return err
	}
	rd, err := src.Open(r)
	if err != nil {
		return err
	}
	return addAll(accs, rd, buf)
}

// addAll adds every event of rd to each of accs and closes it.
func addAll(accs []*accumulator, rd Reader, buf []StateEvent) error {
	nx := uint(accs[0].nx)
	for {
		n, err := rd.Read(buf)
		for _, ev := range buf[:n] {
			if uint(ev.State) >= nx {
				rd.Close()
				return fmt.Errorf("event of state %d: the trace has %d states", ev.State, nx)
			}
			for i := range accs {
				accs[i].add(ev.State, ev.Start, ev.End)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rd.Close()
			return err
		}
	}
	return rd.Close()
}
