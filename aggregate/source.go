// Package aggregate builds Ocelotl-style spatiotemporal aggregations of
// state traces (Lamarche-Perrin, Schnorr, Vincent, Demazeau, Dosimont).
//
// A state trace says, for each resource (an MPI rank or thread), which state
// it was in and when. The trace is first reduced to a microscopic model:
// resources x regular time slices x states, each cell holding the time the
// resource spent in the state during the slice (see Model, Build). A
// hierarchy groups the resources (rank -> host -> job by default, see
// Hierarchy). The best partition for a parameter p in [0,1] (see
// Aggregator.Best) then covers resources x slices with aggregates, each a
// hierarchy node over an interval of slices, trading complexity reduction
// (gain) against information loss: p = 0 keeps every microscopic cell, p = 1
// merges everything. PValues lists the p where the best partition changes.
//
// Any trace format can feed the model through the Source interface; the
// ranks of an mpiflow file are adapted by RankSource.
package aggregate

import (
	"fmt"
	"io"
)

// StateEvent is one interval of time during which a resource was in a
// state. Times are integer nanoseconds on the source's common time axis.
type StateEvent struct {
	Resource int // index into the source's resources
	State    int // index into the source's state names
	Start    int64
	End      int64
}

// Resource describes one resource of a trace. Rank is the MPI world rank it
// belongs to: hierarchy files name ranks, and a rank with several resources
// (threads) becomes a hierarchy node over them.
type Resource struct {
	Name string
	Rank int
}

// Source is a state trace that can be read one resource at a time, so the
// microscopic model can be built in parallel over resources without the
// trace ever being held in memory.
type Source interface {
	// Resources lists the resources; StateEvent.Resource indexes it.
	Resources() []Resource
	// States lists the state names; StateEvent.State indexes it.
	States() []string
	// Span is the time covered by the trace, [start, end) in ns.
	Span() (start, end int64)
	// Open returns a reader over the events of resource r. It may be
	// called concurrently for different resources.
	Open(r int) (Reader, error)
}

// Reader streams the events of one resource.
type Reader interface {
	// Read fills buf with the next events and returns how many it wrote.
	// At the end it returns 0 and io.EOF. Events of one resource should
	// come in time order (the model accepts any order, only slower).
	Read(buf []StateEvent) (int, error)
	// Close releases the reader's resources.
	Close() error
}

// MemSource is a Source over events held in memory, for tests and small
// traces; Events[r] holds the events of resource r.
type MemSource struct {
	Res        []Resource
	StateNames []string
	Start, End int64
	Events     [][]StateEvent
}

// Resources implements Source.
func (s *MemSource) Resources() []Resource { return s.Res }

// States implements Source.
func (s *MemSource) States() []string { return s.StateNames }

// Span implements Source.
func (s *MemSource) Span() (int64, int64) { return s.Start, s.End }

// Open implements Source.
func (s *MemSource) Open(r int) (Reader, error) {
	if r < 0 || r >= len(s.Res) {
		return nil, fmt.Errorf("no resource %d (the source has %d)", r, len(s.Res))
	}
	if r >= len(s.Events) {
		return &memReader{}, nil // a resource without events
	}
	return &memReader{evs: s.Events[r]}, nil
}

type memReader struct{ evs []StateEvent }

func (m *memReader) Read(buf []StateEvent) (int, error) {
	if len(m.evs) == 0 {
		return 0, io.EOF
	}
	n := copy(buf, m.evs)
	m.evs = m.evs[n:]
	return n, nil
}

func (m *memReader) Close() error { return nil }
