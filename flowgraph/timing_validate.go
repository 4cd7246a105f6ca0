package flowgraph

import (
	"fmt"
	"math/bits"
)

// validate checks t against a graph of nn nodes, ne edges and nev events:
// indices in range, at most the intervals the events need, no interval
// with more nodes or edges than it has events, and totals that do not
// overflow.
func (t *Timing) validate(nn, ne int, nev int64) error {
	if t.counted && t.events > nev {
		return fmt.Errorf("timing: %d intervals of %d events, the graph has %d", t.n, t.events, nev)
	}
	need := nev / t.spacing
	if nev%t.spacing != 0 {
		need++
	}
	if !t.counted && t.n > need {
		return fmt.Errorf("timing: %d intervals of %d events, %d events need %d", t.n, t.spacing, nev, need)
	}
	var total int64
	add := func(v int64) bool {
		s, c := bits.Add64(uint64(total), uint64(v), 0)
		total = int64(s)
		return c == 0 && total >= 0
	}
	it := t.Intervals()
	for it.Next() {
		iv := it.Interval()
		if !add(iv.MPIRest) || !add(iv.ComputeRest) {
			return fmt.Errorf("timing: interval %d: total time overflows", iv.Index)
		}
		events := min(iv.Events, nev-iv.Start)
		var nodes, edges int64
		for _, e := range iv.Entries {
			if e.Edge {
				edges++
			} else {
				nodes++
			}
			if (e.Edge && e.Index >= ne) || (!e.Edge && e.Index >= nn) {
				return fmt.Errorf("timing: interval %d: %s", iv.Index, e.describe(nn, ne))
			}
			if !add(e.Sum) {
				return fmt.Errorf("timing: interval %d: total time overflows", iv.Index)
			}
		}
		if nodes > events || edges > events {
			return fmt.Errorf("timing: interval %d: %d node and %d edge sums for %d events", iv.Index, nodes, edges, events)
		}
	}
	return it.Err()
}

func (e TimingEntry) describe(nn, ne int) string {
	if e.Edge {
		return fmt.Sprintf("edge %d out of range (%d edges)", e.Index, ne)
	}
	return fmt.Sprintf("node %d out of range (%d nodes)", e.Index, nn)
}
