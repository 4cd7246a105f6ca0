package flowgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// Timing budget defaults and limits.
const (
	// DefaultTimingBytes is the default size bound of a graph's Timing.
	DefaultTimingBytes = 64 << 10
	// MinTimingBytes is the smallest Timing budget accepted.
	MinTimingBytes = 1 << 10
	// MaxTimingBytes is the largest Timing budget accepted.
	MaxTimingBytes = 1 << 30
)

const (
	// timingHeaderMax bounds the header (spacing, keep, shift) of the
	// encoding; the intervals get the rest of the budget.
	timingHeaderMax = 16
	// timingMinIntervals: merging stops short of fewer intervals than
	// this when they do not fit; the entries of each interval are capped
	// instead.
	timingMinIntervals = 16
	// timingTarget: a compaction merges until the intervals take at most
	// timingTarget/8 of the budget, so that the next one is far off.
	timingTarget = 3
	// An event whose gap and duration together take at least
	// 1/timingLongShare of the intervals' span, and timingOutlier times
	// the mean time of an event, is long; an interval ends
	// before a long gap, and after a long duration, that is more than
	// timingOutlier times the mean of its edge's gaps (node's durations)
	// so far, so that no interval spreads it over its others.
	timingLongShare = 16
	timingOutlier   = 8
	// TimingQuantumBits sets the quantum of a compaction: the largest
	// power of two at most the recorded time over 2^TimingQuantumBits.
	TimingQuantumBits = 20
	// timingEntryMax and timingIntervalHeadMax are the largest encoded
	// capped entry (index < 2^33, value < 2^64) and interval head and
	// tail (the events, two counts < 2^33, two remainders, the last gap
	// and the last duration < 2^64), in nibbles, which size the cap so
	// that it always fits.
	timingEntryMax        = 11 + 22
	timingIntervalHeadMax = 22 + 2*11 + 4*22
	maxSpacing            = int64(1) << 62
	maxShift              = 62
)

// Timing holds time sums per interval of a graph's events. The events are
// cut into intervals of consecutive events: since format v3 each interval
// holds at most Spacing events (a power of two) and says how many, so that a
// recording can end an interval early where time, not events, accumulates
// (a sparse phase of long calls); in format v2 every interval holds exactly
// Spacing events, interval k events [k*Spacing, (k+1)*Spacing). For each
// interval it stores, per node visited in it, the total duration of its
// events there and, per edge traversed out of one of its events, the total
// of those compute gaps (the gap after the last event of the interval
// belongs to it; the run's last event has none).
//
// Sums are integers in units of the Quantum, 2^Shift ns. A recording keeps
// them exact (quantum 1) until its budget fills; each compaction may then
// coarsen the quantum to about 2^-TimingQuantumBits of the time recorded
// so far. Rounding is carried: the rounding error of a node's (an edge's)
// sum is added to its next sum, so at every interval boundary each node's
// and edge's total so far is within one quantum of the truth (unless a
// clock went backwards: negative times are carried the same way, into
// later sums, which are never negative). The start of an interval is
// therefore within (number of nodes and edges) quanta of the truth, and
// the time of each node and edge within one quantum, however long the run.
//
// The size is bounded by a budget: when it would be exceeded, the quantum
// may coarsen and adjacent intervals are merged (sums add) so that the
// spacing doubles, as often as needed. Only if fewer than 16 intervals
// would then remain (intervals holding thousands of distinct nodes and
// edges), each interval instead keeps its Keep largest entries and folds
// the rest into two remainders, the MPI time and the compute time of its
// other events; a reader splits those by the global means, so inside such
// an interval the split among the folded nodes and edges is lost, while
// the interval's totals are kept.
//
// Encoding (the msgpack bin): since v3 a zero byte (which no v2 spacing
// is), in v4 two, in v5 three, then uvarint spacing, uvarint keep, uvarint
// shift, then the intervals as a stream of nibbles (4 bits, the high one
// of each byte first; an odd count ends with a zero nibble). Numbers are
// nibble varints: 3 bits a nibble, least significant first, the high bit
// set when more follow. Per interval: since v3 its number of events (0 for
// Spacing, so a full interval costs one nibble), the number of nodes, the
// number of edges, with keep > 0 the MPI remainder and the compute
// remainder, then one value per node and then one per edge; since v4 an
// interval that ends early (its number of events is not 0) then says its
// last gap (0: none kept apart), since v5 also its last event's duration.
// With keep 0 the nodes are those of the interval's events and the edges
// those out of them, each in order of first occurrence, and are not
// written: a reader knows them from the sequence numbers. With keep > 0
// each value is preceded by its node (edge) index. A Timing may hold fewer
// intervals than the events need (a partial file of a recorder stopped
// mid-event): the events after its last interval have no exact times.
//
// The zero Timing is absent (graphs of version 1 files, timed by Anchors).
type Timing struct {
	spacing int64
	keep    int
	shift   int
	counted bool // each interval says its number of events (v3)
	// tail is the number of values after the entries of an interval
	// that ends early: 0 (v3), its last gap (v4), and its last event's
	// duration (v5)
	tail   int
	data   []byte // the intervals, a nibble stream
	n      int64  // number of intervals
	events int64  // the events they hold (v2: n*spacing)
}

