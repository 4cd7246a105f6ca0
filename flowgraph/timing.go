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
	// timingHeaderMax bounds the header (spacing, keep) of the encoding;
	// the intervals get the rest of the budget.
	timingHeaderMax = 16
	// timingMinIntervals: merging stops short of fewer intervals than
	// this; beyond it the entries of each interval are capped instead.
	timingMinIntervals = 16
	// timingEntryMax and timingIntervalHeadMax are the largest encoded
	// entry (id < 2^33, sum < 2^63) and interval head (count < 2^21, two
	// remainders), which size the cap so that it always fits.
	timingEntryMax        = 14
	timingIntervalHeadMax = 23
	maxSpacing            = int64(1) << 62
)

// Timing holds exact time sums per interval of a graph's events (format v2).
// The events are cut into intervals of Spacing consecutive events (a power
// of two): interval k holds events [k*Spacing, (k+1)*Spacing). For each
// interval it stores, per node visited in it, the total duration of its
// events there and, per edge traversed out of one of its events, the total
// of those compute gaps (the gap after the last event of the interval
// belongs to it; the run's last event has none). The start of interval k is
// therefore the sum of all entries before it, exactly.
//
// The size is bounded by a budget: when it would be exceeded, adjacent
// intervals are merged (which is exact: sums add) and the spacing doubles.
// Only if fewer than 16 intervals would then remain (intervals holding
// thousands of distinct nodes and edges), each interval instead keeps its
// Keep largest entries and folds the rest into two remainders, the MPI
// time and the compute time of its other events; a reader splits those by
// the global means, so inside such an interval the split among the folded
// nodes and edges is lost, while the interval's totals stay exact.
//
// Encoding (the msgpack bin): uvarint spacing, uvarint keep, then per
// interval uvarint n, with keep > 0 uvarint MPI remainder and uvarint
// compute remainder, then n entries (uvarint id, uvarint sum) in order of
// first occurrence in the interval, id = 2*node for a duration sum and
// 2*edge+1 for a gap sum. A Timing may hold fewer intervals than the
// events need (a partial file of a recorder stopped mid-event): the events
// after its last interval have no exact times.
//
// The zero Timing is absent (graphs of version 1 files, timed by Anchors).
type Timing struct {
	spacing int64
	keep    int
	data    []byte // the intervals
	n       int64  // number of intervals
}

// TimingEntry is one sum of an interval: of the durations of a node's
// events (Edge false) or of an edge's gaps (Edge true).
type TimingEntry struct {
	Edge  bool
	Index int // node or edge index
	Sum   int64
}

func (e TimingEntry) id() uint64 {
	if e.Edge {
		return 2*uint64(e.Index) + 1
	}
	return 2 * uint64(e.Index)
}

// TimingInterval is one interval of a Timing.
type TimingInterval struct {
	Index   int64 // k: the interval holds events [k*Spacing, (k+1)*Spacing)
	Entries []TimingEntry
	// MPIRest and ComputeRest are the durations and gaps of the interval
	// not covered by Entries (only when Keep > 0).
	MPIRest, ComputeRest int64
}

// Present reports whether the graph has a Timing.
func (t *Timing) Present() bool { return t.spacing > 0 }

// Spacing is the number of events per interval.
func (t *Timing) Spacing() int64 { return t.spacing }

// Keep is the number of entries each interval keeps, 0 when unlimited.
func (t *Timing) Keep() int { return t.keep }

// Len is the number of intervals.
func (t *Timing) Len() int64 { return t.n }

// Size is the length of the encoding in bytes.
func (t *Timing) Size() int {
	if !t.Present() {
		return 0
	}
	return uvlen(uint64(t.spacing)) + uvlen(uint64(t.keep)) + len(t.data)
}

