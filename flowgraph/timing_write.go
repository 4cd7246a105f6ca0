package flowgraph

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// TimingBudget bounds the Timing a recording keeps.
type TimingBudget struct {
	// Bytes bounds the encoding (DefaultTimingBytes if 0; at least
	// MinTimingBytes).
	Bytes int
	// Intervals, if 2 or more, bounds the number of intervals.
	Intervals int
}

// timingRec accumulates the Timing of a recording, exactly as the C
// recorder (interpose/csrc/recorder.h) does: the open interval's raw sums
// per id (2*node, 2*edge+1) in order of first touch, the closed intervals
// encoded with the ids of their entries beside them, the carries of the
// rounding, and the merge that keeps the intervals within the budget.
//
// An interval closes when it holds spacing events or, at the first event
// that starts span ns or more after it (0: no such limit), so that no
// interval spans much more than its share of the run's time: where events
// are sparse (long calls, long compute phases), intervals are cut by time;
// where they are dense (polls), by count. An interval also closes before a
// long outlier gap and after a long outlier call (add), so that it does
// not spread one over the rest of its edge's (node's) events. A compaction
// merges adjacent intervals, in order, into groups within twice the
// spacing and the span of the old spacing, or else of the new one.
type timingRec struct {
	budget  int   // nibbles for the intervals
	maxInt  int64 // 0: no limit
	spacing int64 // most events an interval holds
	span    int64 // an interval closes at its first event this late (0: none)
	keep    int
	shift   int
	closed  nibWriter // the closed intervals
	ids     []uint32  // the ids of their entries, in order
	nclosed int64
	ctime   int64 // the time of the closed intervals as encoded
	start   int64 // the events of the closed intervals: the open one's first
	t0      int64 // the first event's enter
	// the enter time at which the open interval closes:
	// t0 + ctime + span (math.MaxInt64 without a span)
	deadline int64
	// long is what makes an event long (math.MaxInt64 without a span); cut
	// an event at which the open interval closes after a long duration
	// (math.MaxInt64: none)
	long, cut int64

	open         idSums // the open interval, raw
	mrest, crest int64
	// its last gap and its last event's duration, if they stand out (at
	// a flush), else 0
	lastIn lastTimes
	// the node of the last event added, the last long event and its
	// duration (only a long one is kept apart as the last)
	lastNode         uint32
	longIdx, longDur int64
	carry            idSums   // per id: the rounding carried into its next sum
	rcarry           [2]int64 // the same for the MPI and compute remainders

	// merge scratch: one group's sums, the carries of a pass, its output
	merged         idSums
	mmrest, mcrest int64
	pcarry         idSums
	prcarry        [2]int64
	out            nibWriter
	outIDs         []uint32
	outTime        int64
	outStart       int64 // the events of the groups a pass closed
	// per entry of the interval being put (nodes, then edges)
	entries []uint32
	codes   []uint64
	rests   []int64
	kept    []bool
	order   []capEntry
}

// idSums are sums per id with the ids of each kind (nodes: even ids,
// edges: odd) in the order of their first touch: a stamp per id tells
// whether it was touched since the last reset (mf_tm_touch and tm_merge in
// the C recorder).
type idSums struct {
	sum, stamp []int64 // per id
	gen        int64
	ids        [2][]uint32 // by kind
}

// add adds v to the sum of id.
func (s *idSums) add(id uint32, v int64) {
	if n := int(id) + 1; n > len(s.sum) {
		n = max(n, 2*len(s.sum), 16)
		s.sum = append(s.sum, make([]int64, n-len(s.sum))...)
		s.stamp = append(s.stamp, make([]int64, n-len(s.stamp))...)
	}
	if s.stamp[id] != s.gen {
		s.stamp[id] = s.gen
		s.sum[id] = v
		s.ids[id&1] = append(s.ids[id&1], id)
		return
	}
	s.sum[id] += v
}

// get is the sum of id, 0 if untouched.
func (s *idSums) get(id uint32) int64 {
	if int(id) < len(s.sum) && s.stamp[id] == s.gen {
		return s.sum[id]
	}
	return 0
}

// set sets the sum of id.
func (s *idSums) set(id uint32, v int64) {
	s.add(id, 0)
	s.sum[id] = v
}

// reset empties the sums.
func (s *idSums) reset() {
	s.gen++
	s.ids[0], s.ids[1] = s.ids[0][:0], s.ids[1][:0]
}

// addAll adds the sums of o, each plus its carry in carry, to s, nodes
// first.
func (s *idSums) addAll(o *idSums, carry *idSums) {
	for _, list := range o.ids {
		for _, id := range list {
			s.add(id, o.sum[id]+carry.get(id))
		}
	}
}

type capEntry struct {
	code uint64
	pos  int
}

