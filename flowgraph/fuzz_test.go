package flowgraph_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// The reader checks a CRC-32 of the footer (in the trailer) and of every
// block (in the footer's index), so a fuzzer that mutates file bytes
// almost never gets past them (FuzzOpen). FuzzOpenValidCRC makes every
// checksum right again before reading, so that its mutations reach the
// msgpack of the footer and of the blocks and what is inside them: the
// tables, sequences and timing. Its seeds store those parts raw as well as
// compressed, since a mutated zstd frame fails zstd's own checks.

// Layout of the file's trailer (format.go): footer offset, footer length,
// CRC-32 of the footer, magic.
const (
	trailerLen   = 24
	trailerMagic = "MFT\x00"
)

// fuzzFooter is the footer as files store it.
type fuzzFooter struct {
	Header flowgraph.Header       `msgpack:"header"`
	Index  []flowgraph.IndexEntry `msgpack:"index"`
}

// withValidChecksums returns data with the checksums the reader checks
// made right: each index entry's CRC that of the bytes it points to and
// the trailer's that of the footer. Where inserted or removed bytes moved
// the blocks, so that an entry no longer holds one whole msgpack item,
// the entries are moved onto the items that follow the preamble, one
// each. The footer is encoded again only when its index changed, so
// mutations of its encoding alone are kept. data without a trailer that
// points to a footer is returned as is: the reader stops there anyway.
func withValidChecksums(data []byte) []byte {
	n := len(data)
	if n < flowgraph.PreambleSize+trailerLen || string(data[n-4:]) != trailerMagic {
		return data
	}
	toff := uint64(n - trailerLen)
	foff, flen := binary.BigEndian.Uint64(data[toff:]), binary.BigEndian.Uint64(data[toff+8:])
	if foff < flowgraph.PreambleSize || foff > toff || flen != toff-foff || flen == 0 {
		return data
	}
	out := bytes.Clone(data)
	var ft fuzzFooter
	fb := out[foff:toff]
	if flowgraph.CheckLengths(fb) == nil && msgpack.Unmarshal(fb, &ft) == nil && repairIndex(out[:foff], ft.Index) {
		if b, err := msgpack.Marshal(&ft); err == nil {
			out = append(out[:foff], b...)
			out = binary.BigEndian.AppendUint64(out, foff)
			out = binary.BigEndian.AppendUint64(out, uint64(len(b)))
			out = append(out, 0, 0, 0, 0)
			out = append(out, trailerMagic...)
			toff = uint64(len(out) - trailerLen)
		}
	}
	binary.BigEndian.PutUint32(out[toff+16:], crc32.ChecksumIEEE(out[foff:toff]))
	return out
}

// repairIndex points the entries of idx at whole msgpack items of blocks
// (the file up to the footer) where they are not, if blocks holds one
// for each, and gives each entry the CRC of its bytes. It reports whether
// idx changed.
func repairIndex(blocks []byte, idx []flowgraph.IndexEntry) bool {
	inside := func(e flowgraph.IndexEntry) bool {
		return e.Offset >= 0 && e.Length >= 0 && e.Offset <= int64(len(blocks)) && e.Length <= int64(len(blocks))-e.Offset
	}
	changed := false
	for _, e := range idx {
		if inside(e) && int64(itemLen(blocks[e.Offset:e.Offset+e.Length])) == e.Length {
			continue
		}
		if spans := itemSpans(blocks, len(idx)); spans != nil {
			for i := range idx {
				if idx[i].Offset != spans[i][0] || idx[i].Length != spans[i][1] {
					idx[i].Offset, idx[i].Length = spans[i][0], spans[i][1]
					changed = true
				}
			}
		}
		break
	}
	for i := range idx {
		if e := &idx[i]; inside(*e) {
			if crc := crc32.ChecksumIEEE(blocks[e.Offset : e.Offset+e.Length]); crc != e.CRC {
				e.CRC, changed = crc, true
			}
		}
	}
	return changed
}

// itemLen is the length of the msgpack item at the start of b, -1 if
// there is none.
func itemLen(b []byte) int {
	if flowgraph.CheckLengths(b) != nil { // else Skip could allocate without limit
		return -1
	}
	r := bytes.NewReader(b)
	if msgpack.NewDecoder(r).Skip() != nil {
		return -1
	}
	return len(b) - r.Len()
}