// NewTiming checks an encoding of intervals (without the header) with the
// given spacing and keep and returns it as a Timing. It does not check the
// ids against a graph (see Graph.Validate).
func NewTiming(spacing int64, keep int, data []byte) (Timing, error) {
	if spacing < 1 || spacing > maxSpacing || spacing&(spacing-1) != 0 {
		return Timing{}, fmt.Errorf("timing: spacing %d is not a power of two", spacing)
	}
	if keep < 0 || keep > math.MaxInt32 {
		return Timing{}, fmt.Errorf("timing: keep %d out of range", keep)
	}
	t := Timing{spacing: spacing, keep: keep}
	if len(data) > 0 {
		t.data = data
	}
	it := t.Intervals()
	for it.Next() {
	}
	if err := it.Err(); err != nil {
		return Timing{}, err
	}
	t.n = it.k
	return t, nil
}

// TimingIter iterates over the intervals of a Timing.
type TimingIter struct {
	t   *Timing
	pos int
	k   int64
	cur TimingInterval
	err error
}

// Intervals returns an iterator over the intervals in order.
func (t *Timing) Intervals() *TimingIter { return &TimingIter{t: t} }

// Next decodes the next interval and reports whether there is one.
func (it *TimingIter) Next() bool {
	if it.err != nil || it.pos >= len(it.t.data) {
		return false
	}
	b := it.t.data
	fail := func(what string) bool {
		it.err = fmt.Errorf("timing: interval %d at byte %d: %s", it.k, it.pos, what)
		return false
	}
	n, ok := it.uv(b)
	if !ok {
		return fail("truncated count")
	}
	if n > uint64(len(b)-it.pos)/2 {
		return fail(fmt.Sprintf("%d entries do not fit in the rest of the data", n))
	}
	iv := &it.cur
	iv.Index = it.k
	iv.Entries = iv.Entries[:0]
	iv.MPIRest, iv.ComputeRest = 0, 0
	if it.t.keep > 0 {
		m, ok1 := it.uv(b)
		c, ok2 := it.uv(b)
		if !ok1 || !ok2 || m > math.MaxInt64 || c > math.MaxInt64 {
			return fail("bad remainder")
		}
		iv.MPIRest, iv.ComputeRest = int64(m), int64(c)
	}
	for i := uint64(0); i < n; i++ {
		id, ok1 := it.uv(b)
		s, ok2 := it.uv(b)
		if !ok1 || !ok2 {
			return fail("truncated entry")
		}
		if id>>1 > math.MaxInt32 || s > math.MaxInt64 {
			return fail(fmt.Sprintf("entry %d (id %d, sum %d) out of range", i, id, s))
		}
		iv.Entries = append(iv.Entries, TimingEntry{Edge: id&1 == 1, Index: int(id >> 1), Sum: int64(s)})
	}
	it.k++
	return true
}

func (it *TimingIter) uv(b []byte) (uint64, bool) {
	v, n := binary.Uvarint(b[it.pos:])
	if n <= 0 {
		return 0, false
	}
	it.pos += n
	return v, true
}

// Interval returns the current interval; its Entries are reused by Next.
func (it *TimingIter) Interval() *TimingInterval { return &it.cur }

// Err returns the decoding error met, if any.
func (it *TimingIter) Err() error { return it.err }

