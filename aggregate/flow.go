package aggregate

import (
	"fmt"
	"io"
	"slices"

	"mpiflow/flowgraph"
	"mpiflow/mpicall"
)

// ComputeState is the state of a rank between two MPI calls.
const ComputeState = "Compute"

// Call groups, the states of a grouped trace besides ComputeState
// (mpicall's).
const (
	GroupP2P        = mpicall.P2P
	GroupCollective = mpicall.Collective
	GroupWait       = mpicall.Wait
	GroupIO         = mpicall.IO
	GroupOther      = mpicall.Other
)

var groupOrder = []string{ComputeState, GroupP2P, GroupCollective, GroupWait, GroupIO, GroupOther}

// CallGroup returns the group of an MPI call name (mpicall.Group).
func CallGroup(call string) string { return mpicall.Group(call) }

// FlowOptions tune a RankSource.
type FlowOptions struct {
	// Group replaces each call name by its CallGroup, but for the calls
	// in Keep, which stay states of their own.
	Group bool
	Keep  map[string]bool
	// Load, when set, returns rank i whole when its events are read: the
	// ranks given may then lack their sequences
	// (analysis.Options.NoSequences), and only the ranks being read hold
	// theirs.
	Load func(i int) (*flowgraph.Rank, error)
	// Visit, when set, returns another view of rank i (r) walked with the
	// source's own, so that both cost one walk of its events; nil for
	// none.
	Visit func(i int, r *flowgraph.Rank) RankVisitor
}

// RankVisitor is a view of a rank's timing intervals that a RankSource
// walks with its own (FlowOptions.Visit).
type RankVisitor interface {
	flowgraph.IntervalVisitor
	// End follows the walk: walked tells whether the visitor was given
	// every interval of the rank; if not, it was given part of them or
	// none, and the rank must be walked again.
	End(walked bool)
}

// flowStates is what a RankSource knows of its ranks: the resources, the
// state names and the time span found by scanning the ranks' graphs, and
// the state of each call.
type flowStates struct {
	group      bool
	keep       map[string]bool
	job        string
	res        []Resource
	hosts      map[int]string
	states     []string
	stateOf    map[string]int
	start, end int64
}

// rankScan is what a scan of one rank's graph (no event) finds.
type rankScan struct {
	rank, thread int
	start, end   int64
	calls        []string
	host         string
}

func scanRank(r *flowgraph.Rank) rankScan {
	// The span covers the summed call and compute times too, which can
	// end a little after the closing anchor.
	end := max(r.End(), r.Start+r.Graph.TimeSum())
	s := rankScan{rank: r.Rank, thread: r.Thread, start: r.Start, end: end, host: r.Host}
	for _, nd := range r.Graph.Nodes {
		s.calls = append(s.calls, nd.Key.Call)
	}
	return s
}

// newFlowStates names the resources (a thread of a rank recorded by
// several is a resource of its own), takes hosts from the header when it
// has them and from the ranks otherwise, and orders the states: Compute
// first, then the calls (those kept, with Group) by name, then the groups in
// a fixed order.
func newFlowStates(h *flowgraph.Header, scans []rankScan, opt FlowOptions) *flowStates {
	fs := &flowStates{group: opt.Group, keep: opt.Keep, job: h.JobID, hosts: map[int]string{}, stateOf: map[string]int{}}
	threads := map[int]int{}
	for _, s := range scans {
		threads[s.rank]++
	}
	names := map[string]bool{}
	for i, s := range scans {
		name := fmt.Sprintf("rank %d", s.rank)
		if threads[s.rank] > 1 {
			name = fmt.Sprintf("rank %d thread %d", s.rank, s.thread)
		}
		fs.res = append(fs.res, Resource{Name: name, Rank: s.rank})
		if i == 0 || s.start < fs.start {
			fs.start = s.start
		}
		if i == 0 || s.end > fs.end {
			fs.end = s.end
		}
		if hs := h.Hosts; s.rank >= 0 && s.rank < len(hs) && hs[s.rank] != "" {
			fs.hosts[s.rank] = hs[s.rank]
		} else if s.host != "" {
			fs.hosts[s.rank] = s.host
		}
		for _, c := range s.calls {
			names[fs.stateName(c)] = true
		}
	}
	// Compute, the calls by name, then the groups in their order.
	delete(names, ComputeState)
	fs.states = append(fs.states, ComputeState)
	var calls []string
	for c := range names {
		if !fs.group || fs.keep[c] {
			calls = append(calls, c)
		}
	}
	slices.Sort(calls)
	fs.states = append(fs.states, calls...)
	if fs.group {
		for _, g := range groupOrder[1:] {
			if names[g] {
				fs.states = append(fs.states, g)
			}
		}
	}
	for i, s := range fs.states {
		fs.stateOf[s] = i
	}
	return fs
}

func (fs *flowStates) stateName(call string) string {
	if fs.group && !fs.keep[call] {
		return CallGroup(call)
	}
	return call
}