func newTimingRec(b TimingBudget) *timingRec {
	bytes := b.Bytes
	if bytes == 0 {
		bytes = DefaultTimingBytes
	}
	bytes = min(max(bytes, MinTimingBytes), MaxTimingBytes)
	t := &timingRec{budget: 2 * (bytes - timingHeaderMax), spacing: 1, deadline: math.MaxInt64, long: math.MaxInt64, cut: math.MaxInt64}
	for _, s := range []*idSums{&t.open, &t.carry, &t.merged, &t.pcarry} {
		s.gen = 1
	}
	if b.Intervals >= 2 {
		t.maxInt = int64(b.Intervals)
	}
	return t
}

// past is the total and the number of a node's durations (an edge's gaps)
// before an event.
type past struct{ total, count int64 }

// outlier reports whether v is more than timingOutlier times the mean of
// p (false without one).
func (p past) outlier(v int64) bool {
	if p.count <= 0 || v <= 0 {
		return false
	}
	hi, lo := bits.Mul64(uint64(v), uint64(p.count))
	th, tl := bits.Mul64(timingOutlier, uint64(max(p.total, 0)))
	return hi > th || (hi == th && lo > tl)
}

// add records event idx (node ni, in-edge ei unless idx is 0) entered at
// enter, of duration dur after a gap of gap; np and ep are what its node
// and edge had before it.
func (t *timingRec) add(idx int64, ni, ei int, enter, dur, gap int64, np, ep past) {
	if idx > 0 {
		t.open.add(2*uint32(ei)+1, gap)
		long := gap+dur >= t.long
		if idx-t.start >= t.spacing || enter >= t.deadline || idx >= t.cut || long && ep.outlier(gap) {
			// The interval keeps its last gap and its last event's
			// duration apart where they stand out.
			t.lastIn = lastTimes{gap: standsOut(gap, t.open.get(2*uint32(ei)+1))}
			if t.longIdx == idx-1 {
				t.lastIn.dur = standsOut(t.longDur, t.open.get(t.lastNode))
			}
			t.flush(idx, enter)
		}
		if long {
			t.longIdx, t.longDur = idx, dur
			if np.outlier(dur) {
				t.cut = idx + 1
			}
		}
	} else {
		t.t0 = enter
	}
	t.lastNode = 2 * uint32(ni)
	t.open.add(t.lastNode, dur)
}

// standsOut is v, the last of the values that add up to sum, if it is
// more than 1/timingOutlier of sum and not all of it, else 0: what an
// interval keeps apart of its last gap and last duration.
func standsOut(v, sum int64) int64 {
	if v < sum && v > sum/timingOutlier {
		return v
	}
	return 0
}

// setDeadline sets the time at which the open interval closes: span after
// the start of the open interval, as the closed ones encode it.
func (t *timingRec) setDeadline() {
	t.deadline, t.long, t.cut = math.MaxInt64, math.MaxInt64, math.MaxInt64
	if t.span > 0 {
		t.deadline = satAdd(satAdd(t.t0, t.ctime), t.span)
		t.long = max(t.span/timingLongShare, t.span/t.spacing*timingOutlier, 1)
	}
}

// satAdd is a+b, at most math.MaxInt64 (b may be negative: an edge's
// time where the clock stepped back).
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (t *timingRec) resetOpen() {
	t.open.reset()
	t.mrest, t.crest = 0, 0
}

// quantize returns the code of v (raw time plus the carry) at quantum
// 2^shift, rounded half up (at most what a Timing can hold), and the
// rounding left to carry; times at or below zero give code 0 and carry
// whole.
func quantize(v int64, shift int) (uint64, int64) {
	if v <= 0 {
		return 0, v
	}
	c := v >> shift
	if shift > 0 {
		c += v >> (shift - 1) & 1
	}
	c = min(c, math.MaxInt64>>shift)
	return uint64(c), v - c<<shift
}

// carries are where an interval's rounding is carried: the recording's
// (flush) or a compaction pass's.
type carries struct {
	id   *idSums
	rest *[2]int64
}

// interval is one interval to put: raw sums per id (the lists of sums in
// order), raw remainders, its number of events and its last gap and last
// duration (ns, 0: none kept apart).
type interval struct {
	sums   *idSums
	mr, cr int64
	events int64
	last   lastTimes
}

// lastTimes are the last gap and the last duration an interval keeps apart.
type lastTimes struct{ gap, dur int64 }