// itemSpans returns the offsets and lengths of the first n msgpack items
// after the preamble of blocks, nil if there are not n of them.
func itemSpans(blocks []byte, n int) [][2]int64 {
	var spans [][2]int64
	off := flowgraph.PreambleSize
	for range n {
		if off > len(blocks) {
			return nil
		}
		l := itemLen(blocks[off:])
		if l <= 0 {
			return nil
		}
		spans = append(spans, [2]int64{int64(off), int64(l)})
		off += l
	}
	return spans
}

// encodeFile returns the file of header h and ranks, as Writer writes it;
// with raw, the packed parts of each block (tables, sequences, timing) are
// stored uncompressed, which readers accept as well.
func encodeFile(t testing.TB, h flowgraph.Header, ranks []*flowgraph.Rank, raw bool) []byte {
	t.Helper()
	buf := bytes.NewBuffer(flowgraph.Preamble())
	var idx []flowgraph.IndexEntry
	for _, r := range ranks {
		b, _, err := flowgraph.EncodeRank(r)
		require.NoError(t, err)
		if raw {
			b = rawParts(t, b)
		}
		idx = append(idx, flowgraph.IndexEntry{Rank: r.Rank, Thread: r.Thread, Offset: int64(buf.Len()),
			Length: int64(len(b)), CRC: crc32.ChecksumIEEE(b)})
		buf.Write(b)
	}
	ft, err := flowgraph.EncodeFooter(h, idx, int64(buf.Len()))
	require.NoError(t, err)
	buf.Write(ft)
	return buf.Bytes()
}

// rawParts returns block b with its graph's packed parts stored raw
// (codec byte 0).
func rawParts(t testing.TB, b []byte) []byte {
	t.Helper()
	var rank map[string]msgpack.RawMessage
	require.NoError(t, msgpack.Unmarshal(b, &rank))
	var graph map[string]msgpack.RawMessage
	require.NoError(t, msgpack.Unmarshal(rank["graph"], &graph))
	for _, k := range []string{"tables", "seqs", "timingz"} {
		if graph[k] == nil {
			continue
		}
		var packed []byte
		require.NoError(t, msgpack.Unmarshal(graph[k], &packed))
		plain, err := flowgraph.Unpack(packed)
		require.NoError(t, err, k)
		graph[k] = marshalSorted(t, append([]byte{0}, plain...))
	}
	rank["graph"] = marshalSorted(t, graph)
	return marshalSorted(t, rank)
}

// marshalSorted encodes v with map keys sorted, so that seeds do not
// depend on Go's map order.
func marshalSorted(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	require.NoError(t, enc.Encode(v))
	return buf.Bytes()
}

// readerSeeds are valid files that between them hold what the reader
// decodes: sequences as event indices and as positions (polls), timing
// intervals exact and capped (Keep > 0), counters, a budget's
// approximations, each with its parts compressed and raw, and a file of
// format version 1 (arithmetic runs, anchors). Their graphs are small:
// the fuzzer mutates small inputs faster.
func readerSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	for _, c := range []struct {
		opt  flowgen.Options
		want func(g *flowgraph.Graph) bool // what the seed is for
	}{
		{flowgen.Options{Seed: 7, Events: 200, Depth: 2, Sites: 5, Branchy: true, Counters: 1},
			func(g *flowgraph.Graph) bool { return g.Timing.Present() && g.Timing.Keep() == 0 }},
		{flowgen.Options{Seed: 1, Events: 1000, Depth: 2, Sites: 4, Polls: true, Budget: 512},
			func(g *flowgraph.Graph) bool {
				_, pos := flowgraph.StoredSeqs(g)
				return pos && g.Budget != nil && g.Budget.Approximate > 0
			}},
		{flowgen.Options{Seed: 1, Events: 1000, Depth: 3, Sites: 40, MaxIter: 3, Branchy: true, TimingBytes: flowgraph.MinTimingBytes},
			func(g *flowgraph.Graph) bool { return g.Timing.Keep() > 0 }},
	} {
		h, ranks := flowgen.Run(c.opt, 2, 2)
		require.True(t, c.want(&ranks[0].Graph), "seed %+v lacks what it is for", c.opt)
		seeds = append(seeds, encodeFile(t, h, ranks, false), encodeFile(t, h, ranks, true))
	}
	v1, err := os.ReadFile("testdata/v1.mpiflow")
	require.NoError(t, err)
	return append(seeds, v1)
}