// Resources implements Source.
func (fs *flowStates) Resources() []Resource { return fs.res }

// States implements Source.
func (fs *flowStates) States() []string { return fs.states }

// Span implements Source.
func (fs *flowStates) Span() (int64, int64) { return fs.start, fs.end }

// HostOf returns the host of a rank, "" if unknown.
func (fs *flowStates) HostOf(rank int) string { return fs.hosts[rank] }

// DefaultSpec is the hierarchy rank -> host -> job of the trace.
func (fs *flowStates) DefaultSpec() *Spec {
	return HostSpec(fs.job, fs.res, fs.HostOf)
}

// statesOf maps the nodes of r's graph to their states.
func (fs *flowStates) statesOf(r *flowgraph.Rank) ([]int, error) {
	st := make([]int, len(r.Graph.Nodes))
	for k, nd := range r.Graph.Nodes {
		x, ok := fs.stateOf[fs.stateName(nd.Key.Call)]
		if !ok {
			return nil, fmt.Errorf("rank %d: call %q was not seen when the ranks were scanned", r.Rank, nd.Key.Call)
		}
		st[k] = x
	}
	return st, nil
}

// addRank adds the states of r, resource i, to each of accs: by timing
// interval where the graph's timing allows it (flowgraph.IntervalIter),
// with v (nil: none) if set, else by reading its reconstructed events. The
// accumulators share one walk, so models of several windows cost little
// more than one. It reports whether v was walked.
func (fs *flowStates) addRank(i int, r *flowgraph.Rank, accs []*accumulator, buf []StateEvent, v RankVisitor) (bool, error) {
	st, err := fs.statesOf(r)
	if err != nil {
		return false, err
	}
	if addIntervals(r, st, accs, v) {
		return v != nil, nil
	}
	return false, addAll(accs, &flowReader{it: r.Graph.Events(), res: i, state: st, base: r.Start}, buf)
}

// addIntervals adds the states of r to accs interval by interval, as
// flowReader's events would add them (intervalAdder), walking v too if
// set. The cost follows the intervals, not the events. It reports false,
// having added nothing, when the graph's timing is not made of whole
// intervals or is inconsistent with its sequence numbers: then the events
// must be read.
func addIntervals(r *flowgraph.Rank, st []int, accs []*accumulator, v RankVisitor) bool {
	it, err := r.Graph.TimedIntervals()
	if err != nil {
		return false
	}
	a := &intervalAdder{start: r.Start, nev: r.Graph.NumEvents, st: st, accs: accs,
		cutting: make([]*accumulator, 0, len(accs)), at: make([]int, len(accs))}
	vs := []flowgraph.IntervalVisitor{a}
	if v != nil {
		vs = append(vs, v)
	}
	if it.Walk(vs...) != nil {
		for _, acc := range accs {
			clear(acc.row)
		}
		return false
	}
	return true
}

// intervalAdder adds a rank's intervals to accumulators
// (flowgraph.IntervalVisitor): an interval within one slice of an
// accumulator adds its nodes' sums to their states and its edges' sums to
// ComputeState (its events and the compute phases between them and after
// the last, which are flowReader's ComputeState events, all fall in the
// slice); the others add their events, timed as EventIter times them.
type intervalAdder struct {
	start, nev int64 // the rank's start and events
	st         []int // the state of each node
	accs       []*accumulator
	// cutting are the accumulators that need the current interval's
	// events, at a run's slice in each (TakesRun).
	cutting     []*accumulator
	at          []int
	first, stop int64 // the current interval's first event and end
	prevEnd     int64 // the end of the last event
}

// Interval implements flowgraph.IntervalVisitor.
func (a *intervalAdder) Interval(it *flowgraph.IntervalIter) bool {
	s, e := a.start+it.Start, a.start+it.Stop
	a.first, a.stop = it.First, e
	a.cutting = a.cutting[:0]
	for _, acc := range a.accs {
		t, ok := acc.slice(s, e)
		switch {
		case !ok:
			a.cutting = append(a.cutting, acc)
		case t >= 0:
			row := acc.row[t*acc.nx : (t+1)*acc.nx]
			for _, n := range it.Nodes {
				row[a.st[n.Index]] += n.Sum
			}
			for _, ed := range it.Edges {
				row[0] += ed.Sum
			}
		}
	}
	return len(a.cutting) > 0
}

// Event implements flowgraph.IntervalVisitor.
func (a *intervalAdder) Event(ev flowgraph.Event) {
	s, e := a.start+ev.Start, a.start+ev.End
	for _, acc := range a.cutting {
		if ev.Index > a.first && s > a.prevEnd {
			acc.add(0, a.prevEnd, s)
		}
		acc.add(a.st[ev.Node], s, e)
	}
	a.prevEnd = e
}

// TakesRun implements flowgraph.IntervalVisitor: a run of repeats inside
// one slice of every accumulator adds its sums at once, as its events
// would.
func (a *intervalAdder) TakesRun(rn flowgraph.Run) bool {
	s, e := a.start+rn.Start, a.start+rn.End
	for k, acc := range a.cutting {
		var ok bool
		if a.at[k], ok = acc.slice(s, e); !ok {
			return false
		}
	}
	return true
}

