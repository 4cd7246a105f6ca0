package flowgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// SeqTerm is one term of a Seq. A leaf (Body 0) is the arithmetic
// progression Start, Start+Stride, ..., Start+(Count-1)*Stride. A repeat
// (Body > 0) is the Body terms that follow it, repeated Count times, the
// k-th repetition shifted by k*Stride: its children's Starts are relative
// to the repetition's base, Start + k*Stride. Size is the number of terms
// of the subtree, the term itself included, so a term's next sibling is
// Size terms further on.
type SeqTerm struct {
	Start, Stride, Count int64
	Body, Size           int32
}

// SeqRun is an arithmetic progression of sequence numbers:
// Start, Start+Stride, ..., Start+(Count-1)*Stride.
type SeqRun struct {
	Start  int64
	Stride int64
	Count  int64
}

// Last is the last sequence number of the run.
func (r SeqRun) Last() int64 { return r.Start + (r.Count-1)*r.Stride }

// Seq stores ascending sequence numbers as nested progressions: runs of
// arithmetic progressions, and repetitions at a constant offset of groups
// of up to seqWindow terms, recursively (the power regular section
// descriptors of ScalaTrace, Noeth et al. 2009). Any loop nest whose branch
// pattern is periodic costs a number of terms that does not depend on the
// number of iterations.
//
// Seq is built online by Append: the last run stays open and is extended
// in O(1); when a number does not continue it, the run is closed and the
// tail of the top-level terms is folded into repeats, which costs amortized
// O(1) per closed run. The C recorder (interpose/csrc/recorder.c) implements the
// same algorithm and must give the same terms.
type Seq struct {
	terms []SeqTerm // closed terms in prefix order (a repeat before its body)
	roots []int32   // positions of the top-level closed terms
	open  SeqTerm   // the open run, the last top-level term; Count 0 if none
}

// seqWindow is the largest group of top-level terms whose repetition is
// detected. Loop bodies that touch one edge in more than seqWindow separate
// runs per iteration are stored unfolded at that level.
const seqWindow = 8

// maxSeqDepth bounds the nesting of terms in a file. Each level at least
// doubles the span of the numbers, so 64 levels cover any int64 sequence.
const maxSeqDepth = 64

// SeqOf returns the Seq of the given ascending numbers.
func SeqOf(ns ...int64) Seq {
	var s Seq
	for _, n := range ns {
		s.Append(n)
	}
	return s
}

// Append adds sequence number n, which must be larger than every number
// already stored.
func (s *Seq) Append(n int64) {
	o := &s.open
	switch {
	case o.Count == 1:
		o.Stride = n - o.Start
		o.Count = 2
	case o.Count > 1 && n == o.Start+o.Count*o.Stride:
		o.Count++
	default:
		if o.Count > 0 {
			s.roots = append(s.roots, int32(len(s.terms)))
			s.terms = append(s.terms, *o)
			s.fold()
		}
		*o = SeqTerm{Start: n, Count: 1, Size: 1}
	}
}

// fold merges the tail of the closed top-level terms while it repeats.
func (s *Seq) fold() {
	for s.extend() || s.repeat() {
	}
}

// extend counts one more repetition of a repeat that is followed by a copy
// of its body at the next repetition's offset, and drops the copy.
func (s *Seq) extend() bool {
	nr := len(s.roots)
	for l := 1; l <= seqWindow && l < nr; l++ {
		p := s.roots[nr-l-1]
		r := &s.terms[p]
		if int(r.Body) != l {
			continue
		}
		base := r.Start + r.Count*r.Stride
		c, ok := p+1, true
		for _, q := range s.roots[nr-l:] {
			if s.terms[q].Start != base+s.terms[c].Start || !s.sameShape(c, q) {
				ok = false
				break
			}
			c += s.terms[c].Size
		}
		if ok {
			r.Count++
			s.terms = s.terms[:s.roots[nr-l]]
			s.roots = s.roots[:nr-l]
			return true
		}
	}
	return false
}

