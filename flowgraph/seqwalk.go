package flowgraph

import "math"

// WalkSeqs feeds the numbers of several disjoint sequences, in ascending
// order, to a deterministic machine with integer states, and counts what
// it outputs: starting in state start, at each number of seqs[i] the
// machine goes to state next and increments counts[counter] (none when
// counter < 0), where next, counter = step(state, i). step must depend on
// its arguments only, and counter must be below ncounters.
//
// The cost follows the sequences' terms, not their numbers, wherever the
// sequences repeat in step: when all of them repeat with a common period
// d from the current number x on for m >= 4 periods (each is inside a run
// or a repeat whose stride divides d, or has no number before x+m*d), the
// walk feeds the first two periods [x, x+2d) one number at a time, and if
// the machine is in the same state after the second period as after the
// first, the next m-3 periods, which feed it the same numbers shifted by
// multiples of d, add m-3 times the counts of the second and are skipped.
// The periods are walked the same way, so nested repeats are skipped at
// every level.
func WalkSeqs(seqs []*Seq, ncounters, start int, step func(state, i int) (next, counter int)) (counts []int64, final int) {
	w := seqWalker{counts: make([]int64, ncounters), state: start, step: step}
	if len(seqs) == 0 {
		return w.counts, w.state
	}
	w.cur = make([]walkCursor, len(seqs))
	w.heap = make([]int32, 0, len(seqs))
	for i, s := range seqs {
		w.cur[i].init(s)
		w.heap = append(w.heap, int32(i))
	}
	w.heapify()
	w.run(math.MaxInt64)
	return w.counts, w.state
}

// seqWalker merges the cursors of WalkSeqs with a min-heap on their
// current numbers.
type seqWalker struct {
	cur    []walkCursor
	heap   []int32 // cursor indices, smallest current number first
	counts []int64
	state  int
	step   func(state, i int) (int, int)
	cands  []int64 // scratch space of skip
}

// run feeds the machine every number below hi.
func (w *seqWalker) run(hi int64) {
	var wait, backoff int // numbers to feed before the next skip attempt
	for {
		i := w.heap[0]
		c := &w.cur[i]
		x := c.val
		if x >= hi {
			return
		}
		if wait == 0 {
			if w.skip(x, hi) {
				backoff = 0
				continue
			}
			backoff = min(2*backoff+1, 255)
			wait = backoff
		} else {
			wait--
		}
		var k int
		w.state, k = w.step(w.state, int(i))
		if k >= 0 {
			w.counts[k]++
		}
		c.Next()
		w.down(0)
	}
}

// skip tries to skip periods from x on (see WalkSeqs) and reports whether
// it fed any number.
func (w *seqWalker) skip(x, hi int64) bool {
	// The period must be a multiple of a stride of the cursor at x,
	// which has a number in the first period; other cursors' strides
	// are candidates too, for periods that are multiples of several.
	w.cands = w.cands[:0]
	for i := range w.cur {
		if len(w.cur) > 16 && w.cur[i].val != x {
			continue
		}
		w.cands = w.cur[i].strides(w.cands)
	}
	if len(w.cands) == 0 {
		return false
	}
	var bestD, bestM int64
	for k, d := range w.cands {
		if d <= 0 || (hi-x)/d < 4 {
			continue
		}
		dup := false
		for _, e := range w.cands[:k] {
			dup = dup || e == d
		}
		if dup {
			continue
		}
		m := (hi - x) / d
		for i := range w.cur {
			mi, _ := w.cur[i].periods(x, d)
			if m = min(m, mi); m < 4 {
				break
			}
		}
		if m >= 4 && (m-1)*d > (bestM-1)*bestD {
			bestD, bestM = d, m
		}
	}
	if bestM < 4 {
		return false
	}
	d, m := bestD, bestM
	levels := make([]int, len(w.cur))
	for i := range w.cur {
		_, levels[i] = w.cur[i].periods(x, d)
	}
	w.run(x + d)
	s1 := w.state
	before := append([]int64(nil), w.counts...)
	w.run(x + 2*d)
	if w.state != s1 {
		return true
	}
	// Every cursor that repeats has a number in each period, so it now
	// stands below x+3d, and m-3 periods further on below x+m*d: still
	// inside the run or repeat that repeats.
	jumps := m - 3
	for k := range w.counts {
		w.counts[k] += jumps * (w.counts[k] - before[k])
	}
	for i := range w.cur {
		if levels[i] != noPeriod {
			w.cur[i].jump(levels[i], jumps*d)
		}
	}
	w.heapify()
	return true
}

