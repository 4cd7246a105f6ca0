package flowgraph

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomNestSeq returns the Seq of numbers drawn by random nested loops,
// periodic or not, and the numbers.
func randomNestSeq(r *rand.Rand) (Seq, []int64) {
	var s Seq
	var ns []int64
	n := int64(r.IntN(3))
	var loop func(depth int)
	loop = func(depth int) {
		iters := 1 + r.IntN(12)
		width := 1 + r.IntN(3)
		for range iters {
			for range width {
				if depth > 0 && r.IntN(3) == 0 {
					loop(depth - 1)
				}
				n += 1 + int64(r.IntN(2))*int64(r.IntN(3))
				if r.IntN(4) > 0 {
					s.Append(n)
					ns = append(ns, n)
				}
			}
		}
	}
	for range 1 + r.IntN(4) {
		loop(r.IntN(4))
	}
	return s, ns
}

// TestSeqIndexMatchesExpansion checks rank, succ and seek against the
// expanded numbers at every point of random sequences.
func TestSeqIndexMatchesExpansion(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	for k := range 300 {
		s, ns := randomNestSeq(r)
		x := newSeqIndex(&s)
		require.Equal(t, int64(len(ns)), x.total, "seq %d", k)
		var c walkCursor
		hi := int64(5)
		if len(ns) > 0 {
			hi += ns[len(ns)-1]
		}
		i := 0 // ns[i] is the first number >= v
		for v := int64(0); v <= hi; v++ {
			for i < len(ns) && ns[i] < v {
				i++
			}
			want := int64(math.MaxInt64)
			if i < len(ns) {
				want = ns[i]
			}
			if got := x.rank(v); got != int64(i) {
				require.Equal(t, int64(i), got, "seq %d rank(%d)", k, v)
			}
			if got := x.succ(v); got != want {
				require.Equal(t, want, got, "seq %d succ(%d)", k, v)
			}
			if v%7 != 0 {
				continue
			}
			x.seek(&c, v)
			for j := i; j <= min(i+10, len(ns)); j++ {
				w := int64(math.MaxInt64)
				if j < len(ns) {
					w = ns[j]
				}
				if c.val != w {
					require.Equal(t, w, c.val, "seq %d seek(%d) then %d steps", k, v, j-i)
				}
				c.Next()
			}
		}
	}
}

// TestSearchFrom checks searchFrom against sort.Search from every hint,
// before, at and past the answer.
func TestSearchFrom(t *testing.T) {
	xs := []int64{1, 3, 3, 4, 9, 12, 12, 12, 20, 31, 40, 41, 57}
	for v := int64(0); v <= 60; v++ {
		f := func(i int) bool { return xs[i] >= v }
		want := sort.Search(len(xs), f)
		for hint := -1; hint <= len(xs)+1; hint++ {
			require.Equal(t, want, searchFrom(len(xs), hint, f), "v %d hint %d", v, hint)
		}
	}
	require.Equal(t, 0, searchFrom(0, 3, func(int) bool { return true }), "empty")
}
