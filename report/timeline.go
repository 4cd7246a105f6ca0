package report

import (
	"fmt"

	"mpiflow/flowgraph"
)

// timelineData is the Gantt view's data: per rank, segments in ticks of
// Tick seconds, each (gap since the previous segment's end, duration, call,
// busy) where call is the index into the report's call list, or -(index+1)
// for a merged segment standing for many short calls (the call with the
// most time in it gives the color), and busy is the per-mille of the
// segment spent inside MPI (1000 for a single call).
type timelineData struct {
	Span  float64    `json:"span"` // s, end of the last event
	Tick  float64    `json:"tick"`
	Bins  int        `json:"bins"`
	Ranks []timeline `json:"ranks"`
	Note  string     `json:"note,omitempty"`
}

type timeline struct {
	Label string  `json:"label"`
	Segs  []int64 `json:"segs"`
}

// rankSpan is the end of a rank's last event in ns since the job start.
func rankSpan(r *flowgraph.Rank) int64 {
	g := &r.Graph
	if k := len(g.Anchors); k > 0 {
		return r.Start + g.Anchors[k-1].Time
	}
	var d int64
	for i := range g.Nodes {
		d += g.Nodes[i].Time.Total
	}
	for i := range g.Edges {
		d += g.Edges[i].Time.Total
	}
	return r.Start + d
}

// timelineBuilder downsamples the events of ranks into a bounded number
// of segments: events at least half a bin long are kept, shorter ones are
// merged per bin.
type timelineBuilder struct {
	span, binW, tick int64
	callIdx          map[string]int
	ncalls           int
}

func newTimelineBuilder(span int64, bins int, callIdx map[string]int) *timelineBuilder {
	span = max(span, 1)
	return &timelineBuilder{span: span, binW: max(span/int64(bins), 1), tick: max(span/1_000_000, 1),
		callIdx: callIdx, ncalls: len(callIdx)}
}

func (tb *timelineBuilder) rank(r *flowgraph.Rank, label string) (timeline, error) {
	g := &r.Graph
	callOf := make([]int, len(g.Nodes))
	for i := range g.Nodes {
		callOf[i] = tb.callIdx[g.Nodes[i].Key.Call]
	}
	tl := timeline{Label: label}
	var lastEnd int64 // in ticks
	emit := func(start, end int64, call int, busy int64) {
		s, e := start/tb.tick, end/tb.tick
		if s < lastEnd {
			s = lastEnd
		}
		if e < s {
			e = s
		}
		tl.Segs = append(tl.Segs, s-lastEnd, e-s, int64(call), busy)
		lastEnd = e
	}
	perCall := make([]int64, tb.ncalls)
	var touched []int
	curBin := int64(-1)
	var mStart, mEnd int64
	flush := func() {
		if curBin < 0 {
			return
		}
		best := touched[0]
		var inMPI int64
		for _, c := range touched {
			inMPI += perCall[c]
			if perCall[c] > perCall[best] {
				best = c
			}
		}
		for _, c := range touched {
			perCall[c] = 0
		}
		touched = touched[:0]
		busy := int64(1000)
		if mEnd > mStart {
			busy = min(1000, 1000*inMPI/(mEnd-mStart))
		}
		emit(mStart, mEnd, -(best + 1), busy)
		curBin = -1
	}
	it := g.Events()
	for it.Next() {
		ev := it.Event()
		start, end := r.Start+ev.Start, r.Start+ev.End
		c := callOf[ev.Node]
		if end-start >= tb.binW/2 {
			flush()
			emit(start, end, c, 1000)
			continue
		}
		if b := start / tb.binW; b != curBin {
			flush()
			curBin = b
			mStart = start
		}
		mEnd = end
		if perCall[c] == 0 {
			touched = append(touched, c)
		}
		perCall[c] += max(end-start, 1)
	}
	if err := it.Err(); err != nil {
		return tl, fmt.Errorf("timeline of %s: %w", label, err)
	}
	flush()
	return tl, nil
}
