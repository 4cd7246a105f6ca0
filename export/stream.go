package export

import (
	"container/heap"
	"fmt"
	"io"
	"strconv"

	"mpiflow/flowgraph"
)

// Options select what a whole-job export writes.
type Options struct {
	// Ranks selects world ranks; nil selects all.
	Ranks map[int]bool
	// From and To bound the time window in ns since the job start: an
	// event is written when it overlaps [From, To). Its times are not
	// clipped. To <= 0 means no upper bound.
	From, To int64
	// Progress, when not nil, is called now and then with the work done
	// so far and the total, in the same (exporter-specific) unit.
	Progress func(done, total int64)
	// Events, when not nil, opens the events to write for a rank block
	// instead of its reconstruction, e.g. the recorded full trace: times
	// in ns since the rank's first event, node numbers those of r's graph
	// (names, sites, bytes and partners still come from the graph). A
	// source that is an io.Closer is closed once the rank is written.
	Events func(r *flowgraph.Rank) (flowgraph.EventSource, error)
}

// openEvents opens the events of r that opt says to write.
func openEvents(r *flowgraph.Rank, opt Options) (flowgraph.EventSource, error) {
	if opt.Events == nil {
		return r.Graph.Events(), nil
	}
	return opt.Events(r)
}

// closeEvents closes s if it needs closing.
func closeEvents(s flowgraph.EventSource) error {
	if c, ok := s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stats tells what an export wrote.
type Stats struct {
	Ranks  int   // rank (thread) blocks written
	Events int64 // reconstructed MPI events written
}

// Span is one reconstructed event with absolute times (ns since the job
// start).
type Span struct {
	Index      int64 // position in the rank's event sequence
	Node       int   // index into the rank's Graph.Nodes
	Start, End int64
}

// RankEvents yields the events of one rank that overlap the window of an
// Options, in order, with absolute times. Its memory is the rank's graph
// and the event source's bounded buffer.
type RankEvents struct {
	r        *flowgraph.Rank
	it       flowgraph.EventSource
	from, to int64
	done     bool
}

// NewRankEvents returns the events of r in the window of opt, from
// opt.Events or the reconstruction (opt.Ranks is not looked at). Close
// releases them.
func NewRankEvents(r *flowgraph.Rank, opt Options) (*RankEvents, error) {
	it, err := openEvents(r, opt)
	if err != nil {
		return nil, err
	}
	return &RankEvents{r: r, it: it, from: opt.From, to: opt.To}, nil
}

// Close releases the event source; closing again does nothing.
func (s *RankEvents) Close() error {
	if s.it == nil {
		return nil
	}
	err := closeEvents(s.it)
	s.it, s.done = nil, true
	return err
}

// Next returns the next event in the window; ok is false at the end, and
// err tells whether the end is an error.
func (s *RankEvents) Next() (sp Span, ok bool, err error) {
	if s.it == nil {
		return Span{}, false, nil
	}
	for !s.done && s.it.Next() {
		ev := s.it.Event()
		sp = Span{Index: ev.Index, Node: ev.Node, Start: s.r.Start + ev.Start, End: s.r.Start + ev.End}
		if s.to > 0 && sp.Start >= s.to {
			// Events come in time order: nothing later is in the window.
			s.done = true
			break
		}
		if sp.End < s.from || (sp.End == s.from && sp.Start < s.from) {
			continue
		}
		return sp, true, nil
	}
	s.done = true
	if err := s.it.Err(); err != nil {
		return Span{}, false, fmt.Errorf("rank %d: %w", s.r.Rank, err)
	}
	return Span{}, false, nil
}

// selected reads the rank blocks of f that opt selects, in index order.
// The graphs stay in memory (they are small); events are never stored.
func selected(f *flowgraph.File, opt Options) ([]*flowgraph.Rank, error) {
	out, err := f.ReadRanks(opt.Ranks)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rank selected", f.Path)
	}
	return out, nil
}

