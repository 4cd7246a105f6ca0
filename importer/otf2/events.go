//go:build cgo && !nootf2

package otf2

import (
	"errors"
	"fmt"
	"math/bits"

	"mpiflow/aggregate"
	"mpiflow/importer"
)

// events turns the Enter and Leave events of an archive, in global time
// order, into the state intervals of a trace whose resources are set: a
// location's state is the innermost region it is in. It holds the checks
// of the events' input apart from the OTF2 library, so they can be fuzzed.
type events struct {
	tr                 *importer.Trace
	resolution, offset uint64 // clock properties: ticks per second, first tick
	regionName         map[uint32]string
	stacks             []regionStack // per resource
	stateOf            map[uint32]int
	last               int64
}

type regionStack struct {
	regions []uint32
	since   int64
}

func newEvents(tr *importer.Trace, resolution, offset uint64, regionName map[uint32]string) *events {
	tr.Events = make([][]aggregate.StateEvent, len(tr.Res))
	return &events{tr: tr, resolution: resolution, offset: offset, regionName: regionName,
		stacks: make([]regionStack, len(tr.Res)), stateOf: map[uint32]int{}}
}

// toNS converts a timestamp in ticks into ns since the clock's offset.
func (e *events) toNS(t uint64) (int64, error) {
	if t < e.offset {
		return 0, fmt.Errorf("otf2: time %d before the global offset %d", t, e.offset)
	}
	hi, lo := bits.Mul64(t-e.offset, 1_000_000_000)
	if hi >= e.resolution {
		return 0, fmt.Errorf("otf2: time %d out of range", t)
	}
	q, _ := bits.Div64(hi, lo, e.resolution)
	if q > 1<<62 {
		return 0, fmt.Errorf("otf2: time %d out of range", t)
	}
	return int64(q), nil
}

// closeTop ends the interval of resource res's innermost region at t.
func (e *events) closeTop(res int, t int64) {
	s := &e.stacks[res]
	if n := len(s.regions); n > 0 && t > s.since {
		reg := s.regions[n-1]
		st, ok := e.stateOf[reg]
		if !ok {
			st = len(e.tr.StateNames)
			e.stateOf[reg] = st
			name := e.regionName[reg]
			if name == "" {
				name = fmt.Sprintf("region %d", reg)
			}
			e.tr.StateNames = append(e.tr.StateNames, name)
		}
		e.tr.Events[res] = append(e.tr.Events[res], aggregate.StateEvent{Resource: res, State: st, Start: s.since, End: t})
	}
	s.since = t
}

// add handles an Enter (enter true) or Leave of region at tick t on
// resource res.
func (e *events) add(res int, tick uint64, region uint32, enter bool) error {
	t, err := e.toNS(tick)
	if err != nil {
		return err
	}
	s := &e.stacks[res]
	if t < s.since {
		return fmt.Errorf("otf2: location %q: time goes back at %d ns", e.tr.Res[res].Name, t)
	}
	e.last = max(e.last, t)
	e.closeTop(res, t)
	if enter {
		s.regions = append(s.regions, region)
		return nil
	}
	if k := len(s.regions); k == 0 || s.regions[k-1] != region {
		return fmt.Errorf("otf2: location %q: Leave of region %q at %d ns does not match the last Enter",
			e.tr.Res[res].Name, e.regionName[region], t)
	}
	s.regions = s.regions[:len(s.regions)-1]
	return nil
}

// finish ends the regions still entered at the trace's last event and
// sets the trace's span and ranks.
func (e *events) finish() error {
	tr := e.tr
	first := true
	for res := range e.stacks {
		e.closeTop(res, e.last)
		evs := tr.Events[res]
		if len(evs) == 0 {
			continue
		}
		if first || evs[0].Start < tr.Start {
			tr.Start = evs[0].Start
		}
		if first || evs[len(evs)-1].End > tr.End {
			tr.End = evs[len(evs)-1].End
		}
		first = false
	}
	if first {
		return errors.New("otf2: the archive has no Enter/Leave events")
	}
	importer.SetRanks(tr)
	return nil
}