// noPeriod is the level of a cursor that has no number in the periods
// skipped.
const noPeriod = -2

// leafLevel is the level of a cursor whose current run repeats.
const leafLevel = -1

// walkCursor walks one Seq like seqCursor and also tells where its numbers
// repeat with a given period (after init; a cursor positioned by
// seqIndex.seek only walks).
type walkCursor struct {
	seqCursor
	// bodyLast[p] is, for a repeat term p, the last number of its body
	// relative to a repetition's base.
	bodyLast []int64
}

func (c *walkCursor) init(s *Seq) {
	terms := s.Terms()
	c.bodyLast = make([]int64, len(terms))
	for p := range terms {
		if t := &terms[p]; t.Body > 0 {
			q := p + 1
			for k := int32(1); k < t.Body; k++ {
				q += int(terms[q].Size)
			}
			c.bodyLast[p] = termLast(terms, q)
		}
	}
	c.Init(s)
}

// strides appends the strides of the current run and of the repeats the
// cursor is in that have numbers left beyond the current repetition.
func (c *walkCursor) strides(out []int64) []int64 {
	if c.left >= 2 {
		out = append(out, c.stride)
	}
	for q := len(c.stack) - 1; q >= 1; q-- {
		if f := &c.stack[q]; f.k < f.count {
			out = append(out, f.stride)
		}
	}
	return out
}

// periods returns how many periods [x+j*d, x+(j+1)*d) from x, which is
// at most the cursor's current number (all numbers before x have been
// fed), hold the cursor's numbers as copies of the first shifted by j*d,
// and the level that repeats them: a stack index, leafLevel, or noPeriod
// when the cursor has no number in those periods.
func (c *walkCursor) periods(x, d int64) (int64, int) {
	if c.val == math.MaxInt64 {
		return math.MaxInt64, noPeriod
	}
	best, level := (c.val-x)/d, noPeriod
	// A run or repeat whose stride divides d holds numbers that repeat
	// with period d up to its last number, and from x on if the number
	// (or repetition) before its current one, which need not exist, is
	// below x.
	if c.left >= 2 && c.stride > 0 && d%c.stride == 0 && c.val-c.stride < x {
		if m := (c.val + (c.left-1)*c.stride + 1 - x) / d; m > best {
			best, level = m, leafLevel
		}
	}
	for q := len(c.stack) - 1; q >= 1; q-- {
		f := &c.stack[q]
		if f.k >= f.count || f.stride <= 0 || d%f.stride != 0 {
			continue
		}
		bl := c.bodyLast[f.first-1]
		if f.base-f.stride+bl >= x {
			continue
		}
		if m := (f.base + (f.count-f.k)*f.stride + bl + 1 - x) / d; m > best {
			best, level = m, q
		}
	}
	return best, level
}

// jump moves the cursor by delta, a multiple of the stride of the run or
// repeat at level, within it.
func (c *walkCursor) jump(level int, delta int64) {
	c.val += delta
	if level == leafLevel {
		c.left -= delta / c.stride
		return
	}
	f := &c.stack[level]
	f.k += delta / f.stride
	for q := level; q < len(c.stack); q++ {
		c.stack[q].base += delta
	}
}

func (w *seqWalker) less(a, b int32) bool { return w.cur[a].val < w.cur[b].val }

func (w *seqWalker) heapify() {
	for i := len(w.heap)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

func (w *seqWalker) down(i int) {
	h := w.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && w.less(h[r], h[l]) {
			m = r
		}
		if !w.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