// FuzzOpenValidCRC reads mutated files whose checksums are right
// (withValidChecksums), so that the mutations reach the decoding of the
// footer and the blocks. For every input, checkReader: no panic, errors
// that say the file is not valid, the figures of what it accepts never
// negative and consistent, and an allocation bounded by the file's size.
func FuzzOpenValidCRC(f *testing.F) {
	for _, s := range readerSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReader(t, withValidChecksums(data))
	})
}

// TestReaderSeeds runs the properties of FuzzOpenValidCRC over its seeds
// unchanged, which the reader must accept whole, and over a job of the
// shape of HPCC's at scale (polls, hundreds of call sites, the default
// budget), and reports the largest ratio of allocation to file size among
// them (go test -v), which the bound of checkReader must leave a margin
// above.
func TestReaderSeeds(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.HPCCShape(300_000), 1, 1)
	files := append(readerSeeds(t), encodeFile(t, h, ranks, false))
	var worst float64
	for i, s := range files {
		require.Equal(t, s, withValidChecksums(s), "file %d: its checksums are right already", i)
		res := checkReader(t, s)
		require.NoError(t, res.openErr, "file %d", i)
		require.Equal(t, len(res.file.Index), res.read, "file %d: every block reads", i)
		ratio := float64(res.alloc) / float64(len(s))
		t.Logf("file %d: %d bytes, read with %d bytes allocated, %.0f times as many", i, len(s), res.alloc, ratio)
		worst = max(worst, ratio)
	}
	t.Logf("largest allocation: %.0f times the file's size (bound: %d times + %d MiB)", worst, allocPerByte, allocSlack>>20)
}

// Reading a file (opening it and reading every block, whole, lazily or as
// a skeleton) may allocate at most allocPerByte times its size plus
// allocSlack. Valid files take up to about 40 times their size among the
// seeds (TestReaderSeeds -v), and more the more events a compact file
// holds: the decoded sequences are Go values of 32 bytes a term, from a
// few bits of zstd-packed varints, and sequences stored as positions are
// expanded to a number per run of a polled call. Jobs of the HPCC shape
// take 110 times their size at 300,000 events a rank, 270 at 1M and 400
// at 3M, so allocPerByte leaves a margin of 2.5 above what valid files
// of realistic shapes need; a reader that allocates for what a file
// claims rather than for what it holds (a msgpack length, a zstd frame's
// size, positions beyond an edge's count) goes far beyond it. (The
// format's own bound on positions, maxPositionsWork runs, is not one in
// the file's size: a consistent block of a few hundred bytes that stores
// a million regular runs of a poll as positions is expanded whole.) The
// slack covers the fixed costs of small files (the zstd decoder's
// buffers, the timing iterators).
const (
	allocPerByte = 1024
	allocSlack   = 16 << 20
)

// maxWalk bounds the events checkReader walks: a valid graph may claim
// billions of events in a few bytes.
const maxWalk = 1 << 20

// readResult is what checkReader read of a file.
type readResult struct {
	file    *flowgraph.File
	openErr error
	read    int    // blocks read without error
	alloc   uint64 // the most bytes allocated by one way of reading them
}

