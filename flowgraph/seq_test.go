package flowgraph_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"mpiflow/flowgraph"
)

// seqPatterns generate the sequence numbers of one edge for n iterations
// of a program shape; every pattern but the irregular ones is periodic.
var seqPatterns = []struct {
	name     string
	periodic bool
	gen      func(n int, r *rand.Rand) []int64
}{
	{"loop", true, func(n int, _ *rand.Rand) []int64 { return progression(5, 4, n) }},
	{"i%3 branch", true, func(n int, _ *rand.Rand) []int64 {
		// Test every pass, Testany every third: the Test->Test edge of
		// "T T T A" repeated.
		var v []int64
		for i := range n {
			v = append(v, int64(4*i+1), int64(4*i+2))
		}
		return v
	}},
	{"two shapes per period", true, func(n int, _ *rand.Rand) []int64 {
		// offsets 0,1,2,5,7 of a period of 10: runs of two shapes alternate
		var v []int64
		for i := range n {
			for _, o := range []int64{0, 1, 2, 5, 7} {
				v = append(v, int64(10*i)+o+1)
			}
		}
		return v
	}},
	{"nested 3 levels", true, func(n int, _ *rand.Rand) []int64 {
		// for i { for j < 4 { for k < 3 { call } other } other2 }
		var v []int64
		e := int64(1)
		for range n {
			for range 4 {
				for range 3 {
					v = append(v, e)
					e++
				}
				e++ // other
			}
			e += 2 // other2 and its successor
		}
		return v
	}},
	{"neighbour list", true, func(n int, _ *rand.Rand) []int64 {
		// Irecv to 3 neighbours, Isend to 3, Waitall, Allreduce: the
		// Irecv->Irecv self edge
		var v []int64
		for i := range n {
			b := int64(8*i + 1)
			v = append(v, b, b+1)
		}
		return v
	}},
	{"phase change", true, func(n int, _ *rand.Rand) []int64 {
		// the first half of the run takes the edge every other pass,
		// the second half every third
		var v []int64
		e := int64(1)
		for i := range n {
			if i < n/2 {
				e += 2
			} else {
				e += 3
			}
			v = append(v, e)
		}
		return v
	}},
	{"irregular poll", false, func(n int, r *rand.Rand) []int64 {
		// a poll that succeeds after 1..8 tries, then 2 other calls
		var v []int64
		e := int64(1)
		for range n / 4 {
			for range 1 + r.IntN(8) {
				v = append(v, e)
				e++
			}
			e += 2
		}
		return v
	}},
	{"random", false, func(n int, r *rand.Rand) []int64 {
		var v []int64
		e := int64(0)
		for range n {
			e += 1 + int64(r.IntN(5))
			v = append(v, e)
		}
		return v
	}},
}

func progression(start, stride int64, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = start + int64(i)*stride
	}
	return v
}

func values(s *flowgraph.Seq) []int64 {
	var v []int64
	s.All(func(n int64) bool { v = append(v, n); return true })
	return v
}

func TestSeqRoundTrip(t *testing.T) {
	for _, p := range seqPatterns {
		for _, n := range []int{0, 1, 2, 3, 7, 100, 3000} {
			want := p.gen(n, rand.New(rand.NewPCG(uint64(n), 1)))
			s := flowgraph.SeqOf(want...)
			if got := values(&s); len(want) > 0 || len(got) > 0 {
				require.Equal(t, want, got, "%s n=%d", p.name, n)
			}
			require.Equal(t, int64(len(want)), s.Len())
			if len(want) > 0 {
				assert.Equal(t, want[0], s.First())
				assert.Equal(t, want[len(want)-1], s.Last())
			}
			var runs int64
			s.Runs(func(r flowgraph.SeqRun) bool { runs += r.Count; return true })
			assert.Equal(t, int64(len(want)), runs)

			b, err := msgpack.Marshal(s)
			require.NoError(t, err)
			var got flowgraph.Seq
			require.NoError(t, msgpack.Unmarshal(b, &got), "%s n=%d", p.name, n)
			require.Equal(t, s, got, "%s n=%d: decoded form differs", p.name, n)
			// Appending to a decoded sequence continues it as if it had
			// never been written.
			if len(want) > 0 {
				next := want[len(want)-1] + 1
				s.Append(next)
				got.Append(next)
				assert.Equal(t, s, got)
			}
		}
	}
}

