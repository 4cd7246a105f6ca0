package flowgraph

import (
	"math"
	"sort"
)

// seqIndex answers rank and successor queries on a Seq without expanding
// it: a binary search over the top-level terms, then one repetition per
// level of nesting, found by division.
type seqIndex struct {
	terms []SeqTerm
	// Per repeat term (slot[p] for term p), relative to the base of the
	// frame that holds it: its first and last number, and the number of
	// numbers of one repetition of its body. A run's are its own terms'
	// (first, last, one each): most terms of a polled rank's positions
	// are runs.
	slot                []int32
	rfirst, rlast, rper []int64
	roots               []int32
	rootLast            []int64 // absolute last number of each top-level term
	rootCum             []int64 // numbers before each top-level term
	total               int64
}

func newSeqIndex(s *Seq) *seqIndex {
	ts := s.Terms()
	x := &seqIndex{terms: ts, slot: make([]int32, len(ts))}
	// Counted first, the arrays are made once to size.
	var reps, roots int
	for p := range ts {
		if ts[p].Body > 0 {
			x.slot[p] = int32(reps)
			reps++
		}
	}
	for p := 0; p < len(ts); p += int(ts[p].Size) {
		roots++
	}
	x.rfirst, x.rlast, x.rper = make([]int64, reps), make([]int64, reps), make([]int64, reps)
	x.roots, x.rootLast, x.rootCum = make([]int32, 0, roots), make([]int64, 0, roots), make([]int64, 0, roots)
	// Children follow their repeat, so a backward pass sees them first.
	for p := len(ts) - 1; p >= 0; p-- {
		t := &ts[p]
		if t.Body == 0 {
			continue
		}
		var n int64
		q, lastChild := p+1, p+1
		for k := int32(0); k < t.Body; k++ {
			n += x.count(q)
			lastChild = q
			q += int(ts[q].Size)
		}
		r := x.slot[p]
		x.rper[r] = n
		x.rfirst[r] = t.Start + x.first(p+1)
		x.rlast[r] = t.Start + (t.Count-1)*t.Stride + x.last(lastChild)
	}
	for p := 0; p < len(ts); p += int(ts[p].Size) {
		x.roots = append(x.roots, int32(p))
		x.rootLast = append(x.rootLast, x.last(p))
		x.rootCum = append(x.rootCum, x.total)
		x.total += x.count(p)
	}
	return x
}

// first is the first number of the subtree at p, relative to its frame.
func (x *seqIndex) first(p int) int64 {
	if t := &x.terms[p]; t.Body == 0 {
		return t.Start
	}
	return x.rfirst[x.slot[p]]
}

// last is the last number of the subtree at p, relative to its frame.
func (x *seqIndex) last(p int) int64 {
	if t := &x.terms[p]; t.Body == 0 {
		return t.Start + (t.Count-1)*t.Stride
	}
	return x.rlast[x.slot[p]]
}

// count is the number of numbers of the subtree at p.
func (x *seqIndex) count(p int) int64 {
	if x.terms[p].Body == 0 {
		return x.terms[p].Count
	}
	return x.terms[p].Count * x.rper[x.slot[p]]
}

// root returns the index of the first top-level term whose last number is
// at least v, len(roots) if none.
func (x *seqIndex) root(v int64) int {
	return sort.Search(len(x.roots), func(r int) bool { return x.rootLast[r] >= v })
}

// rootFrom is root(v), searched from the top-level term hint.
func (x *seqIndex) rootFrom(hint int, v int64) int {
	return searchFrom(len(x.roots), hint, func(r int) bool { return x.rootLast[r] >= v })
}

// rank is the number of numbers below v.
func (x *seqIndex) rank(v int64) int64 { return x.rankIn(x.root(v), v) }

// rankIn is rank(v), r being root(v).
func (x *seqIndex) rankIn(r int, v int64) int64 {
	if r == len(x.roots) {
		return x.total
	}
	return x.rootCum[r] + x.rankTerm(int(x.roots[r]), 0, v)
}

