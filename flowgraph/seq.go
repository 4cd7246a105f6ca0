package flowgraph

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// SeqRun is an arithmetic progression of sequence numbers:
// Start, Start+Stride, ..., Start+(Count-1)*Stride.
type SeqRun struct {
	Start  int64
	Stride int64
	Count  int64
}

// Last is the last sequence number of the run.
func (r SeqRun) Last() int64 { return r.Start + (r.Count-1)*r.Stride }

// SeqRuns stores ascending sequence numbers as runs of arithmetic
// progressions, so a loop executed a million times costs one run.
type SeqRuns []SeqRun

// Append adds sequence number n, which must be larger than every number
// already stored.
func (s *SeqRuns) Append(n int64) {
	runs := *s
	if k := len(runs); k > 0 {
		r := &runs[k-1]
		switch {
		case r.Count == 1:
			r.Stride = n - r.Start
			r.Count = 2
			return
		case n == r.Start+r.Count*r.Stride:
			r.Count++
			return
		}
	}
	*s = append(runs, SeqRun{Start: n, Count: 1})
}

// Len is the number of sequence numbers stored.
func (s SeqRuns) Len() int64 {
	var n int64
	for _, r := range s {
		n += r.Count
	}
	return n
}

// All calls f for each sequence number in ascending order.
func (s SeqRuns) All(f func(int64) bool) {
	for _, r := range s {
		for i, v := int64(0), r.Start; i < r.Count; i, v = i+1, v+r.Stride {
			if !f(v) {
				return
			}
		}
	}
}

// EncodeMsgpack writes the runs as one flat array of integers, each run's
// start delta-coded against the previous run's last number, which keeps the
// numbers small and so the msgpack encoding short.
func (s SeqRuns) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(3 * len(s)); err != nil {
		return err
	}
	var prev int64
	for _, r := range s {
		for _, v := range [3]int64{r.Start - prev, r.Stride, r.Count} {
			if err := enc.EncodeInt(v); err != nil {
				return err
			}
		}
		prev = r.Last()
	}
	return nil
}

// DecodeMsgpack reads what EncodeMsgpack wrote and checks that the numbers
// ascend, so a corrupt file cannot make reconstruction loop or go backwards.
func (s *SeqRuns) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*s = nil
		return nil
	}
	if n%3 != 0 {
		return fmt.Errorf("sequence runs: %d integers, not a multiple of 3", n)
	}
	runs := make(SeqRuns, 0, min(n/3, 1<<16))
	var prev int64 = -1
	for i := 0; i < n/3; i++ {
		var v [3]int64
		for j := range v {
			if v[j], err = dec.DecodeInt64(); err != nil {
				return err
			}
		}
		r := SeqRun{Start: v[0] + max(prev, 0), Stride: v[1], Count: v[2]}
		if r.Count < 1 || (r.Count > 1 && r.Stride < 1) || r.Start <= prev {
			return fmt.Errorf("sequence run %d (start %d, stride %d, count %d) does not ascend", i, r.Start, r.Stride, r.Count)
		}
		if r.Count > 1 && (r.Count-1) > (1<<62)/r.Stride {
			return fmt.Errorf("sequence run %d overflows", i)
		}
		runs = append(runs, r)
		prev = r.Last()
	}
	*s = runs
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