// Run implements flowgraph.IntervalVisitor.
func (a *intervalAdder) Run(rn flowgraph.Run) {
	s := a.start + rn.Start
	for k, acc := range a.cutting {
		if rn.First > a.first && s > a.prevEnd {
			acc.add(0, a.prevEnd, s)
		}
		if t := a.at[k]; t >= 0 {
			row := acc.row[t*acc.nx : (t+1)*acc.nx]
			row[a.st[rn.Node]] += rn.Busy
			row[0] += rn.End - rn.Start - rn.Busy
		}
	}
	a.prevEnd = a.start + rn.End
}

// Done implements flowgraph.IntervalVisitor: the compute phase after the
// interval's last event.
func (a *intervalAdder) Done(it *flowgraph.IntervalIter) {
	if it.End < a.nev && a.stop > a.prevEnd {
		for _, acc := range a.cutting {
			acc.add(0, a.prevEnd, a.stop)
		}
	}
}

// EventReader returns a reader of resource i, whose graph is r's, over
// events instead of r's reconstruction: the same states and time axis, so
// another trace of the same run (the recorded full trace, whose node
// numbers are those of r's graph) gives a model comparable with the
// source's. Closing the reader does not close events.
func (fs *flowStates) EventReader(i int, r *flowgraph.Rank, events flowgraph.EventSource) (Reader, error) {
	st, err := fs.statesOf(r)
	if err != nil {
		return nil, err
	}
	return &flowReader{it: events, res: i, state: st, base: r.Start}, nil
}

// RankSource is the state trace of decoded ranks of an mpiflow file: each
// rank (thread) is a resource whose states are its MPI calls,
// reconstructed from the event flow graph, and ComputeState between them.
// Times are ns since Header.StartUnixNano.
type RankSource struct {
	*flowStates
	ranks []*flowgraph.Rank
	load  func(i int) (*flowgraph.Rank, error)
	visit func(i int, r *flowgraph.Rank) RankVisitor
}

// NewRankSource is the state trace of ranks, which are resources in this
// order; h gives the job's name and the ranks' hosts (nil for none). The
// ranks must not change while the source is in use.
func NewRankSource(h *flowgraph.Header, ranks []*flowgraph.Rank, opt FlowOptions) (*RankSource, error) {
	if len(ranks) == 0 {
		return nil, fmt.Errorf("rank source: no ranks")
	}
	if h == nil {
		h = &flowgraph.Header{}
	}
	scans := make([]rankScan, len(ranks))
	for i, r := range ranks {
		scans[i] = scanRank(r)
	}
	return &RankSource{flowStates: newFlowStates(h, scans, opt), ranks: ranks, load: opt.Load, visit: opt.Visit}, nil
}

// rank is rank i with its sequences.
func (s *RankSource) rank(i int) (*flowgraph.Rank, error) {
	if i < 0 || i >= len(s.ranks) {
		return nil, fmt.Errorf("no resource %d (the source has %d)", i, len(s.ranks))
	}
	if s.load != nil {
		return s.load(i)
	}
	return s.ranks[i], nil
}

// Open implements Source: it reconstructs the events of rank i on the
// fly.
func (s *RankSource) Open(i int) (Reader, error) {
	r, err := s.rank(i)
	if err != nil {
		return nil, err
	}
	return s.EventReader(i, r, r.Graph.Events())
}

// flowReader turns reconstructed events into states: the call itself, and
// ComputeState (state 0) from the end of the previous call.
type flowReader struct {
	it      flowgraph.EventSource
	res     int
	state   []int
	base    int64
	prevEnd int64
	started bool
}

func (fr *flowReader) Read(buf []StateEvent) (int, error) {
	if len(buf) < 2 {
		// Each call can yield two states.
		return 0, io.ErrShortBuffer
	}
	n := 0
	for n+2 <= len(buf) && fr.it.Next() {
		ev := fr.it.Event()
		if uint(ev.Node) >= uint(len(fr.state)) {
			// Only a foreign event source can get here: the graph's own
			// reconstruction never yields a node it does not have.
			return n, fmt.Errorf("event %d: node %d, the graph has %d", ev.Index, ev.Node, len(fr.state))
		}
		s, e := fr.base+ev.Start, fr.base+ev.End
		if fr.started && s > fr.prevEnd {
			buf[n] = StateEvent{Resource: fr.res, State: 0, Start: fr.prevEnd, End: s}
			n++
		}
		buf[n] = StateEvent{Resource: fr.res, State: fr.state[ev.Node], Start: s, End: e}
		n++
		fr.prevEnd, fr.started = e, true
	}
	if n > 0 {
		return n, nil
	}
	if err := fr.it.Err(); err != nil {
		return 0, err
	}
	return 0, io.EOF
}

func (fr *flowReader) Close() error { return nil }