// checkReader opens data and reads every block, failing t where the
// reader panics, returns an error that does not say the file is invalid,
// allocates more than the file's size allows (allocPerByte, allocSlack),
// or accepts data with a negative or inconsistent figure: in the header,
// a rank, its nodes, edges, anchors, timing or budget, the events walked,
// the summary over the ranks or the division of the file's bytes.
func checkReader(t *testing.T, data []byte) readResult {
	t.Helper()
	type block struct {
		whole, lazy, skel    *flowgraph.Rank
		err, lazyErr, skelEr error
	}
	// Each way of reading the file is measured on its own: opening it and
	// reading every block whole, then every block lazily, then as a
	// skeleton.
	var file *flowgraph.File
	var err error
	var blocks []block
	res := readResult{alloc: allocated(func() {
		if file, err = flowgraph.NewFile("fuzz", bytes.NewReader(data), int64(len(data))); err == nil {
			blocks = make([]block, len(file.Index))
			for i := range blocks {
				blocks[i].whole, blocks[i].err = file.ReadRank(i)
			}
		}
	})}
	res.file, res.openErr = file, err
	res.alloc = max(res.alloc, allocated(func() {
		for i := range blocks {
			blocks[i].lazy, blocks[i].lazyErr = file.ReadLazy(i)
		}
	}), allocated(func() {
		for i := range blocks {
			blocks[i].skel, blocks[i].skelEr = file.Skeleton(i)
		}
	}))
	checkAlloc(t, "file", len(data), res.alloc)
	if err != nil {
		requireFormatErr(t, err, -1)
		return res
	}
	h := &file.Header
	nonNegative(t, "header", "wallclock", h.Wallclock)
	nonNegative(t, "header", "ranks", int64(h.NumRanks))
	sum := flowgraph.NewSummary()
	bytesOf := file.FrameBytes()
	for i := range blocks {
		b, e := &blocks[i], file.Index[i]
		if (b.err == nil) != (b.lazyErr == nil) || b.err == nil && b.skelEr != nil {
			t.Fatalf("block %d: read whole: %v; lazily: %v; as a skeleton: %v", i, b.err, b.lazyErr, b.skelEr)
		}
		for _, err := range []error{b.err, b.lazyErr, b.skelEr} {
			if err != nil {
				requireFormatErr(t, err, e.Rank)
			}
		}
		if b.skel != nil {
			checkRank(t, b.skel)
		}
		if b.err != nil {
			continue
		}
		res.read++
		checkRank(t, b.whole)
		checkRank(t, b.lazy)
		g, lg, sg := &b.whole.Graph, &b.lazy.Graph, &b.skel.Graph
		if len(sg.Nodes) != len(g.Nodes) || len(sg.Edges) != len(g.Edges) || sg.NumEvents != g.NumEvents {
			t.Fatalf("block %d: skeleton of %d nodes, %d edges, %d events; whole %d, %d, %d", i,
				len(sg.Nodes), len(sg.Edges), sg.NumEvents, len(g.Nodes), len(g.Edges), g.NumEvents)
		}
		for k := range g.Edges {
			if l, w := lg.FirstEvent(k), g.Edges[k].Seq.First(); l != w {
				t.Fatalf("block %d: edge %d: first event %d read lazily, %d whole", i, k, l, w)
			}
		}
		checkEvents(t, i, g, lg)
		checkSelfLoops(t, i, g, lg)
		sum.Add(b.whole)
		bb := file.BlockBytes(i, b.whole)
		for _, p := range []int64{bb.Graph, bb.Sequences, bb.Timing} {
			nonNegative(t, fmt.Sprintf("block %d", i), "bytes of a part", p)
		}
		if bb.Total() != e.Length {
			t.Fatalf("block %d: parts of %d bytes in all, the block has %d", i, bb.Total(), e.Length)
		}
		bytesOf.Add(bb)
	}
	nonNegative(t, "file", "bytes outside the blocks", bytesOf.Other)
	if res.read == len(blocks) && bytesOf.Total() != file.Size {
		t.Fatalf("the parts hold %d bytes, the file has %d", bytesOf.Total(), file.Size)
	}
	for _, rs := range sum.Ranks {
		what := fmt.Sprintf("summary of rank %d thread %d", rs.Rank, rs.Thread)
		for _, v := range []struct {
			name string
			v    int64
		}{{"wall", rs.Wall}, {"init", rs.Init}, {"MPI time", rs.MPI}, {"compute time", rs.Compute},
			{"bytes", rs.Bytes}, {"events", rs.Events}} {
			nonNegative(t, what, v.name, v.v)
		}
	}
	for _, c := range sum.SortedCalls() {
		what := "summary of " + c.Call
		nonNegative(t, what, "count", c.Count)
		nonNegative(t, what, "bytes", c.Bytes)
		checkStat(t, what, "time", c.Time)
	}
	mpi, wall, nbytes := sum.Totals()
	nonNegative(t, "job", "MPI time", mpi)
	nonNegative(t, "job", "wall", wall)
	nonNegative(t, "job", "bytes", nbytes)
	return res
}

