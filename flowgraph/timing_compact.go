package flowgraph

import (
	"math"
	"math/bits"
)

// keepFor is the cap that lets timingMinIntervals capped intervals fit in
// the target of a compaction (in nibbles).
func keepFor(budget int) int {
	return max(1, (budget*timingTarget/8/timingMinIntervals-timingIntervalHeadMax)/timingEntryMax)
}

// quantumShift is the shift of the quantum for a recording of total time
// so far: about 2^-TimingQuantumBits of it.
func quantumShift(total int64) int {
	return max(0, bits.Len64(uint64(max(total, 0)))-TimingQuantumBits)
}

// spanFor is the time limit of the intervals of a compaction to spacing
// sp: the time sp events took on average so far (total over nev events),
// so that intervals are cut by time about as often as by count; 0 (none)
// while that is 0.
func spanFor(sp, total, nev int64) int64 {
	hi, lo := bits.Mul64(uint64(max(total, 0)), uint64(sp))
	if hi >= uint64(nev) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(nev))
	return int64(min(q, math.MaxInt64))
}

// compact merges the closed intervals and the open one, which ends before
// event nev, until they fit in timingTarget/8 of the budget and the
// interval limit: when the budget is what is exceeded (coarsen), at the
// quantum for the time recorded so far, first alone if that coarsens it
// enough; then at 2, 4, ... times the spacing, each first with the span of
// half of it, then with its own: the count alone often fits, and doubling
// both can leave most of the budget unused (README, File format). During
// the run (final false) the last group becomes the open interval; at the
// end it is the last interval.
func (t *timingRec) compact(final, coarsen bool, nev int64) {
	target := t.budget * timingTarget / 8
	oldShift, oldKeep := t.shift, t.keep
	total := t.ctime + t.openTime()
	if coarsen {
		t.shift = max(t.shift, quantumShift(total))
	}
	// Merging alone pays when the quantum grows at least 8-fold: then
	// every value of more than one nibble loses one.
	first := int64(2)
	if t.shift >= oldShift+3 {
		first = 1
	}
	g, half := first, first > 1 // half: the span of half the spacing
	var sp, span, groups int64
	for {
		var ok bool
		sp, span = t.spacing*g, spanFor(t.spacing*g, total, nev)
		if half {
			span = spanFor(t.spacing*g/2, total, nev)
		}
		groups, ok = t.pass(sp, span, oldShift, oldKeep, final, target, nev)
		count := groups
		if !final {
			count++
		}
		if ok && (t.maxInt == 0 || count <= t.maxInt) {
			break
		}
		if t.keep == 0 && !ok && !half && nev/sp < timingMinIntervals {
			t.keep = keepFor(t.budget)
			g, half = first, first > 1
			continue
		}
		if half {
			half = false
		} else {
			g, half = g*2, true
		}
	}
	t.closed, t.out = t.out, t.closed
	t.ids, t.outIDs = t.outIDs, t.ids
	t.ctime = t.outTime
	t.spacing, t.span = sp, span
	t.nclosed = groups
	// The open interval took its carries; the pass left its own.
	for _, list := range t.open.ids {
		for _, id := range list {
			t.carry.set(id, 0)
		}
	}
	for _, list := range t.pcarry.ids {
		for _, id := range list {
			t.carry.set(id, t.carry.get(id)+t.pcarry.sum[id])
		}
	}
	t.rcarry = t.prcarry
	t.resetOpen()
	t.start = t.outStart
	if !final {
		t.open.addAll(&t.merged, &idSums{})
		t.mrest, t.crest = t.mmrest, t.mcrest
	}
	t.setDeadline()
}