// TimingEntry is one sum of an interval: of the durations of a node's
// events (Edge false) or of an edge's gaps (Edge true).
type TimingEntry struct {
	Edge bool
	// Index is the node or edge index, or -1 in an interval of a Timing
	// with Keep 0, whose entries are its nodes and then its edges in
	// order of first occurrence.
	Index int
	Sum   int64 // ns
}

// TimingInterval is one interval of a Timing.
type TimingInterval struct {
	Index int64 // k: the k-th interval
	// Start and Events: the interval holds events [Start, Start+Events)
	// (in format v2 the last one may end after the graph's last event)
	Start, Events int64
	// Entries holds the node sums and then the edge sums.
	Entries []TimingEntry
	// MPIRest and ComputeRest are the durations and gaps of the interval
	// not covered by Entries (only when Keep > 0).
	MPIRest, ComputeRest int64
	// LastGap is the gap after the interval's last event, part of its
	// edge's sum, when the interval ended early and that gap stood out
	// (more than 1/timingOutlier of the edge's sum in the interval), else
	// 0. LastDur is the same for the duration of its last event, part of
	// its node's sum, if that event was long (a long call that ended the
	// interval).
	LastGap, LastDur int64
}

// Present reports whether the graph has a Timing.
func (t *Timing) Present() bool { return t.spacing > 0 }

// Spacing is the number of events per interval.
func (t *Timing) Spacing() int64 { return t.spacing }

// Keep is the number of entries each interval keeps, 0 when unlimited.
func (t *Timing) Keep() int { return t.keep }

// Quantum is the unit of the sums in ns, 1 when they are exact.
func (t *Timing) Quantum() int64 { return int64(1) << t.shift }

// Len is the number of intervals.
func (t *Timing) Len() int64 { return t.n }

// Covers reports whether the intervals hold exactly the nev events of a
// graph: not a Timing cut short by a recorder stopped mid-event.
func (t *Timing) Covers(nev int64) bool {
	if !t.counted {
		return t.n == (nev+t.spacing-1)/t.spacing
	}
	return t.events == nev
}

// Size is the length of the encoding in bytes.
func (t *Timing) Size() int {
	if !t.Present() {
		return 0
	}
	n := uvlen(uint64(t.spacing)) + uvlen(uint64(t.keep)) + uvlen(uint64(t.shift)) + len(t.data)
	if t.counted {
		n += 1 + t.tail
	}
	return n
}

// NewTiming checks an encoding of intervals (without the header) with the
// given spacing, keep and quantum shift, each interval with its number of
// events and the intervals that end early with their last gap and last
// duration (format v5), and returns it as a Timing. It does not check the
// entries against a graph (see Graph.Validate).
func NewTiming(spacing int64, keep, shift int, data []byte) (Timing, error) {
	return newTiming(spacing, keep, shift, true, timingTail, data)
}

// timingTail is the tail of the intervals this package writes.
const timingTail = 2

func newTiming(spacing int64, keep, shift int, counted bool, tail int, data []byte) (Timing, error) {
	if spacing < 1 || spacing > maxSpacing || spacing&(spacing-1) != 0 {
		return Timing{}, fmt.Errorf("timing: spacing %d is not a power of two", spacing)
	}
	if keep < 0 || keep > math.MaxInt32 {
		return Timing{}, fmt.Errorf("timing: keep %d out of range", keep)
	}
	if shift < 0 || shift > maxShift {
		return Timing{}, fmt.Errorf("timing: quantum 2^%d out of range", shift)
	}
	t := Timing{spacing: spacing, keep: keep, shift: shift, counted: counted, tail: tail}
	if len(data) > 0 {
		t.data = data
	}
	it := t.Intervals()
	for it.Next() {
	}
	if err := it.Err(); err != nil {
		return Timing{}, err
	}
	t.n, t.events = it.k, it.start
	return t, nil
}