// validate checks t against a graph of nn nodes, ne edges and nev events:
// ids in range, at most the intervals the events need, and totals that do
// not overflow.
func (t *Timing) validate(nn, ne int, nev int64) error {
	need := nev / t.spacing
	if nev%t.spacing != 0 {
		need++
	}
	if t.n > need {
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
		for _, e := range iv.Entries {
			if (e.Edge && e.Index >= ne) || (!e.Edge && e.Index >= nn) {
				return fmt.Errorf("timing: interval %d: %s", iv.Index, e.describe(nn, ne))
			}
			if !add(e.Sum) {
				return fmt.Errorf("timing: interval %d: total time overflows", iv.Index)
			}
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
		out = append(out, Anchor{Event: iv.Index * t.spacing, Time: tm, MPITime: mpi})
		tm += iv.MPIRest + iv.ComputeRest
		mpi += iv.MPIRest
		for _, e := range iv.Entries {
			tm += e.Sum
			if !e.Edge {
				mpi += e.Sum
			}
		}
	}
	return append(out, Anchor{Event: min(nev, t.n*t.spacing), Time: tm, MPITime: mpi})
}

// EncodeMsgpack writes the Timing as one bin, nil when absent.
func (t Timing) EncodeMsgpack(enc *msgpack.Encoder) error {
	if !t.Present() {
		return enc.EncodeNil()
	}
	return enc.EncodeBytes(t.AppendBinary(make([]byte, 0, t.Size())))
}

// AppendBinary appends the encoding of a present t (spacing, keep, then
// the intervals) to b.
func (t *Timing) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(t.spacing))
	b = binary.AppendUvarint(b, uint64(t.keep))
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
	s, n1 := binary.Uvarint(b)
	if n1 <= 0 || s > uint64(maxSpacing) {
		return errors.New("timing: bad spacing")
	}
	k, n2 := binary.Uvarint(b[n1:])
	if n2 <= 0 || k > math.MaxInt32 {
		return errors.New("timing: bad keep")
	}
	var err error
	*t, err = NewTiming(int64(s), int(k), b[n1+n2:])
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
// recorder (interpose/csrc/recorder.h) does: the open interval's sums per id
// (2*node, 2*edge+1) with a stamp telling whether the id was touched in
// it, the closed intervals encoded, and the merge that keeps them within
// the budget.
type timingRec struct {
	budget  int   // bytes for the intervals
	maxInt  int64 // 0: no limit
	spacing int64
	keep    int
	buf     []byte // the closed intervals
	bkeep   int    // the keep buf was written with
	nclosed int64

	open           idSums // the open interval
	mrest, crest   int64
	merged         idSums // merge scratch
	mmrest, mcrest int64
	order          []capEntry
	dec            TimingInterval
}

// idSums are sums per id of one interval, with the ids in the order of
// their first touch: a stamp per id tells whether it was touched since the
// last reset (mf_tm_touch and tm_merge in the C recorder).
type idSums struct {
	sum, stamp []int64 // per id
	gen        int64
	ids        []uint32
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
		s.ids = append(s.ids, id)
		return
	}
	s.sum[id] += v
}

// reset empties the sums.
func (s *idSums) reset() {
	s.gen++
	s.ids = s.ids[:0]
}

type capEntry struct {
	sum int64
	pos int
}

func newTimingRec(b TimingBudget) *timingRec {
	bytes := b.Bytes
	if bytes == 0 {
		bytes = DefaultTimingBytes
	}
	bytes = min(max(bytes, MinTimingBytes), MaxTimingBytes)
	t := &timingRec{budget: bytes - timingHeaderMax, spacing: 1, open: idSums{gen: 1}, merged: idSums{gen: 1}}
	if b.Intervals >= 2 {
		t.maxInt = int64(b.Intervals)
	}
	return t
}

// add records event idx (node ni, in-edge ei unless idx is 0) of duration
// dur after a gap of gap. A clock going backwards counts as 0.
func (t *timingRec) add(idx int64, ni, ei int, dur, gap int64) {
	if idx > 0 {
		t.open.add(2*uint32(ei)+1, max(gap, 0))
		if idx&(t.spacing-1) == 0 {
			t.flush()
		}
	}
	t.open.add(2*uint32(ni), max(dur, 0))
}

func (t *timingRec) resetOpen() {
	t.open.reset()
	t.mrest, t.crest = 0, 0
}

// intervalSize is the encoded size of an interval (appendInterval).
func intervalSize(keep int, list []uint32, sum []int64, mr, cr int64) int {
	n := uvlen(uint64(len(list)))
	if keep > 0 {
		n += uvlen(uint64(mr)) + uvlen(uint64(cr))
	}
	for _, id := range list {
		n += uvlen(uint64(id)) + uvlen(uint64(sum[id]))
	}
	return n
}