// put quantizes iv with the carries c at quantum 2^t.shift, caps it to keep
// entries when capped, and returns its size in nibbles at spacing sp; with
// w it appends it to w and its ids to *ids, updates the carries and returns
// its time as encoded too (0 without w).
func (t *timingRec) put(iv interval, sp int64, keep int, capped bool, c carries, w *nibWriter, ids *[]uint32) (int, int64) {
	t.entries, t.codes, t.rests = t.entries[:0], t.codes[:0], t.rests[:0]
	for _, list := range iv.sums.ids {
		for _, id := range list {
			code, rest := quantize(iv.sums.sum[id]+c.id.get(id), t.shift)
			t.entries = append(t.entries, id)
			t.codes = append(t.codes, code)
			t.rests = append(t.rests, rest)
		}
	}
	var mc, cc uint64
	if keep > 0 {
		mc, _ = quantize(iv.mr+c.rest[0], t.shift)
		cc, _ = quantize(iv.cr+c.rest[1], t.shift)
	}
	kept := t.capCodes(keep, capped, &mc, &cc)
	var counts [2]uint64
	size := 0
	for i, id := range t.entries {
		if kept == nil || kept[i] {
			counts[id&1]++
			size += nibLen(t.codes[i])
			if keep > 0 {
				size += nibLen(uint64(id >> 1))
			}
		}
	}
	ec := eventsCode(iv.events, sp)
	size += nibLen(ec) + nibLen(counts[0]) + nibLen(counts[1])
	if keep > 0 {
		size += nibLen(mc) + nibLen(cc)
	}
	lg, ld := uint64(max(iv.last.gap, 0))>>t.shift, uint64(max(iv.last.dur, 0))>>t.shift
	if ec != 0 {
		size += nibLen(lg) + nibLen(ld)
	}
	if w == nil {
		return size, 0
	}
	w.put(ec)
	w.put(counts[0])
	w.put(counts[1])
	if keep > 0 {
		w.put(mc)
		w.put(cc)
	}
	time := int64(mc+cc) << t.shift
	for i, id := range t.entries {
		if kept == nil || kept[i] {
			if keep > 0 {
				w.put(uint64(id >> 1))
			}
			w.put(t.codes[i])
			*ids = append(*ids, id)
			time += int64(t.codes[i]) << t.shift
		}
		c.id.set(id, t.rests[i])
	}
	if ec != 0 {
		w.put(lg)
		w.put(ld)
	}
	if keep > 0 {
		_, c.rest[0] = quantize(iv.mr+c.rest[0], t.shift)
		_, c.rest[1] = quantize(iv.cr+c.rest[1], t.shift)
	}
	return size, time
}

// capCodes keeps the keep largest codes of the interval being put (ties:
// the earlier first) when capped and it has more, folding the others into
// the remainder codes by kind; it returns which entries are kept, nil for
// all.
func (t *timingRec) capCodes(keep int, capped bool, mc, cc *uint64) []bool {
	if !capped || keep == 0 || len(t.entries) <= keep {
		return nil
	}
	t.order = t.order[:0]
	for i, code := range t.codes {
		t.order = append(t.order, capEntry{code, i})
	}
	slices.SortFunc(t.order, func(a, b capEntry) int {
		if a.code != b.code {
			if a.code > b.code {
				return -1
			}
			return 1
		}
		return a.pos - b.pos
	})
	t.kept = t.kept[:0]
	for range t.entries {
		t.kept = append(t.kept, false)
	}
	for _, e := range t.order[:keep] {
		t.kept[e.pos] = true
	}
	for i, id := range t.entries {
		if t.kept[i] {
			continue
		}
		if id&1 == 0 {
			*mc += t.codes[i]
		} else {
			*cc += t.codes[i]
		}
	}
	return t.kept
}

// flushCarries are the recording's carries.
func (t *timingRec) flushCarries() carries { return carries{&t.carry, &t.rcarry} }

// openInterval is the open interval, which holds events up to nev.
func (t *timingRec) openInterval(nev int64) interval {
	return interval{&t.open, t.mrest, t.crest, nev - t.start, t.lastIn}
}

// openTime is the open interval's raw time.
func (t *timingRec) openTime() int64 {
	total := t.mrest + t.crest
	for _, list := range t.open.ids {
		for _, id := range list {
			total += t.open.sum[id]
		}
	}
	return total
}

// Why the open interval could not be closed.
const (
	closedOK   = iota
	overCount  // the interval limit
	overBudget // the bytes
)

// close appends the open interval, which ends before event nev, capped
// when capped, if it fits the budget and the interval limit with room left
// for lim more; it returns closedOK, or why it did not.
func (t *timingRec) close(capped bool, lim, nev int64) int {
	if t.maxInt > 0 && t.nclosed+lim > t.maxInt {
		return overCount
	}
	iv := t.openInterval(nev)
	if n, _ := t.put(iv, t.spacing, t.keep, capped, t.flushCarries(), nil, nil); t.closed.nibs+n > t.budget {
		return overBudget
	}
	_, tm := t.put(iv, t.spacing, t.keep, capped, t.flushCarries(), &t.closed, &t.ids)
	t.ctime += tm
	t.nclosed++
	t.start = nev
	t.resetOpen()
	t.setDeadline()
	return closedOK
}

