package flowgraph_test

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func writeJob(t testing.TB, nranks int) (string, flowgraph.Header, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 7, Events: 3000, Depth: 3, Sites: 12, Branchy: true, Counters: 1}, nranks, 2)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path, h, ranks
}

func TestFileRoundTrip(t *testing.T) {
	path, h, ranks := writeJob(t, 4)
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h.Version = flowgraph.FormatVersion
	assert.Equal(t, h, f.Header)
	require.Len(t, f.Index, 4)
	// Read in reverse order: each block is independent.
	for i := len(ranks) - 1; i >= 0; i-- {
		r, err := f.ReadRank(i)
		require.NoError(t, err)
		assert.Equal(t, ranks[i], r)
	}
	assert.Equal(t, 2, f.FindRank(2, 0))
	assert.Equal(t, -1, f.FindRank(9, 0))
	_, err = f.ReadRank(4)
	assert.ErrorContains(t, err, "no block 4")
	// No temporary file is left behind.
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

// TestSkeleton: a block read without its sequences is the block but for
// them and the anchors between the first and the last, and takes the same
// bytes.
func TestSkeleton(t *testing.T) {
	path, _, ranks := writeJob(t, 3)
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for i := range ranks {
		whole, err := f.ReadRank(i)
		require.NoError(t, err)
		sk, err := f.Skeleton(i)
		require.NoError(t, err)
		assert.Equal(t, f.BlockBytes(i, whole), f.BlockBytes(i, sk))
		require.Len(t, sk.Graph.Edges, len(whole.Graph.Edges))
		var n int
		for k := range sk.Graph.Edges {
			require.True(t, sk.Graph.Edges[k].Seq.IsZero(), "edge %d", k)
			n += whole.Graph.Edges[k].Seq.NumTerms()
			sk.Graph.Edges[k].Seq = whole.Graph.Edges[k].Seq
		}
		require.Positive(t, n, "the generated graph has sequences")
		require.Greater(t, len(whole.Graph.Anchors), 2)
		assert.Equal(t, flowgraph.Anchors{whole.Graph.Anchors[0], whole.Graph.Anchors[len(whole.Graph.Anchors)-1]}, sk.Graph.Anchors)
		sk.Graph.Anchors = whole.Graph.Anchors
		assert.Equal(t, whole, sk)
	}
	_, err = f.Skeleton(3)
	assert.ErrorContains(t, err, "no block 3")
}

// TestReadLazy: a block read lazily gives every edge's first event, its
// sequence on demand, the runs of its self-loops and an order of its edges'
// traversals as the block read whole does, and walks the same events.
func TestReadLazy(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.HPCCShape(100_000), 2, 2)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for i := range ranks {
		whole, err := f.ReadRank(i)
		require.NoError(t, err)
		lazy, err := f.ReadLazy(i)
		require.NoError(t, err)
		g, w := &lazy.Graph, &whole.Graph
		var unmapped, selfLoops int
		var nonSelf []int
		for k := range g.Edges {
			if g.Edges[k].Count > 0 && g.Edges[k].Seq.IsZero() {
				unmapped++
			}
			assert.Equal(t, w.Edges[k].Seq.First(), g.FirstEvent(k), "edge %d", k)
			e := &g.Edges[k]
			if e.Src != e.Dst {
				nonSelf = append(nonSelf, k)
				continue
			}
			selfLoops++
			var entries []int
			for x := range g.Edges {
				if d := &g.Edges[x]; d.Dst == e.Dst && d.Src != d.Dst {
					entries = append(entries, x)
				}
			}
			runs := g.RunsAfter(k, entries)
			assert.Equal(t, w.RunsAfter(k, entries), runs, "self-loop %d", k)
			var sum int64
			for _, n := range runs {
				sum += n
			}
			if g.Initial != e.Dst { // else the first run has no entry
				assert.Equal(t, e.Count, sum, "self-loop %d: every repeat follows an entry", k)
			}
		}
		require.Equal(t, len(g.Edges), unmapped, "rank %d: the block stores positions, none mapped", i)
		require.Positive(t, selfLoops)
		assert.Equal(t, traversalOrder(w.OrderSeqs(nonSelf), nonSelf), traversalOrder(g.OrderSeqs(nonSelf), nonSelf))
		for k := range g.Edges[:len(g.Edges)/2] {
			assert.Equal(t, w.Edges[k].Seq.Terms(), g.EdgeSeq(k).Terms(), "edge %d", k)
		}
		assert.Equal(t, nodesOf(t, w), nodesOf(t, g))
		for k := range g.Edges {
			assert.Equal(t, w.Edges[k].Seq.Terms(), g.Edges[k].Seq.Terms(), "edge %d after Events", k)
		}
	}
}