// openSize is the encoded size of the open interval.
func (t *timingRec) openSize() int {
	return intervalSize(t.keep, t.open.ids, t.open.sum, t.mrest, t.crest)
}

func appendInterval(b []byte, keep int, list []uint32, sum []int64, mr, cr int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(list)))
	if keep > 0 {
		b = binary.AppendUvarint(b, uint64(mr))
		b = binary.AppendUvarint(b, uint64(cr))
	}
	for _, id := range list {
		b = binary.AppendUvarint(b, uint64(id))
		b = binary.AppendUvarint(b, uint64(sum[id]))
	}
	return b
}

// capList keeps the keep largest sums of list (ties: the earlier first) in
// their order and folds the others into the remainders.
func (t *timingRec) capList(list []uint32, sum []int64, mr, cr *int64) []uint32 {
	if t.keep == 0 || len(list) <= t.keep {
		return list
	}
	t.order = t.order[:0]
	for i, id := range list {
		t.order = append(t.order, capEntry{sum[id], i})
	}
	slices.SortFunc(t.order, func(a, b capEntry) int {
		if a.sum != b.sum {
			if a.sum > b.sum {
				return -1
			}
			return 1
		}
		return a.pos - b.pos
	})
	last := t.order[t.keep-1]
	k := 0
	for i, id := range list {
		s := sum[id]
		if s > last.sum || (s == last.sum && i <= last.pos) {
			list[k] = id
			k++
		} else if id&1 == 0 {
			*mr += s
		} else {
			*cr += s
		}
	}
	return list[:k]
}

// flush closes the open interval during the run (at event (k+1)*spacing).
func (t *timingRec) flush() {
	t.open.ids = t.capList(t.open.ids, t.open.sum, &t.mrest, &t.crest)
	if len(t.buf)+t.openSize() <= t.budget && (t.maxInt == 0 || t.nclosed+2 <= t.maxInt) {
		t.buf = appendInterval(t.buf, t.keep, t.open.ids, t.open.sum, t.mrest, t.crest)
		t.nclosed++
		t.resetOpen()
		return
	}
	t.compact(false)
}

// keepFor is the cap that lets timingMinIntervals capped intervals fit in
// three quarters of the budget.
func keepFor(budget int) int {
	return max(1, (budget*3/4/timingMinIntervals-timingIntervalHeadMax)/timingEntryMax)
}

// compact merges the closed intervals and the open one in groups of
// 2, 4, ... until they fit in three quarters of the budget. During the run
// (final false) a last incomplete group becomes the open interval; at the
// end it is the last interval.
func (t *timingRec) compact(final bool) {
	m := t.nclosed + 1
	target := t.budget * 3 / 4
	var g int64
	for r := 1; ; r++ {
		g = int64(1) << r
		full, part := m/g, m%g != 0
		size := t.pass(g, final, nil)
		count := full + 1
		if final && !part {
			count = full
		}
		if size <= target && (t.maxInt == 0 || count <= t.maxInt) {
			break
		}
		if t.keep == 0 && size > target && full < timingMinIntervals {
			t.keep = keepFor(t.budget)
			r = 0
		}
	}
	out := make([]byte, 0, t.budget)
	t.pass(g, final, &out)
	full, part := m/g, m%g != 0
	t.buf = out
	t.bkeep = t.keep
	t.spacing *= g
	t.nclosed = full
	t.resetOpen()
	if part {
		if final {
			t.nclosed++
		} else {
			for _, id := range t.merged.ids {
				t.open.add(id, t.merged.sum[id])
			}
			t.mrest, t.crest = t.mmrest, t.mcrest
		}
	}
}

