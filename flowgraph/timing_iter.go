package flowgraph

import (
	"fmt"
	"math"
)

// TimingIter iterates over the intervals of a Timing.
type TimingIter struct {
	t     *Timing
	pos   int // nibbles
	k     int64
	start int64 // the events of the intervals before
	cur   TimingInterval
	err   error
}

// Intervals returns an iterator over the intervals in order.
func (t *Timing) Intervals() *TimingIter { return &TimingIter{t: t} }

// Next decodes the next interval and reports whether there is one.
func (it *TimingIter) Next() bool {
	b := it.t.data
	end := 2 * len(b)
	if it.err != nil || it.pos >= end || (it.pos == end-1 && nibAt(b, it.pos) == 0) {
		return false
	}
	fail := func(what string) bool {
		it.err = fmt.Errorf("timing: interval %d at nibble %d: %s", it.k, it.pos, what)
		return false
	}
	events := uint64(it.t.spacing)
	early := false
	if it.t.counted {
		c, ok := getNib(b, &it.pos, end)
		if !ok || c >= events {
			return fail("bad number of events")
		}
		if c > 0 {
			events, early = c, true
		}
	}
	if uint64(it.start) > uint64(math.MaxInt64)-events {
		return fail("too many events")
	}
	nn, ok1 := getNib(b, &it.pos, end)
	ne, ok2 := getNib(b, &it.pos, end)
	if !ok1 || !ok2 {
		return fail("truncated count")
	}
	per := uint64(1)
	if it.t.keep > 0 {
		per = 2
	}
	if nn > uint64(end-it.pos)/per || ne > uint64(end-it.pos)/per-nn {
		return fail(fmt.Sprintf("%d node and %d edge sums do not fit in the rest of the data", nn, ne))
	}
	iv := &it.cur
	iv.Index = it.k
	iv.Start, iv.Events = it.start, int64(events)
	iv.Entries = iv.Entries[:0]
	iv.MPIRest, iv.ComputeRest = 0, 0
	if it.t.keep > 0 {
		m, ok1 := it.value(b, end)
		c, ok2 := it.value(b, end)
		if !ok1 || !ok2 {
			return fail("bad remainder")
		}
		iv.MPIRest, iv.ComputeRest = m, c
	}
	for i := uint64(0); i < nn+ne; i++ {
		idx := uint64(0)
		ok := true
		if it.t.keep > 0 {
			idx, ok = getNib(b, &it.pos, end)
			if ok && idx > math.MaxInt32 {
				return fail(fmt.Sprintf("entry %d: index %d out of range", i, idx))
			}
		}
		s, ok2 := it.value(b, end)
		if !ok || !ok2 {
			return fail(fmt.Sprintf("entry %d truncated or out of range", i))
		}
		e := TimingEntry{Edge: i >= nn, Index: -1, Sum: s}
		if it.t.keep > 0 {
			e.Index = int(idx)
		}
		iv.Entries = append(iv.Entries, e)
	}
	iv.LastGap, iv.LastDur = 0, 0
	if early && it.t.tail > 0 {
		g, ok := it.value(b, end)
		if !ok {
			return fail("bad last gap")
		}
		iv.LastGap = g
	}
	if early && it.t.tail > 1 {
		d, ok := it.value(b, end)
		if !ok {
			return fail("bad last duration")
		}
		iv.LastDur = d
	}
	it.k++
	it.start += int64(events)
	return true
}

// value reads a sum in quanta and returns it in ns.
func (it *TimingIter) value(b []byte, end int) (int64, bool) {
	v, ok := getNib(b, &it.pos, end)
	if !ok || v > math.MaxInt64>>it.t.shift {
		return 0, false
	}
	return int64(v) << it.t.shift, true
}

// Interval returns the current interval; its Entries are reused by Next.
func (it *TimingIter) Interval() *TimingInterval { return &it.cur }

// Err returns the decoding error met, if any.
func (it *TimingIter) Err() error { return it.err }

// Anchors derives the time anchors of a graph of nev events: one at the
// start of each interval and one at the end of the last.
func (t *Timing) Anchors(nev int64) Anchors {
	if !t.Present() || t.n == 0 {
		return nil
	}
	out := make(Anchors, 0, t.n+1)
	var tm, mpi int64
	it := t.Intervals()
	for it.Next() {
		iv := it.Interval()
		out = append(out, Anchor{Event: iv.Start, Time: tm, MPITime: mpi})
		tm += iv.MPIRest + iv.ComputeRest
		mpi += iv.MPIRest
		for _, e := range iv.Entries {
			tm += e.Sum
			if !e.Edge {
				mpi += e.Sum
			}
		}
	}
	end := t.events
	if !t.counted {
		end = t.n * t.spacing
	}
	return append(out, Anchor{Event: min(nev, end), Time: tm, MPITime: mpi})
}