// TestSeqSizeIndependentOfIterations: a periodic pattern costs the same
// number of terms whatever the number of iterations.
func TestSeqSizeIndependentOfIterations(t *testing.T) {
	for _, p := range seqPatterns {
		if !p.periodic {
			continue
		}
		small := flowgraph.SeqOf(p.gen(1000, nil)...)
		big := flowgraph.SeqOf(p.gen(1_000_000, nil)...)
		assert.Equal(t, small.NumTerms(), big.NumTerms(), p.name)
		assert.LessOrEqual(t, big.NumTerms(), 8, p.name)
		sb := len(small.AppendBinary(nil))
		bb := len(big.AppendBinary(nil))
		assert.LessOrEqual(t, bb, sb+8, "%s: %d bytes for 1000 iterations, %d for 10^6", p.name, sb, bb)
	}
}

// TestSeqReadsVersion1 decodes the arithmetic runs of format version 1.
func TestSeqReadsVersion1(t *testing.T) {
	// runs (3,2,3) (10,1,1) (20,5,2): delta-coded starts
	b, err := msgpack.Marshal([]int64{3, 2, 3, 3, 0, 1, 10, 5, 2})
	require.NoError(t, err)
	var s flowgraph.Seq
	require.NoError(t, msgpack.Unmarshal(b, &s))
	assert.Equal(t, []int64{3, 5, 7, 10, 20, 25}, values(&s))

	for _, bad := range [][]int64{{3, 2}, {3, 0, 2}, {3, 2, 3, -5, 1, 1}, {1, 1 << 62, 4}} {
		b, err := msgpack.Marshal(bad)
		require.NoError(t, err)
		assert.Error(t, msgpack.Unmarshal(b, &s), "%v", bad)
	}
}

func TestSeqDecodeErrors(t *testing.T) {
	good := flowgraph.SeqOf(seqPatterns[3].gen(50, nil)...)
	enc := good.AppendBinary(nil)
	for i := range enc {
		var s flowgraph.Seq
		assert.Error(t, s.UnmarshalBinary(enc[:i]), "truncated at %d of %d", i, len(enc))
	}
	var s flowgraph.Seq
	assert.Error(t, s.UnmarshalBinary(append(enc, 0)), "trailing byte")
	// a start beyond the overflow bound
	huge := []byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0}
	assert.ErrorContains(t, s.UnmarshalBinary(huge), "overflow")
}

// FuzzSeq decodes arbitrary sequences: decoding allocates in proportion to
// the bytes (checkAlloc), and what decodes ascends and agrees with its
// length, first and last.
func FuzzSeq(f *testing.F) {
	for _, p := range seqPatterns {
		s := flowgraph.SeqOf(p.gen(40, rand.New(rand.NewPCG(1, 2)))...)
		f.Add(s.AppendBinary(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s flowgraph.Seq
		var err error
		checkAlloc(t, "sequence", len(b), allocated(func() { err = s.UnmarshalBinary(b) }))
		if err != nil {
			return
		}
		// A decoded sequence ascends, and its length, first and last
		// agree with its numbers (bounded, so the fuzzer cannot ask for
		// 2^62 of them).
		if s.Len() > 1<<16 {
			return
		}
		v := values(&s)
		require.Equal(t, int64(len(v)), s.Len())
		for i := 1; i < len(v); i++ {
			require.Less(t, v[i-1], v[i])
		}
		if len(v) > 0 {
			require.Equal(t, v[0], s.First())
			require.Equal(t, v[len(v)-1], s.Last())
			require.GreaterOrEqual(t, v[0], int64(1))
		}
		again := flowgraph.SeqOf(v...)
		require.Equal(t, v, values(&again))
	})
}