// ResourceNames returns the display name of each block of f: "rank N", or
// "rank N thread T" when a rank has several threads (as the aggregator
// names them).
func ResourceNames(f *flowgraph.File) []string {
	threads := map[int]int{}
	for _, e := range f.Index {
		threads[e.Rank]++
	}
	out := make([]string, len(f.Index))
	for i, e := range f.Index {
		out[i] = "rank " + strconv.Itoa(e.Rank)
		if threads[e.Rank] > 1 {
			out[i] += " thread " + strconv.Itoa(e.Thread)
		}
	}
	return out
}

// record is one timed action of a rank in a merged stream.
type record struct {
	t    int64
	kind recordKind
	node int  // the event's node for recCall
	ev   Span // the event for recCall
}

type recordKind uint8

const (
	recCall    recordKind = iota // an MPI call starts
	recCompute                   // a compute phase starts (the previous call ended)
	recEnd                       // the rank's last event ended
)

// recordStream turns a rank's events into state changes: the start of
// each call, the start of compute after it when the next call starts
// later, and the end after the last call.
type recordStream struct {
	s        *RankEvents
	id       int    // position among the merged streams
	cur      record // the current record
	buf      [2]record
	pending  []record
	prevEnd  int64 // end of the previous call
	last     int64 // time of the previous record, to keep times monotone
	started  bool
	finished bool // no record after the pending ones
	ended    bool // the recEnd record was loaded
}

// advance loads the next record into cur; it returns false at the end.
func (rs *recordStream) advance() (bool, error) {
	if len(rs.pending) == 0 {
		if rs.finished {
			return false, nil
		}
		rs.pending = rs.buf[:0]
		sp, ok, err := rs.s.Next()
		if err != nil {
			return false, err
		}
		switch {
		case ok:
			if rs.started && sp.Start > rs.prevEnd {
				rs.pending = append(rs.pending, record{t: rs.prevEnd, kind: recCompute})
			}
			rs.pending = append(rs.pending, record{t: sp.Start, kind: recCall, node: sp.Node, ev: sp})
			rs.started = true
			rs.prevEnd = sp.End
		case rs.started:
			rs.pending = append(rs.pending, record{t: rs.prevEnd, kind: recEnd})
			rs.finished = true
		default:
			rs.finished = true
			return false, nil
		}
	}
	r := rs.pending[0]
	rs.pending = rs.pending[1:]
	// The reconstruction's times never go back; the clamp only guards
	// the merge against a corrupt graph with negative durations.
	r.t = max(r.t, rs.last)
	rs.last = r.t
	rs.cur = r
	rs.ended = rs.ended || r.kind == recEnd
	return true, nil
}

// mergeHeap orders streams by the time of their current record, then by
// their position, so the merge is deterministic.
type mergeHeap []*recordStream

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if h[i].cur.t != h[j].cur.t {
		return h[i].cur.t < h[j].cur.t
	}
	return h[i].id < h[j].id
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*recordStream)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge calls emit with every record of every stream in global time
// order. Memory is one current record per stream.
func merge(streams []*recordStream, emit func(rs *recordStream, r record) error) error {
	h := make(mergeHeap, 0, len(streams))
	for _, rs := range streams {
		ok, err := rs.advance()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, rs)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		rs := h[0]
		if err := emit(rs, rs.cur); err != nil {
			return err
		}
		ok, err := rs.advance()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// progressUnit is the share of one rank in the progress of exporters that
// write rank after rank: a rank counts progressUnit, its events a part of
// it, so a job of one huge rank still shows progress.
const progressUnit = 1 << 20

// rankProgress reports progress after event index of rank number i out of
// n ranks, every 1<<16 events.
func rankProgress(opt Options, i, n int, r *flowgraph.Rank, index int64) {
	if opt.Progress == nil || index&(1<<16-1) != 0 || r.Graph.NumEvents == 0 {
		return
	}
	within := index * progressUnit / r.Graph.NumEvents
	opt.Progress(int64(i)*progressUnit+within, int64(n)*progressUnit)
}

// RankProgress reports the progress of an exporter that writes rank after
// rank: after event index of rank number i out of n, every 1<<16 events.
func RankProgress(opt Options, i, n int, r *flowgraph.Rank, index int64) {
	rankProgress(opt, i, n, r, index)
}
