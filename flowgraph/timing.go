package flowgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

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