// traversalOrder is the edges of es in the order of their sequences'
// numbers.
func traversalOrder(seqs []*flowgraph.Seq, es []int) []int {
	type num struct {
		n    int64
		edge int
	}
	var all []num
	for k, s := range seqs {
		s.All(func(n int64) bool {
			all = append(all, num{n, es[k]})
			return true
		})
	}
	slices.SortFunc(all, func(a, b num) int { return cmp.Compare(a.n, b.n) })
	out := make([]int, len(all))
	for k, x := range all {
		out[k] = x.edge
	}
	return out
}

func TestFileErrors(t *testing.T) {
	path, _, _ := writeJob(t, 3)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	idx := f.Index
	f.Close()

	mutate := func(fn func(b []byte) []byte) []byte {
		return fn(bytes.Clone(good))
	}
	tests := []struct {
		name     string
		data     []byte
		openErr  string // error from Open
		rankErr  string // else error from ReadRank(1)
		wantRank int
	}{
		{name: "empty", data: nil, openErr: "too short"},
		{name: "wrong magic", data: mutate(func(b []byte) []byte { b[0] = 'X'; return b }), openErr: "wrong magic"},
		{name: "newer version", data: mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], flowgraph.FormatVersion+1); return b }), openErr: "upgrade mpiflow"},
		{name: "version 0", data: mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 0); return b }), openErr: "version 0 does not exist"},
		{name: "truncated", data: good[:len(good)/2], openErr: "truncated"},
		{name: "truncated by one byte", data: good[:len(good)-1], openErr: "truncated"},
		{name: "corrupt footer", data: mutate(func(b []byte) []byte { b[len(b)-30] ^= 0xff; return b }), openErr: "footer checksum"},
		{name: "trailer offset", data: mutate(func(b []byte) []byte { binary.BigEndian.PutUint64(b[len(b)-24:], 3); return b }), openErr: "outside the file"},
		{name: "corrupt block", data: mutate(func(b []byte) []byte { b[idx[1].Offset+idx[1].Length/2] ^= 0x55; return b }), rankErr: "block checksum", wantRank: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.mpiflow")
			require.NoError(t, os.WriteFile(p, tt.data, 0o644))
			f, err := flowgraph.Open(p)
			if tt.openErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, flowgraph.ErrFormat)
				assert.Contains(t, err.Error(), p, "error names the file")
				assert.Contains(t, err.Error(), tt.openErr)
				assert.Contains(t, err.Error(), "at byte")
				return
			}
			require.NoError(t, err)
			defer f.Close()
			_, err = f.ReadRank(1)
			require.Error(t, err)
			var fe *flowgraph.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.wantRank, fe.Rank)
			assert.Equal(t, idx[1].Offset, fe.Offset)
			assert.Contains(t, err.Error(), tt.rankErr)
			// The other ranks are still readable.
			_, err = f.ReadRank(0)
			assert.NoError(t, err)
		})
	}
}

// TestHeaderRanks: a header may not claim more ranks than a job can have,
// nor hold blocks of ranks beyond its count.
func TestHeaderRanks(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 2, Events: 200, Depth: 2, Sites: 4}, 3, 1)
	for _, c := range []struct {
		n    int
		want string
	}{{1 << 62, "4611686018427387904 ranks (a job has 0 to 16777216)"}, {-1, "-1 ranks"}, {2, "rank 2 of a job of 2 ranks"}} {
		h.NumRanks = c.n
		p := filepath.Join(t.TempDir(), "job.mpiflow")
		require.NoError(t, flowgraph.WriteFile(p, h, ranks))
		_, err := flowgraph.Open(p)
		require.ErrorIs(t, err, flowgraph.ErrFormat)
		assert.ErrorContains(t, err, c.want)
	}
}