// rankTerm is the number of numbers below v of the subtree at p in a frame
// of the given base.
func (x *seqIndex) rankTerm(p int, base, v int64) int64 {
	t := &x.terms[p]
	if v <= base+x.first(p) {
		return 0
	}
	if t.Body == 0 {
		if t.Count == 1 {
			return 1
		}
		return min(t.Count, (v-base-t.Start-1)/t.Stride+1)
	}
	r0 := base + t.Start
	bodyLast := x.last(p) - t.Start - (t.Count-1)*t.Stride
	// Repetitions whose last number is below v count whole.
	var full int64
	if d := v - 1 - r0 - bodyLast; d >= 0 {
		full = t.Count
		if t.Stride > 0 {
			full = min(t.Count, d/t.Stride+1)
		}
	}
	n := full * x.rper[x.slot[p]]
	if full == t.Count {
		return n
	}
	b := r0 + full*t.Stride
	for q, k := p+1, int32(0); k < t.Body; q, k = q+int(x.terms[q].Size), k+1 {
		if b+x.first(q) >= v {
			break
		}
		n += x.rankTerm(q, b, v)
	}
	return n
}

// succ is the smallest number at least v, math.MaxInt64 if none.
func (x *seqIndex) succ(v int64) int64 { return x.succIn(x.root(v), v) }

// succIn is succ(v), r being root(v).
func (x *seqIndex) succIn(r int, v int64) int64 {
	if r == len(x.roots) {
		return math.MaxInt64
	}
	p, base := int(x.roots[r]), int64(0)
	for {
		t := &x.terms[p]
		if t.Body == 0 {
			first := base + t.Start
			if v <= first {
				return first
			}
			return first + (v-first+t.Stride-1)/t.Stride*t.Stride
		}
		base += t.Start + x.rep(p, base, v)*t.Stride
		p = x.child(p, base, v)
	}
}

// rep is the first repetition of the repeat at p (in a frame of the given
// base) whose last number is at least v, which must exist.
func (x *seqIndex) rep(p int, base, v int64) int64 {
	t := &x.terms[p]
	bodyLast := x.last(p) - t.Start - (t.Count-1)*t.Stride
	if d := v - base - t.Start - bodyLast; d > 0 {
		return (d + t.Stride - 1) / t.Stride
	}
	return 0
}

// child is the first child of the repeat at p, in a repetition of the
// given base, whose last number is at least v, which must exist.
func (x *seqIndex) child(p int, base, v int64) int {
	q := p + 1
	for base+x.last(q) < v {
		q += int(x.terms[q].Size)
	}
	return q
}

// seek positions c, a cursor over the same Seq, at the smallest number at
// least v.
func (x *seqIndex) seek(c *walkCursor, v int64) {
	c.terms = x.terms
	c.stack = append(c.stack[:0], seqFrame{end: int32(len(x.terms)), k: 1, count: 1})
	r := x.root(v)
	if r == len(x.roots) {
		c.stack[0].next = c.stack[0].end
		c.val, c.left = math.MaxInt64, 0
		return
	}
	p, base := int(x.roots[r]), int64(0)
	for {
		t := &x.terms[p]
		c.stack[len(c.stack)-1].next = int32(p) + t.Size
		if t.Body == 0 {
			first := base + t.Start
			k := int64(0)
			if v > first {
				k = (v - first + t.Stride - 1) / t.Stride
			}
			c.val, c.stride, c.left = first+k*t.Stride, t.Stride, t.Count-k
			return
		}
		k := x.rep(p, base, v)
		base += t.Start + k*t.Stride
		c.stack = append(c.stack, seqFrame{first: int32(p) + 1, end: int32(p) + t.Size, k: k + 1, count: t.Count, stride: t.Stride, base: base})
		p = x.child(p, base, v)
	}
}

// searchFrom is sort.Search(n, f) started at hint: galloping from there
// costs O(log d) for an answer d away, where queries that move forward
// find it close.
func searchFrom(n, hint int, f func(int) bool) int {
	hint = min(max(hint, 0), n)
	if hint > 0 && f(hint-1) {
		return sort.Search(hint-1, f)
	}
	// f is false below lo.
	lo, step := hint, 1
	for lo+step-1 < n && !f(lo+step-1) {
		lo += step
		step *= 2
	}
	hi := min(lo+step-1, n)
	return lo + sort.Search(hi-lo, func(i int) bool { return f(lo + i) })
}