// repeat replaces the last 2l top-level terms by a repeat of count 2 when
// they are two copies of one group of l terms at a constant offset.
func (s *Seq) repeat() bool {
	nr := len(s.roots)
	for l := 1; l <= seqWindow && 2*l <= nr; l++ {
		g1, g2 := s.roots[nr-2*l:nr-l], s.roots[nr-l:]
		d, ok := s.terms[g2[0]].Start-s.terms[g1[0]].Start, true
		for i := range l {
			if s.terms[g2[i]].Start-s.terms[g1[i]].Start != d || !s.sameShape(g1[i], g2[i]) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		at, end := g1[0], g2[0]
		base := s.terms[at].Start
		for _, q := range g1 {
			s.terms[q].Start -= base
		}
		s.terms = slices.Insert(s.terms[:end], int(at), SeqTerm{Start: base, Stride: d, Count: 2, Body: int32(l), Size: end - at + 1})
		s.roots = append(s.roots[:nr-2*l], at)
		return true
	}
	return false
}

// sameShape reports whether the subtrees at a and b are equal but for
// their own Start.
func (s *Seq) sameShape(a, b int32) bool {
	ta, tb := s.terms[a], s.terms[b]
	if ta.Stride != tb.Stride || ta.Count != tb.Count || ta.Body != tb.Body || ta.Size != tb.Size {
		return false
	}
	return slices.Equal(s.terms[a+1:a+ta.Size], s.terms[b+1:b+tb.Size])
}

// Terms returns all terms in prefix order, the open run last.
func (s *Seq) Terms() []SeqTerm {
	if s.open.Count == 0 {
		return s.terms
	}
	// A sealed Seq (decoded, or see seal) holds a copy of its open run
	// beyond its closed terms: no copy of them all on every walk.
	if n := len(s.terms); n < cap(s.terms) && s.terms[:n+1][n] == s.open {
		return s.terms[:n+1]
	}
	return append(s.terms[:len(s.terms):len(s.terms)], s.open)
}

// seal keeps a copy of the open run beyond the closed terms, where Terms
// finds it, for a Seq that is walked more often than appended to. A Seq of
// the open run alone keeps no terms (nil, as Append leaves it).
func (s *Seq) seal() {
	if s.open.Count > 0 && len(s.terms) > 0 {
		s.terms = append(s.terms, s.open)[:len(s.terms)]
	}
}

// IsZero reports whether s holds no numbers.
func (s Seq) IsZero() bool { return s.open.Count == 0 && len(s.terms) == 0 }

// NumTerms is the number of terms stored.
func (s *Seq) NumTerms() int {
	if s.open.Count == 0 {
		return len(s.terms)
	}
	return len(s.terms) + 1
}

// Len is the number of sequence numbers stored.
func (s *Seq) Len() int64 {
	ts := s.Terms()
	var n int64
	for p := 0; p < len(ts); p += int(ts[p].Size) {
		n += termLen(ts, p)
	}
	return n
}

func termLen(ts []SeqTerm, p int) int64 {
	t := &ts[p]
	if t.Body == 0 {
		return t.Count
	}
	var n int64
	for c, k := p+1, int32(0); k < t.Body; c, k = c+int(ts[c].Size), k+1 {
		n += termLen(ts, c)
	}
	return t.Count * n
}

// First is the first sequence number, or -1 if there is none.
func (s *Seq) First() int64 {
	ts := s.Terms()
	if len(ts) == 0 {
		return -1
	}
	var v int64
	for p := 0; ; p++ {
		v += ts[p].Start
		if ts[p].Body == 0 {
			return v
		}
	}
}

// Last is the last sequence number, or -1 if there is none.
func (s *Seq) Last() int64 {
	ts := s.Terms()
	if len(ts) == 0 {
		return -1
	}
	p := 0
	for q := 0; q < len(ts); q += int(ts[q].Size) {
		p = q
	}
	return termLast(ts, p)
}

// termLast is the last number of the subtree at p, relative to its frame.
func termLast(ts []SeqTerm, p int) int64 {
	t := &ts[p]
	v := t.Start + (t.Count-1)*t.Stride
	if t.Body == 0 {
		return v
	}
	c := p + 1
	for k := int32(1); k < t.Body; k++ {
		c += int(ts[c].Size)
	}
	return v + termLast(ts, c)
}

// Runs calls f for each arithmetic run of the sequence in ascending order,
// repeats expanded.
func (s *Seq) Runs(f func(SeqRun) bool) {
	var c seqCursor
	for c.Init(s); c.left > 0; c.advance() {
		if !f(SeqRun{Start: c.val, Stride: c.stride, Count: c.left}) {
			return
		}
	}
}

// All calls f for each sequence number in ascending order.
func (s *Seq) All(f func(int64) bool) {
	var c seqCursor
	for c.Init(s); c.left > 0; c.Next() {
		if !f(c.val) {
			return
		}
	}
}

// seqCursor walks the numbers of a Seq in ascending order in amortized
// O(1) per number, with memory bounded by the nesting depth.
type seqCursor struct {
	terms  []SeqTerm
	val    int64 // current number; math.MaxInt64 when exhausted
	stride int64 // of the current run
	left   int64 // numbers left in the current run, val included
	stack  []seqFrame
}

// seqFrame is one repeat being walked: its children [first, end), the next
// child to enter, the repetition count done and the current base.
type seqFrame struct {
	first, next, end int32
	k, count         int64
	stride, base     int64
}

// Init positions c at the first number of s.
func (c *seqCursor) Init(s *Seq) {
	c.terms = s.Terms()
	c.stack = append(c.stack[:0], seqFrame{end: int32(len(c.terms)), k: 1, count: 1})
	c.advance()
}

// Val is the current number, math.MaxInt64 when the cursor is exhausted.
func (c *seqCursor) Val() int64 { return c.val }

// Next moves to the next number.
func (c *seqCursor) Next() {
	if c.left--; c.left > 0 {
		c.val += c.stride
		return
	}
	c.advance()
}

// advance enters the next leaf.
func (c *seqCursor) advance() {
	ts := c.terms
	for n := len(c.stack) - 1; n >= 0; {
		f := &c.stack[n]
		if p := f.next; p < f.end {
			t := &ts[p]
			f.next = p + t.Size
			if t.Body == 0 {
				c.val, c.stride, c.left = f.base+t.Start, t.Stride, t.Count
				return
			}
			c.stack = append(c.stack, seqFrame{first: p + 1, next: p + 1, end: p + t.Size, k: 1, count: t.Count, stride: t.Stride, base: f.base + t.Start})
			n++
		} else if f.k < f.count {
			f.k++
			f.base += f.stride
			f.next = f.first
		} else {
			c.stack = c.stack[:n]
			n--
		}
	}
	c.val, c.left = math.MaxInt64, 0
}

// Encoding (format version 2): a msgpack bin holding uvarints. First the
// number of top-level terms, then each term in prefix order as
//
//	body, start - lo, count - 1, the body's terms, [stride - min if count > 1]
//
// where lo is one more than the previous sibling's last number (for the
// first top-level term 1, as event 0 has no incoming edge, and for a first
// child 0), and min is 1 for a leaf and for a repeat one more than the
// span of its body, so that numbers ascend by construction. Version 1
// stored a flat msgpack array of (start delta, stride, count) triples,
// which DecodeMsgpack still reads.

// EncodeMsgpack writes the sequence in the version-2 encoding.
func (s Seq) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.EncodeBytes(s.AppendBinary(nil))
}