// allocated returns the bytes that read allocates (in any goroutine while
// it runs: the fuzz workers' own are few).
func allocated(read func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	read()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// checkAlloc fails t where reading n bytes allocated more than
// allocPerByte and allocSlack allow.
func checkAlloc(t *testing.T, what string, n int, alloc uint64) {
	t.Helper()
	if limit := uint64(allocPerByte*n + allocSlack); alloc > limit {
		t.Fatalf("%s: %d bytes allocated to read %d, more than %d", what, alloc, n, limit)
	}
}

// requireFormatErr fails t unless err says the file is not valid, as an
// *Error of the rank given (-1: none).
func requireFormatErr(t *testing.T, err error, rank int) {
	t.Helper()
	var fe *flowgraph.Error
	if !errors.Is(err, flowgraph.ErrFormat) || !errors.As(err, &fe) || fe.Rank != rank {
		t.Fatalf("error %q (%T) is not a format error of rank %d", err, err, rank)
	}
}

func nonNegative(t *testing.T, what, name string, v int64) {
	t.Helper()
	if v < 0 {
		t.Fatalf("%s: %s %d", what, name, v)
	}
}

func checkStat(t *testing.T, what, name string, s flowgraph.Stat) {
	t.Helper()
	nonNegative(t, what, name+" total", s.Total)
	nonNegative(t, what, name+" min", s.Min)
	nonNegative(t, what, name+" max", s.Max)
}

// checkRank fails t where a figure of r that the reader accepted is
// negative.
func checkRank(t *testing.T, r *flowgraph.Rank) {
	t.Helper()
	what := fmt.Sprintf("rank %d thread %d", r.Rank, r.Thread)
	nonNegative(t, what, "user time", r.UserTime)
	nonNegative(t, what, "system time", r.SysTime)
	nonNegative(t, what, "memory", r.MaxRSS)
	g := &r.Graph
	nonNegative(t, what, "events", g.NumEvents)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		nw := fmt.Sprintf("%s: node %d", what, i)
		nonNegative(t, nw, "count", n.Count)
		nonNegative(t, nw, "key bytes", n.Key.Bytes)
		checkStat(t, nw, "time", n.Time)
		checkStat(t, nw, "bytes", n.Bytes)
		nonNegative(t, nw, "other partners", n.OtherPartners)
		nonNegative(t, nw, "communicator size", int64(n.CommSize))
		for _, p := range n.Partners {
			nonNegative(t, nw, "partner count", p.Count)
		}
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		ew := fmt.Sprintf("%s: edge %d", what, i)
		nonNegative(t, ew, "count", e.Count)
		// (Its times may be below 0: a clock that stepped back.)
		for _, c := range e.Counters {
			nonNegative(t, ew, "counter", c)
		}
	}
	for i, a := range g.Anchors {
		aw := fmt.Sprintf("%s: anchor %d", what, i)
		nonNegative(t, aw, "event", a.Event)
		nonNegative(t, aw, "time", a.Time)
		nonNegative(t, aw, "MPI time", a.MPITime)
	}
	if g.Timing.Present() {
		it := g.Timing.Intervals()
		for it.Next() {
			iv := it.Interval()
			iw := fmt.Sprintf("%s: timing interval %d", what, iv.Index)
			for _, v := range []int64{iv.Start, iv.Events, iv.MPIRest, iv.ComputeRest, iv.LastGap, iv.LastDur} {
				nonNegative(t, iw, "figure", v)
			}
			for _, e := range iv.Entries {
				nonNegative(t, iw, "sum", e.Sum)
			}
		}
	}
	if u := g.Budget; u != nil {
		for _, v := range []int64{u.Budget, u.Bytes, u.Runs, u.Approximate, u.ErrP50, u.ErrP90, u.ErrMax, u.Arranged, u.Moved} {
			nonNegative(t, what, "budget figure", v)
		}
	}
}

