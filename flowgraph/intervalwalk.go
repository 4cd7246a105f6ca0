package flowgraph

// IntervalVisitor is a view of a graph's timing intervals, taken one after
// the other (IntervalIter.Walk): each interval whole, from its sums, or
// event by event.
type IntervalVisitor interface {
	// Interval takes the current interval of it and reports whether the
	// visitor needs its events: Event and Run then take them, and Done
	// follows.
	Interval(it *IntervalIter) bool
	// Event takes the next event.
	Event(ev Event)
	// TakesRun reports whether Run would take rn whole, adding what its
	// events would; Run follows at once when every visitor that needs the
	// events takes it, else they come one by one.
	TakesRun(rn Run) bool
	// Run takes the run of repeats rn.
	Run(rn Run)
	// Done follows the events of an interval.
	Done(it *IntervalIter)
}

// Walk gives the remaining intervals of it to the visitors vs, the events
// of each once for all those that need them, so that several views of a
// rank cost one walk of its events.
func (it *IntervalIter) Walk(vs ...IntervalVisitor) error {
	need := make([]IntervalVisitor, 0, len(vs))
	event := func(ev Event) {
		for _, v := range need {
			v.Event(ev)
		}
	}
	run := func(rn Run) bool {
		for _, v := range need {
			if !v.TakesRun(rn) {
				return false
			}
		}
		for _, v := range need {
			v.Run(rn)
		}
		return true
	}
	for it.Next() {
		need = need[:0]
		for _, v := range vs {
			if v.Interval(it) {
				need = append(need, v)
			}
		}
		if len(need) == 0 {
			continue
		}
		if err := it.EventsRuns(event, run); err != nil {
			return err
		}
		for _, v := range need {
			v.Done(it)
		}
	}
	return it.Err()
}