// AppendBinary appends the version-2 encoding of s (without the msgpack
// bin header) to b.
func (s *Seq) AppendBinary(b []byte) []byte {
	ts := s.Terms()
	var roots uint64
	for p := 0; p < len(ts); p += int(ts[p].Size) {
		roots++
	}
	b = binary.AppendUvarint(b, roots)
	lo := int64(1)
	for p := 0; p < len(ts); p += int(ts[p].Size) {
		b = appendTerm(b, ts, p, lo)
		lo = termLast(ts, p) + 1
	}
	return b
}

func appendTerm(b []byte, ts []SeqTerm, p int, lo int64) []byte {
	t := &ts[p]
	b = binary.AppendUvarint(b, uint64(t.Body))
	b = binary.AppendUvarint(b, uint64(t.Start-lo))
	b = binary.AppendUvarint(b, uint64(t.Count-1))
	minStride := int64(1)
	if t.Body > 0 {
		clo := int64(0)
		c := p + 1
		var last int64
		for k := int32(0); k < t.Body; k++ {
			b = appendTerm(b, ts, c, clo)
			last = termLast(ts, c)
			clo = last + 1
			c += int(ts[c].Size)
		}
		minStride = last - ts[p+1].Start + 1
	}
	if t.Count > 1 {
		b = binary.AppendUvarint(b, uint64(t.Stride-minStride))
	}
	return b
}