// checkSelfLoops compares what the loop analysis asks of the self-loops of a
// graph read whole (g) and lazily (lg), when it has few enough events:
// the runs that follow each entry into a self-looped node.
func checkSelfLoops(t *testing.T, block int, g, lg *flowgraph.Graph) {
	t.Helper()
	if g.NumEvents > maxWalk {
		return
	}
	for k := range g.Edges {
		e := &g.Edges[k]
		if e.Src != e.Dst {
			continue
		}
		var entries []int
		for x := range g.Edges {
			if d := &g.Edges[x]; d.Dst == e.Dst && d.Src != d.Dst {
				entries = append(entries, x)
			}
		}
		runs, lruns := g.RunsAfter(k, entries), lg.RunsAfter(k, entries)
		if !slices.Equal(runs, lruns) {
			t.Fatalf("block %d: self-loop %d: runs after its entries %v, read lazily %v", block, k, runs, lruns)
		}
		for _, n := range runs {
			nonNegative(t, fmt.Sprintf("block %d: self-loop %d", block, k), "run", n)
		}
	}
}

// checkEvents walks the events of g (read whole) and lg (the same block
// read lazily), when there are few enough: the same events, as many as the
// graph says when the walk ends without error, each of a node and an edge
// of the graph, in order and never going back in time.
func checkEvents(t *testing.T, block int, g, lg *flowgraph.Graph) {
	t.Helper()
	if g.NumEvents > maxWalk {
		return
	}
	it, lit := g.Events(), lg.Events()
	var n, end int64
	for it.Next() {
		ev := it.Event()
		if !lit.Next() || lit.Event() != ev {
			t.Fatalf("block %d: event %d is %+v, read lazily %+v", block, n, ev, lit.Event())
		}
		if ev.Index != n || ev.Node < 0 || ev.Node >= len(g.Nodes) || ev.InEdge < -1 || ev.InEdge >= len(g.Edges) {
			t.Fatalf("block %d: event %d is %+v (%d nodes, %d edges)", block, n, ev, len(g.Nodes), len(g.Edges))
		}
		if ev.Start < end || ev.End < ev.Start {
			t.Fatalf("block %d: event %d from %d to %d ns, the one before ended at %d", block, n, ev.Start, ev.End, end)
		}
		end = ev.End
		n++
	}
	if lit.Next() {
		t.Fatalf("block %d: more events read lazily than whole (%d)", block, n)
	}
	if it.Err() == nil && n != g.NumEvents {
		t.Fatalf("block %d: %d of %d events walked", block, n, g.NumEvents)
	}
}