// flush closes the open interval during the run, before event idx entered
// at enter. A compaction leaves its last group open, and closes that too
// if event idx would not fit in it.
func (t *timingRec) flush(idx, enter int64) {
	for {
		why := t.close(true, 2, idx)
		if why == closedOK {
			return
		}
		t.compact(false, why == overBudget, idx)
		if idx-t.start < t.spacing && enter < t.deadline {
			return
		}
	}
}

// finish closes the last interval of a recording of nev events and
// returns the Timing. The last interval is kept whole (not capped) when
// it fits.
func (t *timingRec) finish(nev int64) Timing {
	t.lastIn = lastTimes{} // no event follows
	if nev > t.start {
		if why := t.close(false, 1, nev); why != closedOK {
			t.compact(true, why == overBudget, nev)
		}
	}
	return t.result()
}

// result is the Timing of the closed intervals.
func (t *timingRec) result() Timing {
	tm := Timing{spacing: t.spacing, keep: t.keep, shift: t.shift, counted: true, tail: timingTail, n: t.nclosed, events: t.start}
	if len(t.closed.b) > 0 {
		tm.data = t.closed.b
	}
	return tm
}

// TimingState is a recording's Timing as the C recorder keeps it during
// the run: the closed intervals, encoded, with the ids of their entries,
// the raw sums of the open one and the carries of the rounding.
type TimingState struct {
	Budget  TimingBudget
	Spacing int64
	// Span is the time after which an interval closes (0: none).
	Span      int64
	Keep      int
	Shift     int
	Closed    []byte // the closed intervals, encoded with Keep and Shift
	NumClosed int64
	// ClosedTime is the time of the closed intervals as encoded.
	ClosedTime int64
	// IDs are the ids (2*node, 2*edge+1) of the closed intervals'
	// entries in their order.
	IDs []uint32
	// Open holds the open interval's sums, of each kind in order of
	// first occurrence.
	Open                 []TimingEntry
	MPIRest, ComputeRest int64
	// Carry holds the rounding carried into the next sum of each node
	// and edge (those without are 0), RestCarry that of the MPI and
	// compute remainders.
	Carry     []TimingEntry
	RestCarry [2]int64

	rec *timingRec // Finish's, for Shrink
}

// Finish returns the Timing of a recording of nev events that ended in
// state s, as Builder.Graph returns it for the same calls and budget.
func (s *TimingState) Finish(nev int64) (Timing, error) {
	closed, err := NewTiming(s.Spacing, s.Keep, s.Shift, s.Closed)
	if err != nil {
		return Timing{}, err
	}
	if closed.n != s.NumClosed {
		return Timing{}, fmt.Errorf("timing: %d closed intervals encoded, %d counted", closed.n, s.NumClosed)
	}
	if closed.events > nev {
		return Timing{}, fmt.Errorf("timing: closed intervals of %d events, the recording has %d", closed.events, nev)
	}
	t := newTimingRec(s.Budget)
	t.spacing, t.keep, t.shift, t.nclosed, t.ctime = s.Spacing, s.Keep, s.Shift, s.NumClosed, s.ClosedTime
	t.span, t.start = s.Span, closed.events
	t.closed = nibWriter{b: append([]byte(nil), s.Closed...), nibs: closed.nibbles()}
	t.ids = append([]uint32(nil), s.IDs...)
	for _, e := range s.Open {
		t.open.add(uint32(e.id()), e.Sum)
	}
	for _, e := range s.Carry {
		t.carry.set(uint32(e.id()), e.Sum)
	}
	t.mrest, t.crest, t.rcarry = s.MPIRest, s.ComputeRest, s.RestCarry
	s.rec = t
	return t.finish(nev), nil
}

// Shrink returns the Timing that Finish returned for nev events with its
// intervals merged, as the recording merges them when its budget is
// exceeded, until it takes at most bytes in a file (packed, as FitBudget
// counts it), or MinTimingBytes. It must follow Finish, whose Timing
// stays valid.
func (s *TimingState) Shrink(nev int64, bytes int64) Timing {
	t := s.rec
	tm := t.result()
	least := 2 * (MinTimingBytes - timingHeaderMax)
	for nibs := 2 * (int(bytes) - timingHeaderMax); packedLen(tm.AppendBinary(nil)) > bytes && t.budget > least; nibs = nibs * 3 / 4 {
		// compact merges down to timingTarget/8 of the budget, into a
		// new buffer (it reuses the one it replaces)
		t.budget = max(nibs*8/timingTarget, least)
		t.out = nibWriter{}
		t.compact(true, true, nev)
		tm = t.result()
	}
	return tm
}