// eventsCode is the code of an interval of events events at spacing s: 0
// when it is full.
func eventsCode(events, s int64) uint64 {
	if events == s {
		return 0
	}
	return uint64(events)
}

// nibLen is the number of nibbles of the nibble varint of v.
func nibLen(v uint64) int { return (bits.Len64(v|1) + 2) / 3 }

// nibWriter appends nibble varints to a nibble stream.
type nibWriter struct {
	b    []byte
	nibs int
}

func (w *nibWriter) put(v uint64) {
	for {
		x := byte(v & 7)
		v >>= 3
		if v != 0 {
			x |= 8
		}
		if w.nibs&1 == 0 {
			w.b = append(w.b, x<<4)
		} else {
			w.b[len(w.b)-1] |= x
		}
		w.nibs++
		if v == 0 {
			return
		}
	}
}

// nibAt is nibble i of a stream.
func nibAt(b []byte, i int) byte { return b[i>>1] >> (4 - 4*(i&1)) & 15 }

// getNib reads the nibble varint at nibble *pos of b (n nibbles).
func getNib(b []byte, pos *int, n int) (uint64, bool) {
	var v uint64
	for s := 0; *pos < n; s += 3 {
		x := nibAt(b, *pos)
		*pos++
		if s > 63 || (s == 63 && x&7 > 1) {
			return 0, false
		}
		v |= uint64(x&7) << s
		if x < 8 {
			return v, true
		}
	}
	return 0, false
}

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

// EncodeMsgpack writes the Timing as one bin, nil when absent.
func (t Timing) EncodeMsgpack(enc *msgpack.Encoder) error {
	if !t.Present() {
		return enc.EncodeNil()
	}
	return enc.EncodeBytes(t.AppendBinary(make([]byte, 0, t.Size())))
}

// AppendBinary appends the encoding of a present t (the v3 mark 0, the v4
// mark 0 0 or the v5 mark 0 0 0, spacing, keep, shift, then the intervals)
// to b.
func (t *Timing) AppendBinary(b []byte) []byte {
	if t.counted {
		b = append(b, make([]byte, 1+t.tail)...)
	}
	b = binary.AppendUvarint(b, uint64(t.spacing))
	b = binary.AppendUvarint(b, uint64(t.keep))
	b = binary.AppendUvarint(b, uint64(t.shift))
	return append(b, t.data...)
}

// DecodeMsgpack reads what EncodeMsgpack wrote and checks its structure.
func (t *Timing) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	if b == nil {
		*t = Timing{}
		return nil
	}
	return t.UnmarshalBinary(b)
}

// UnmarshalBinary reads what AppendBinary wrote and checks its structure.
func (t *Timing) UnmarshalBinary(b []byte) error {
	var head [3]uint64
	pos := 0
	// no spacing is 0: a zero byte marks v3, two of them v4, three v5
	counted := len(b) > 0 && b[0] == 0
	tail := 0
	if counted {
		pos++
		for tail < timingTail && pos < len(b) && b[pos] == 0 {
			tail, pos = tail+1, pos+1
		}
	}
	for i, what := range []string{"spacing", "keep", "quantum"} {
		v, n := binary.Uvarint(b[pos:])
		if n <= 0 || v > uint64(maxSpacing) {
			return fmt.Errorf("timing: bad %s", what)
		}
		head[i], pos = v, pos+n
	}
	if head[1] > math.MaxInt32 || head[2] > maxShift {
		return errors.New("timing: bad keep or quantum")
	}
	var err error
	*t, err = newTiming(int64(head[0]), int(head[1]), int(head[2]), counted, tail, b[pos:])
	return err
}

func uvlen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

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
// half of it, then with its own: the count alone often fits, and a
// doubling of both left as little as a seventh of the budget used (HPCC, 8
// ranks: 9 KiB of 64). During the run (final false) the last group becomes
// the open interval; at the end it is the last interval.
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
	return t.finish(nev), nil
}

// nibbles is the length of the intervals of a valid t in nibbles,
// without the padding.
func (t *Timing) nibbles() int {
	it := t.Intervals()
	for it.Next() {
	}
	return it.pos
}

func (e TimingEntry) id() uint64 {
	if e.Edge {
		return 2*uint64(e.Index) + 1
	}
	return 2 * uint64(e.Index)
}