// TestNegativeFigures: a file whose figures cannot be (negative counts,
// times, bytes; counts that overflow) is an error naming the figure, not
// a table of negative numbers.
func TestNegativeFigures(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(h *flowgraph.Header, r *flowgraph.Rank)
		want   string
	}{
		{"wallclock", func(h *flowgraph.Header, r *flowgraph.Rank) { h.Wallclock = -2_150_000_000 }, "wallclock -2150000000 ns"},
		{"node count", func(h *flowgraph.Header, r *flowgraph.Rank) { r.Graph.Nodes[1].Count = -5 }, "count -5"},
		{"node time", func(h *flowgraph.Header, r *flowgraph.Rank) { r.Graph.Nodes[1].Time.Total = -1 }, "time -1 ns"},
		{"bytes", func(h *flowgraph.Header, r *flowgraph.Rank) { r.Graph.Nodes[0].Bytes.Total = -7 }, "bytes -7"},
		{"overflow", func(h *flowgraph.Header, r *flowgraph.Rank) {
			r.Graph.Nodes[0].Count, r.Graph.Nodes[1].Count = 1<<62, 1<<62
		}, "overflows"},
		{"user time", func(h *flowgraph.Header, r *flowgraph.Rank) { r.UserTime = -3 }, "user -3 ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, ranks := flowgen.Run(flowgen.Options{Seed: 7, Events: 3000, Depth: 3, Sites: 12, Branchy: true}, 1, 1)
			require.Greater(t, len(ranks[0].Graph.Nodes), 1)
			c.mutate(&h, ranks[0])
			p := filepath.Join(t.TempDir(), "job.mpiflow")
			require.NoError(t, flowgraph.WriteFile(p, h, ranks))
			f, err := flowgraph.Open(p)
			if err == nil {
				defer f.Close()
				_, err = f.ReadRank(0)
			}
			require.ErrorIs(t, err, flowgraph.ErrFormat)
			assert.ErrorContains(t, err, c.want)
		})
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := flowgraph.Open(filepath.Join(t.TempDir(), "nope.mpiflow"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = flowgraph.Open(t.TempDir())
	assert.ErrorContains(t, err, "is a directory")
}

func TestCreateUnwritable(t *testing.T) {
	_, err := flowgraph.Create(filepath.Join(t.TempDir(), "missing-dir", "x.mpiflow"))
	assert.ErrorContains(t, err, "missing-dir")
}

// FuzzOpen feeds arbitrary bytes to the reader: it must return errors, never
// panic or hang. The seed corpus holds a valid file and a few truncations.
func FuzzOpen(f *testing.F) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 7, Events: 200, Depth: 2, Sites: 5, Branchy: true}, 2, 2)
	var buf bytes.Buffer
	buf.Write(flowgraph.Preamble())
	var idx []flowgraph.IndexEntry
	for _, r := range ranks {
		b, crc, err := flowgraph.EncodeRank(r)
		require.NoError(f, err)
		idx = append(idx, flowgraph.IndexEntry{Rank: r.Rank, Offset: int64(buf.Len()), Length: int64(len(b)), CRC: crc})
		buf.Write(b)
	}
	ft, err := flowgraph.EncodeFooter(h, idx, int64(buf.Len()))
	require.NoError(f, err)
	buf.Write(ft)
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-10])
	f.Add(flowgraph.Preamble())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := flowgraph.NewFile("fuzz", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i := range file.Index {
			r, err := file.ReadRank(i)
			if err != nil || r.Graph.NumEvents > 1e6 {
				continue
			}
			it := r.Graph.Events()
			for it.Next() {
			}
		}
	})
}

// FuzzDecodeRank decodes arbitrary blocks (past the checksum, which the
// fuzzer could not forge), whole and lazily, and reconstructs what
// decodes, with the properties of FuzzOpenValidCRC: errors that say the
// block is not valid, allocation bounded by its size, figures never
// negative, the same events and runs read whole and lazily.
func FuzzDecodeRank(f *testing.F) {
	for _, c := range []struct {
		opt       flowgen.Options
		positions bool
	}{
		{flowgen.Options{Seed: 8, Events: 300, Depth: 2, Sites: 6, Branchy: true}, false},
		{flowgen.Options{Seed: 1, Events: 1000, Depth: 2, Sites: 4, Branchy: true, Polls: true}, true},
	} {
		_, ranks := flowgen.Run(c.opt, 1, 1)
		_, pos := flowgraph.StoredSeqs(&ranks[0].Graph)
		require.Equal(f, c.positions, pos, "%+v: positions", c.opt)
		b, _, err := flowgraph.EncodeRank(ranks[0])
		require.NoError(f, err)
		f.Add(b)
		f.Add(rawParts(f, b)) // mutations of the raw parts reach their msgpack
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r, lazy *flowgraph.Rank
		var err, lerr error
		checkAlloc(t, "block", len(data), max(allocated(func() { r, err = flowgraph.DecodeRank(data) }),
			allocated(func() { lazy, lerr = flowgraph.DecodeLazy(data) })))
		if (err == nil) != (lerr == nil) {
			t.Fatalf("read whole: %v; read lazily: %v", err, lerr)
		}
		if err != nil {
			if !errors.Is(err, flowgraph.ErrFormat) {
				t.Fatalf("error %q is not a format error", err)
			}
			return
		}
		checkRank(t, r)
		checkRank(t, lazy)
		for i := range r.Graph.Edges {
			if f, w := lazy.Graph.FirstEvent(i), r.Graph.Edges[i].Seq.First(); f != w {
				t.Fatalf("edge %d: first event %d read lazily, %d whole", i, f, w)
			}
		}
		// (Huge event counts are valid but too slow to walk here.)
		checkEvents(t, 0, &r.Graph, &lazy.Graph)
		checkSelfLoops(t, 0, &r.Graph, &lazy.Graph)
	})
}