// DecodeMsgpack reads a sequence of either encoding and checks that the
// numbers ascend without overflow, so a corrupt file cannot make
// reconstruction loop or go backwards.
func (s *Seq) DecodeMsgpack(dec *msgpack.Decoder) error {
	code, err := dec.PeekCode()
	if err != nil {
		return err
	}
	if code == 0xc0 { // nil
		*s = Seq{}
		return dec.DecodeNil()
	}
	if code >= 0x90 && code <= 0x9f || code == 0xdc || code == 0xdd {
		return s.decodeV1(dec)
	}
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	return s.UnmarshalBinary(b)
}

// maxSeqValue bounds sequence numbers so that no arithmetic on them
// overflows.
const maxSeqValue = 1 << 62

var errSeqOverflow = errors.New("sequence numbers overflow")

// UnmarshalBinary reads what AppendBinary wrote; all of b must be used.
func (s *Seq) UnmarshalBinary(b []byte) error {
	rest, err := s.decode(b)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("sequence: %d bytes after the sequence", len(rest))
	}
	if err != nil {
		*s = Seq{}
	}
	return err
}

// decode reads one sequence from the front of b and returns the rest.
func (s *Seq) decode(b []byte) ([]byte, error) {
	var sc seqScratch
	return s.decodeWith(b, &sc)
}

// seqScratch holds the terms of the sequences being decoded, one after
// the other; each is then copied to arrays of its size: growing its own
// was most of the time of decoding a rank's sequences.
type seqScratch struct {
	terms []SeqTerm
	roots []int32
}

// decodeWith is decode, with sc's arrays to decode into.
func (s *Seq) decodeWith(b []byte, sc *seqScratch) ([]byte, error) {
	d := seqDecoder{b: b}
	n := d.uvarint()
	ts, rs := sc.terms[:0], sc.roots[:0]
	lo := int64(1)
	for i := uint64(0); i < n && d.err == nil; i++ {
		rs = append(rs, int32(len(ts)))
		var last int64
		ts, last = d.term(ts, lo, 0)
		lo = last + 1
	}
	sc.terms, sc.roots = ts, rs
	*s = Seq{}
	if d.err != nil {
		return nil, fmt.Errorf("sequence: %w", d.err)
	}
	// canonical keeps a final leaf beyond the terms as well, where Terms
	// finds it.
	s.terms, s.roots = slices.Clone(ts), slices.Clone(rs)
	s.canonical()
	return d.b[d.off:], nil
}

// canonical moves a final leaf into the open run, as Append leaves it.
func (s *Seq) canonical() {
	if k := len(s.roots); k > 0 && s.terms[s.roots[k-1]].Body == 0 {
		s.open = s.terms[s.roots[k-1]]
		s.terms = s.terms[:s.roots[k-1]]
		s.roots = s.roots[:k-1]
	}
	if len(s.terms) == 0 {
		s.terms, s.roots = nil, nil
	}
}

type seqDecoder struct {
	b   []byte
	off int // b[off:] is left; an offset, not a slice moved on, costs no write barrier
	err error
}

func (d *seqDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	if d.off < len(d.b) && d.b[d.off] < 0x80 { // most are one byte
		d.off++
		return uint64(d.b[d.off-1])
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.err = errors.New("truncated or bad varint")
		return 0
	}
	d.off += n
	return v
}