// pass merges the m intervals (closed, then open) in groups of g and
// returns the encoded size of the groups that are closed afterwards,
// appending them to *out if out is not nil. The last group's merge is left
// in the scratch (merged, mmrest, mcrest).
func (t *timingRec) pass(g int64, final bool, out *[]byte) int {
	m := t.nclosed + 1
	size := 0
	pos := 0
	for j := int64(0); j*g < m; j++ {
		t.merged.reset()
		t.mmrest, t.mcrest = 0, 0
		end := min((j+1)*g, m)
		for k := j * g; k < end; k++ {
			if k < t.nclosed {
				pos = t.decode(pos)
				t.mmrest += t.dec.MPIRest
				t.mcrest += t.dec.ComputeRest
				for _, e := range t.dec.Entries {
					t.merged.add(uint32(e.id()), e.Sum)
				}
			} else {
				t.mmrest += t.mrest
				t.mcrest += t.crest
				for _, id := range t.open.ids {
					t.merged.add(id, t.open.sum[id])
				}
			}
		}
		if end-j*g < g && !final {
			break // the partial group stays open
		}
		m := &t.merged
		m.ids = t.capList(m.ids, m.sum, &t.mmrest, &t.mcrest)
		size += intervalSize(t.keep, m.ids, m.sum, t.mmrest, t.mcrest)
		if out != nil {
			*out = appendInterval(*out, t.keep, m.ids, m.sum, t.mmrest, t.mcrest)
		}
	}
	return size
}

// decode reads the closed interval at pos of buf into t.dec.
func (t *timingRec) decode(pos int) int {
	tm := Timing{keep: t.bkeep, data: t.buf[pos:]}
	it := TimingIter{t: &tm, cur: t.dec}
	it.Next()
	t.dec = it.cur
	return pos + it.pos
}

// finish closes the last interval of a recording of nev events and
// returns the Timing. The last interval is kept whole when it fits.
func (t *timingRec) finish(nev int64) Timing {
	if nev > t.nclosed*t.spacing {
		if len(t.buf)+t.openSize() <= t.budget && (t.maxInt == 0 || t.nclosed+1 <= t.maxInt) {
			t.buf = appendInterval(t.buf, t.keep, t.open.ids, t.open.sum, t.mrest, t.crest)
			t.nclosed++
			t.resetOpen()
		} else {
			t.compact(true)
		}
	}
	tm := Timing{spacing: t.spacing, keep: t.keep, n: t.nclosed}
	if len(t.buf) > 0 {
		tm.data = t.buf
	}
	return tm
}

// TimingState is a recording's Timing as the C recorder keeps it during
// the run: the closed intervals, encoded, and the sums of the open one.
type TimingState struct {
	Budget    TimingBudget
	Spacing   int64
	Keep      int
	Closed    []byte // the closed intervals, encoded with Keep
	NumClosed int64
	// Open holds the open interval's sums in order of first occurrence.
	Open                 []TimingEntry
	MPIRest, ComputeRest int64
}

// Finish returns the Timing of a recording of nev events that ended in
// state s, as Builder.Graph returns it for the same calls and budget.
func (s *TimingState) Finish(nev int64) (Timing, error) {
	closed, err := NewTiming(s.Spacing, s.Keep, s.Closed)
	if err != nil {
		return Timing{}, err
	}
	if closed.n != s.NumClosed {
		return Timing{}, fmt.Errorf("timing: %d closed intervals encoded, %d counted", closed.n, s.NumClosed)
	}
	t := newTimingRec(s.Budget)
	t.spacing, t.keep, t.bkeep, t.nclosed = s.Spacing, s.Keep, s.Keep, s.NumClosed
	t.buf = append([]byte(nil), s.Closed...)
	for _, e := range s.Open {
		t.open.add(uint32(e.id()), e.Sum)
	}
	t.mrest, t.crest = s.MPIRest, s.ComputeRest
	return t.finish(nev), nil
}