// TestReaderDefects holds what FuzzOpenValidCRC found, and the like: files
// whose figures cannot be are format errors naming the figure (err), and
// damaged files the reader accepts (err "") meet checkReader's properties.
func TestReaderDefects(t *testing.T) {
	const maxInt64 = 1<<63 - 1
	// timeOfOthers is the time of every node of g but node n.
	timeOfOthers := func(g *flowgraph.Graph, n int) int64 {
		var s int64
		for i := range g.Nodes {
			if i != n {
				s += g.Nodes[i].Time.Total
			}
		}
		return s
	}
	for _, c := range []struct {
		name   string
		mutate func(h *flowgraph.Header, rs []*flowgraph.Rank)
		// err is what the error says: with verbs, formatted with rank
		// 0's node 2's call, edge 1's source and destination and the
		// number of events
		err string
	}{
		{"node's most bytes (fuzz: a v1 file)", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			rs[0].Graph.Nodes[2].Bytes.Max = -47244640256
		}, "node 2 (%[1]s): most bytes -47244640256 out of range"},
		{"node's longest time", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			rs[0].Graph.Nodes[1].Time.Max = -1
		}, "longest time -1 ns"},
		{"partner's count", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			rs[0].Graph.Nodes[1].Partners = []flowgraph.PartnerCount{{Rank: 1, Count: -2}}
		}, "calls to partner 1: count -2"},
		{"edge's time", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			e := &rs[0].Graph.Edges[1]
			e.Time.Min = -2_000_000
		}, "edge 1 (%[2]d -> %[3]d): time"},
		{"compute time overflows", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			g := &rs[0].Graph
			g.Edges[0].Time.Total, g.Edges[1].Time.Total = maxInt64, 1
		}, "edge 1 (%[2]d -> %[3]d): the compute time overflows"},
		{"edge's counter", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			rs[0].Graph.Edges[0].Counters = []int64{-5}
		}, "counter 0: -5 out of range"},
		{"budget", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			rs[0].Graph.Budget = &flowgraph.BudgetUse{Budget: 1 << 10, Runs: -4}
		}, "budget: runs -4 out of range"},
		{"calls' time overflows", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			g := &rs[0].Graph
			g.Nodes[1].Time.Total = maxInt64 - timeOfOthers(g, 1) + 1
		}, "the calls' time overflows"},
		{"anchor's time", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			g := &rs[0].Graph
			g.Timing = flowgraph.Timing{}
			g.Anchors = flowgraph.Anchors{{Event: 0, Time: -10}, {Event: g.NumEvents, Time: 1000}}
		}, "anchor 0 (event 0): time -10 ns"},
		{"MPI time between anchors beyond their time (fuzz: a v1 file)", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			g := &rs[0].Graph
			g.Timing = flowgraph.Timing{}
			g.Anchors = flowgraph.Anchors{{}, {Event: 10, Time: 1000, MPITime: 400}, {Event: g.NumEvents, Time: 1100, MPITime: 600}}
		}, "anchor 2 (event %[4]d): 200 ns inside MPI in the 100 ns since the anchor before"},
		{"events timed by means that overflow", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			// Without timing or anchors events are timed by the means,
			// and a node's events may outnumber its count.
			g := &rs[0].Graph
			g.Timing, g.Anchors = flowgraph.Timing{}, nil
			n := &g.Nodes[1]
			n.Count, n.Time = 1, flowgraph.Stat{Total: maxInt64 - timeOfOthers(g, 1), Max: 1 << 62}
		}, ""},
		{"MPI_Init longer than the run", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			n := &rs[0].Graph.Nodes[0]
			n.Key.Call, n.Time.Total = "MPI_Init", 1<<60
		}, ""},
		{"the job's MPI time overflows", func(_ *flowgraph.Header, rs []*flowgraph.Rank) {
			for _, r := range rs {
				r.Graph.Nodes[1].Time.Total = 1<<62 + 1<<61
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, rs := flowgen.Run(flowgen.Options{Seed: 7, Events: 3000, Depth: 3, Sites: 12, Branchy: true}, 2, 2)
			c.mutate(&h, rs)
			data := encodeFile(t, h, rs, false)
			res := checkReader(t, data)
			if c.err == "" {
				require.NoError(t, res.openErr)
				require.Equal(t, len(rs), res.read, "the reader accepts the file")
				return
			}
			err := res.openErr
			if err == nil {
				_, err = res.file.ReadRank(0)
			}
			want := c.err
			if g := &rs[0].Graph; strings.Contains(want, "%") {
				want = fmt.Sprintf(want, g.Nodes[2].Key.Call, g.Edges[1].Src, g.Edges[1].Dst, g.NumEvents)
			}
			require.ErrorIs(t, err, flowgraph.ErrFormat)
			require.ErrorContains(t, err, want)
		})
	}
}

// TestPositionsBeyondCount: an edge whose stored positions claim more
// traversals than its count is an error found before the reader allocates
// for them (it allocated 8 bytes a claimed traversal, 256 MiB for 2^25 of
// them, in a block of a few KB).
func TestPositionsBeyondCount(t *testing.T) {
	_, rs := flowgen.Run(flowgen.Options{Seed: 1, Events: 1000, Depth: 2, Sites: 4, Polls: true}, 1, 1)
	g := &rs[0].Graph
	seqs := flowgraph.Positions(g)
	require.NotNil(t, seqs, "the graph stores positions")
	// An edge into a polled node (one with a self-loop): the reader
	// gathers the positions of the runs of such nodes.
	polled := map[int]bool{}
	for _, e := range g.Edges {
		polled[e.Dst] = polled[e.Dst] || e.Src == e.Dst
	}
	k := slices.IndexFunc(g.Edges, func(e flowgraph.Edge) bool { return e.Src != e.Dst && polled[e.Dst] })
	require.GreaterOrEqual(t, k, 0)
	// One term: 2^25 positions from 1, stride 1.
	const claimed = 1 << 25
	b := binary.AppendUvarint([]byte{1, 0, 0}, claimed-1)
	require.NoError(t, seqs[k].UnmarshalBinary(append(b, 0)))
	require.EqualValues(t, claimed, seqs[k].Len())
	block, err := flowgraph.EncodeWithPositions(rs[0], seqs)
	require.NoError(t, err)
	checkAlloc(t, "block", len(block), allocated(func() { _, err = flowgraph.DecodeRank(block) }))
	require.ErrorIs(t, err, flowgraph.ErrFormat)
	require.ErrorContains(t, err, fmt.Sprintf("edge %d: count %d but %d positions", k, g.Edges[k].Count, claimed))
}