// pass merges the closed intervals (written at quantum 2^oldShift with
// oldKeep) and the open one (which takes its carries as a flush would, and
// ends before event nev) into groups of adjacent intervals of at most sp
// events and, unless one interval is longer, span ns (0: no limit) in
// t.out at the quantum and keep of t. It returns how many groups it closed
// and whether they fit in limit nibbles (it stops at the first that does
// not, or as soon as they are bound not to: overProjected). The last group
// is left in the merge scratch unless final.
func (t *timingRec) pass(sp, span int64, oldShift, oldKeep int, final bool, limit int, nev int64) (int64, bool) {
	m := t.nclosed + 1
	t.out = nibWriter{b: t.out.b[:0]}
	t.outIDs = t.outIDs[:0]
	t.outTime, t.outStart = 0, 0
	t.pcarry.reset()
	t.prcarry = [2]int64{}
	t.merged.reset()
	t.mmrest, t.mcrest = 0, 0
	pos, idPos := 0, 0
	var groups, gev, gtime int64
	var glast lastTimes // of the group's last interval
	put := func() bool {
		_, tm := t.put(interval{&t.merged, t.mmrest, t.mcrest, gev, glast}, sp, t.keep, true, carries{&t.pcarry, &t.prcarry}, &t.out, &t.outIDs)
		t.outTime += tm
		t.outStart += gev
		groups++
		t.merged.reset()
		t.mmrest, t.mcrest = 0, 0
		gev, gtime = 0, 0
		return t.out.nibs <= limit && !overProjected(t.out.nibs, limit, pos, t.closed.nibs)
	}
	for k := int64(0); k < m; k++ {
		var ev, tm int64
		if k < t.nclosed {
			ev, tm = t.peekClosed(pos, oldShift, oldKeep)
		} else {
			ev, tm = nev-t.start, t.openTime()
		}
		if gev > 0 && (gev+ev > sp || (span > 0 && tm > span-gtime)) && !put() {
			return groups, false
		}
		if k < t.nclosed {
			pos, idPos, glast = t.mergeClosed(pos, idPos, oldShift, oldKeep)
		} else {
			t.mmrest += t.mrest + t.rcarry[0]
			t.mcrest += t.crest + t.rcarry[1]
			t.merged.addAll(&t.open, &t.carry)
			glast = t.lastIn
		}
		gev += ev
		gtime = satAdd(gtime, max(tm, 0))
	}
	if final && gev > 0 && !put() {
		return groups, false
	}
	return groups, true
}

// overProjected reports whether a pass that has written out nibbles after
// reading pos of the total nibbles of the closed intervals is bound to
// end over limit: past a sixteenth of its input, it is when its output
// so far is more than 17/16 of its share of the limit.
func overProjected(out, limit, pos, total int) bool {
	if 16*pos < total {
		return false
	}
	hi, lo := bits.Mul64(16*uint64(out), uint64(total))
	hl, ll := bits.Mul64(17*uint64(limit), uint64(pos))
	return hi > hl || (hi == hl && lo > ll)
}

// mergeClosed adds the closed interval at nibble pos of t.closed, whose
// ids start at idPos of t.ids, to the merge scratch and returns the
// positions of the next one and the interval's last gap and duration.
func (t *timingRec) mergeClosed(pos, idPos, shift, keep int) (int, int, lastTimes) {
	b, n := t.closed.b, t.closed.nibs
	early, _ := getNib(b, &pos, n) // the events, as peekClosed reads them
	nn, _ := getNib(b, &pos, n)
	ne, _ := getNib(b, &pos, n)
	if keep > 0 {
		m, _ := getNib(b, &pos, n)
		c, _ := getNib(b, &pos, n)
		t.mmrest += int64(m) << shift
		t.mcrest += int64(c) << shift
	}
	for i := uint64(0); i < nn+ne; i++ {
		if keep > 0 {
			getNib(b, &pos, n) // the index, as in t.ids
		}
		v, _ := getNib(b, &pos, n)
		t.merged.add(t.ids[idPos], int64(v)<<shift)
		idPos++
	}
	var last lastTimes
	if early != 0 {
		g, _ := getNib(b, &pos, n)
		d, _ := getNib(b, &pos, n)
		last = lastTimes{int64(g) << shift, int64(d) << shift}
	}
	return pos, idPos, last
}

// peekClosed returns the events and the time of the closed interval at
// nibble pos of t.closed.
func (t *timingRec) peekClosed(pos, shift, keep int) (int64, int64) {
	b, n := t.closed.b, t.closed.nibs
	ev, _ := getNib(b, &pos, n)
	if ev == 0 {
		ev = uint64(t.spacing)
	}
	nn, _ := getNib(b, &pos, n)
	ne, _ := getNib(b, &pos, n)
	var tm uint64
	if keep > 0 {
		m, _ := getNib(b, &pos, n)
		c, _ := getNib(b, &pos, n)
		tm = m + c
	}
	for i := uint64(0); i < nn+ne; i++ {
		if keep > 0 {
			getNib(b, &pos, n)
		}
		v, _ := getNib(b, &pos, n)
		tm += v
	}
	return int64(ev), int64(tm << shift)
}