// term decodes one term whose numbers start at lo or later and returns
// its last number (relative to its frame).
func (d *seqDecoder) term(ts []SeqTerm, lo int64, depth int) ([]SeqTerm, int64) {
	body, delta, count := d.uvarint(), d.uvarint(), d.uvarint()
	if d.err != nil {
		return ts, 0
	}
	if depth >= maxSeqDepth {
		d.err = fmt.Errorf("terms nested deeper than %d", maxSeqDepth)
		return ts, 0
	}
	if body > uint64(len(d.b)-d.off) || delta > maxSeqValue || count >= maxSeqValue || len(ts) >= math.MaxInt32 {
		d.err = errSeqOverflow
		return ts, 0
	}
	p := len(ts)
	t := SeqTerm{Start: lo + int64(delta), Count: int64(count) + 1, Body: int32(body)}
	if t.Start > maxSeqValue {
		d.err = errSeqOverflow
		return ts, 0
	}
	ts = append(ts, t)
	minStride, span := int64(1), int64(0)
	if body > 0 {
		clo := int64(0)
		var last int64
		for k := uint64(0); k < body && d.err == nil; k++ {
			ts, last = d.term(ts, clo, depth+1)
			clo = last + 1
		}
		if d.err != nil {
			return ts, 0
		}
		span = last - ts[p+1].Start
		minStride = span + 1
	}
	t = ts[p]
	t.Size = int32(len(ts) - p)
	// extra is the body's last number relative to a repetition's base.
	extra := int64(0)
	if body > 0 {
		extra = ts[p+1].Start + span
	}
	if t.Start+extra > maxSeqValue {
		d.err = errSeqOverflow
		return ts, 0
	}
	if t.Count > 1 {
		sd := d.uvarint()
		if d.err != nil {
			return ts, 0
		}
		if sd > maxSeqValue {
			d.err = errSeqOverflow
			return ts, 0
		}
		t.Stride = minStride + int64(sd)
		if t.Stride > maxSeqValue || t.Count-1 > (maxSeqValue-t.Start-extra)/t.Stride {
			d.err = errSeqOverflow
			return ts, 0
		}
	}
	ts[p] = t
	return ts, t.Start + (t.Count-1)*t.Stride + extra
}

// decodeV1 reads the version-1 encoding: (start delta, stride, count)
// triples of arithmetic runs.
func (s *Seq) decodeV1(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	*s = Seq{}
	if n < 0 {
		return nil
	}
	if n%3 != 0 {
		return fmt.Errorf("sequence runs: %d integers, not a multiple of 3", n)
	}
	var prev int64 = -1
	for i := 0; i < n/3; i++ {
		var v [3]int64
		for j := range v {
			if v[j], err = dec.DecodeInt64(); err != nil {
				return err
			}
		}
		r := SeqRun{Start: v[0] + max(prev, 0), Stride: v[1], Count: v[2]}
		if r.Count < 1 || (r.Count > 1 && r.Stride < 1) || r.Start <= prev || r.Start > maxSeqValue {
			return fmt.Errorf("sequence run %d (start %d, stride %d, count %d) does not ascend", i, r.Start, r.Stride, r.Count)
		}
		if r.Count > 1 && (r.Count-1) > (maxSeqValue-r.Start)/r.Stride {
			return fmt.Errorf("sequence run %d overflows", i)
		}
		if r.Count == 1 {
			r.Stride = 0
		}
		s.roots = append(s.roots, int32(len(s.terms)))
		s.terms = append(s.terms, SeqTerm{Start: r.Start, Stride: r.Stride, Count: r.Count, Size: 1})
		prev = r.Last()
	}
	s.canonical()
	return nil
}

// EncodeMsgpack writes the anchors as one flat array of integers, each
// field delta-coded against the previous anchor: the anchor budget then
// costs a few bytes an anchor, not a map each.
func (as Anchors) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(3 * len(as)); err != nil {
		return err
	}
	var prev Anchor
	for _, a := range as {
		for _, v := range [3]int64{a.Event - prev.Event, a.Time - prev.Time, a.MPITime - prev.MPITime} {
			if err := enc.EncodeInt(v); err != nil {
				return err
			}
		}
		prev = a
	}
	return nil
}

// DecodeMsgpack reads what EncodeMsgpack wrote. Order is checked by
// Graph.Validate.
func (as *Anchors) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*as = nil
		return nil
	}
	if n%3 != 0 {
		return fmt.Errorf("anchors: %d integers, not a multiple of 3", n)
	}
	out := make(Anchors, 0, min(n/3, 1<<16))
	var prev Anchor
	for i := 0; i < n/3; i++ {
		var v [3]int64
		for j := range v {
			if v[j], err = dec.DecodeInt64(); err != nil {
				return err
			}
		}
		a := Anchor{Event: prev.Event + v[0], Time: prev.Time + v[1], MPITime: prev.MPITime + v[2]}
		out = append(out, a)
		prev = a
	}
	*as = out
	return nil
}