// zstdRLE returns a zstd frame of blocks RLE blocks of 128 KiB of one
// byte each (4 bytes a block), with the content size in its header when
// fcs.
func zstdRLE(blocks int, fcs bool) []byte {
	const blockSize = 128 << 10
	b := []byte{0x28, 0xb5, 0x2f, 0xfd}
	if fcs { // single segment, 8-byte content size
		b = binary.LittleEndian.AppendUint64(append(b, 0xe0), uint64(blocks)*blockSize)
	} else {
		b = append(b, 0, 7<<3) // a window of 2^(10+7) bytes
	}
	for k := range blocks {
		h := uint32(blockSize<<3 | 1<<1) // RLE
		if k == blocks-1 {
			h |= 1 // the last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0xc0)
	}
	return b
}

// TestPackedPartsBounded: a packed part (tables, sequences, timing) makes
// the reader allocate at most maxPackRatio times its size, 1024, whatever
// its zstd frame holds. Found by constructing frames: a frame without
// its content size decoded up to the decoder's limit, 1 GiB, whatever
// size the part claimed; and every part could claim 1 MiB more than its
// ratio allowed, so that a file of many small blocks allocated a MiB a
// block.
func TestPackedPartsBounded(t *testing.T) {
	t.Run("frame without content size", func(t *testing.T) {
		// 2000 blocks of 128 KiB: 256 MiB from 8 KB, claimed 1 KB.
		part := append(binary.AppendUvarint([]byte{1}, 1000), zstdRLE(2000, false)...)
		var err error
		checkAlloc(t, "part", len(part), allocated(func() { _, err = flowgraph.Unpack(part) }))
		require.ErrorContains(t, err, "1000 bytes packed")
	})
	t.Run("many blocks of small parts", func(t *testing.T) {
		// Blocks of no events whose tables are a frame of 1 MiB (nil
		// and then nils, which decode as empty tables) in 45 bytes.
		tables := append(binary.AppendUvarint([]byte{1}, 1<<20), zstdRLE(8, true)...)
		var ranks []*flowgraph.Rank
		h := flowgraph.Header{NumRanks: 200}
		for r := range h.NumRanks {
			ranks = append(ranks, &flowgraph.Rank{Rank: r, Graph: flowgraph.Graph{Initial: -1}})
		}
		data := encodeFile(t, h, ranks, false)
		var blocks [][]byte
		f, err := flowgraph.NewFile("tables", bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		for _, e := range f.Index {
			var rank map[string]msgpack.RawMessage
			require.NoError(t, msgpack.Unmarshal(data[e.Offset:e.Offset+e.Length], &rank))
			var graph map[string]msgpack.RawMessage
			require.NoError(t, msgpack.Unmarshal(rank["graph"], &graph))
			graph["tables"] = marshalSorted(t, tables)
			rank["graph"] = marshalSorted(t, graph)
			blocks = append(blocks, marshalSorted(t, rank))
		}
		// The file of those blocks, read as FuzzOpenValidCRC reads.
		data = withValidChecksums(assemble(t, h, blocks))
		res := checkReader(t, data)
		require.NoError(t, res.openErr)
		require.Zero(t, res.read, "no block reads: each part is %d bytes and claims 1 MiB", len(tables))
	})
}

// assemble returns the file of header h and the given blocks, of ranks
// 0, 1, ...
func assemble(t testing.TB, h flowgraph.Header, blocks [][]byte) []byte {
	t.Helper()
	buf := bytes.NewBuffer(flowgraph.Preamble())
	var idx []flowgraph.IndexEntry
	for r, b := range blocks {
		idx = append(idx, flowgraph.IndexEntry{Rank: r, Offset: int64(buf.Len()), Length: int64(len(b)), CRC: crc32.ChecksumIEEE(b)})
		buf.Write(b)
	}
	ft, err := flowgraph.EncodeFooter(h, idx, int64(buf.Len()))
	require.NoError(t, err)
	buf.Write(ft)
	return buf.Bytes()
}
