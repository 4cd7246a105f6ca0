package flowgraph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"mpiflow/internal/atomicfile"
	"mpiflow/internal/inputfile"
)

// File layout (all integers big-endian):
//
//	preamble  16 bytes: magic "MPIFLOW\x00", uint32 format version, uint32 zero
//	blocks    one msgpack-encoded Rank per rank (and thread), back to back
//	footer    msgpack-encoded footer: the Header and the index of the blocks
//	trailer   24 bytes: uint64 footer offset, uint64 footer length,
//	          uint32 CRC-32 of the footer, magic "MFT\x00"
//
// The footer sits at the end so that ranks can write their blocks in
// parallel (with MPI-IO, at offsets from an exclusive prefix sum of the block
// sizes) while rank 0 writes the preamble and footer. A reader reads the
// trailer, then the footer, and then only the blocks it needs.
//
// A block is the msgpack map of a Rank, keyed by the msgpack tags of the
// model (model.go). Versions differ in how a Graph stores its sequence
// numbers:
//
//	version 1  each edge's "seq": a flat array of arithmetic runs, as
//	           (start - previous run's last, stride, count) triples
//	version 2  the graph's "tables": nodes, edges and sites, msgpack-
//	           encoded and packed (a codec byte, 0 raw or 1 zstd, see
//	           wire.go), and its "seqs": the edges' sequences one after
//	           the other, each the nested progressions of
//	           Seq.AppendBinary (seq.go), packed; partial files written by
//	           the C library keep plain tables and each edge's sequence
//	           in its "seq" as a msgpack bin of the same encoding; the
//	           timing (timing.go) replaces the anchors, which readers
//	           derive from it: packed in "timingz", or plain in "timing"
//	           (partial files)
//	version 3  as 2, but each timing interval says how many events it
//	           holds, so intervals end early where time accumulates
//	           (timing.go; its bin starts with a zero byte)
//	version 4  as 3, but "seqs" may hold positions ("pos" true): the
//	           sequences of a graph with irregular self-loops, those of
//	           the other edges counting only events that do not repeat
//	           the one before, and the self-loops' run lengths
//	           (positions.go); and a timing interval that ends early
//	           (by time) says its last gap where that stands out (the
//	           timing bin starts with two zero bytes)
//	version 5  as 4, but such an interval also says its last event's
//	           duration where that stands out: a long call that ended
//	           it (the timing bin starts with three zero bytes)
//
// Readers accept every version up to FormatVersion; writers write the
// newest.

const (
	magic        = "MPIFLOW\x00"
	trailerMagic = "MFT\x00"
	// PreambleSize is the size of the file's first part; the first block
	// starts there.
	PreambleSize = 16
	trailerSize  = 24
	// maxFooter bounds the footer so that a corrupt trailer cannot make a
	// reader allocate without limit.
	maxFooter = 1 << 30
)

// IndexEntry locates one rank's block in a file.
type IndexEntry struct {
	Rank   int    `msgpack:"rank"`
	Thread int    `msgpack:"thread"`
	Offset int64  `msgpack:"off"`
	Length int64  `msgpack:"len"`
	CRC    uint32 `msgpack:"crc"`
}

type footer struct {
	Header Header       `msgpack:"header"`
	Index  []IndexEntry `msgpack:"index"`
}

// Preamble returns the bytes that start every file.
func Preamble() []byte {
	b := make([]byte, PreambleSize)
	copy(b, magic)
	binary.BigEndian.PutUint32(b[8:], FormatVersion)
	return b
}

// EncodeRank returns the encoded block of r and its CRC-32 (IEEE).
func EncodeRank(r *Rank) ([]byte, uint32, error) {
	b, err := msgpack.Marshal(r)
	if err != nil {
		return nil, 0, fmt.Errorf("encode rank %d: %w", r.Rank, err)
	}
	return b, crc32.ChecksumIEEE(b), nil
}

// EncodeFooter returns the footer and trailer of a file whose blocks are
// described by idx, to be written at footerOffset (the end of the last
// block).
func EncodeFooter(h Header, idx []IndexEntry, footerOffset int64) ([]byte, error) {
	h.Version = FormatVersion
	b, err := msgpack.Marshal(&footer{Header: h, Index: idx})
	if err != nil {
		return nil, fmt.Errorf("encode footer: %w", err)
	}
	var t [trailerSize]byte
	binary.BigEndian.PutUint64(t[0:], uint64(footerOffset))
	binary.BigEndian.PutUint64(t[8:], uint64(len(b)))
	binary.BigEndian.PutUint32(t[16:], crc32.ChecksumIEEE(b))
	copy(t[20:], trailerMagic)
	return append(b, t[:]...), nil
}

// Writer writes a file rank by rank, so that only one rank's graph needs to
// be in memory. It writes to a temporary name and renames it on Close, so a
// failed write never leaves a partial file under the final name.
type Writer struct {
	path string
	tmp  *atomicfile.File
	off  int64
	idx  []IndexEntry
	err  error
}

// Create starts a file at path.
func Create(path string) (*Writer, error) {
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, tmp: tmp}
	w.write(Preamble())
	return w, w.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.tmp.Write(b); err != nil {
		w.err = fmt.Errorf("write %s: %w", w.path, err)
		return
	}
	w.off += int64(len(b))
}

// WriteRank appends one rank's block.
func (w *Writer) WriteRank(r *Rank) error {
	if w.err != nil {
		return w.err
	}
	b, crc, err := EncodeRank(r)
	if err != nil {
		w.err = fmt.Errorf("write %s: %w", w.path, err)
		return w.err
	}
	w.idx = append(w.idx, IndexEntry{Rank: r.Rank, Thread: r.Thread, Offset: w.off, Length: int64(len(b)), CRC: crc})
	w.write(b)
	return w.err
}

// Close writes the footer with header h and moves the file to its final
// name. On error the temporary file is removed.
func (w *Writer) Close(h Header) error {
	if w.err == nil {
		b, err := EncodeFooter(h, w.idx, w.off)
		if err != nil {
			w.err = fmt.Errorf("write %s: %w", w.path, err)
		}
		w.write(b)
	}
	if w.err != nil {
		w.tmp.Abort()
		return w.err
	}
	w.err = w.tmp.Commit()
	return w.err
}

// Abort discards the file.
func (w *Writer) Abort() { w.tmp.Abort() }

// WriteFile writes a whole file at once.
func WriteFile(path string, h Header, ranks []*Rank) error {
	w, err := Create(path)
	if err != nil {
		return err
	}
	for _, r := range ranks {
		if err := w.WriteRank(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close(h)
}

// Error is a problem with a file's contents. Rank is -1 when the problem is
// not in a rank's block.
type Error struct {
	Path   string
	Rank   int
	Offset int64
	Err    error
}

func (e *Error) Error() string {
	if e.Rank >= 0 {
		return fmt.Sprintf("%s: rank %d at byte %d: %v", e.Path, e.Rank, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: at byte %d: %v", e.Path, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrFormat is wrapped by every error about a file that is not a valid
// mpiflow file.
var ErrFormat = errors.New("not a valid mpiflow file")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// File is an open mpiflow file. Its header and index are read at Open; rank
// blocks are read on demand.
type File struct {
	Path   string
	Header Header
	Index  []IndexEntry
	Size   int64 // bytes
	r      io.ReaderAt
	c      io.Closer
}

// MaxRanks is the most ranks a job file may claim, 2^24: more than any
// machine runs, few enough that tables by rank fit in memory.
const MaxRanks = 1 << 24

// Open opens the file at path and reads its header and index.
func Open(path string) (*File, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a directory", path)
	}
	file, err := NewFile(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	file.c = f
	return file, nil
}

// NewFile reads the header and index of a file of the given size from r;
// name is used in errors.
func NewFile(name string, r io.ReaderAt, size int64) (*File, error) {
	fail := func(off int64, err error) error {
		return &Error{Path: name, Rank: -1, Offset: off, Err: err}
	}
	if size < PreambleSize+trailerSize {
		return nil, fail(0, formatErr("file is %d bytes, too short (truncated?)", size))
	}
	var pre [PreambleSize]byte
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, fail(0, err)
	}
	if string(pre[:8]) != magic {
		return nil, fail(0, formatErr("wrong magic %q", pre[:8]))
	}
	switch v := binary.BigEndian.Uint32(pre[8:]); {
	case v == 0:
		return nil, fail(8, formatErr("format version 0 does not exist (corrupt file)"))
	case v > FormatVersion:
		return nil, fail(8, fmt.Errorf("%w: format version %d, this mpiflow reads versions 1 to %d (upgrade mpiflow)", ErrFormat, v, FormatVersion))
	}
	var t [trailerSize]byte
	toff := size - trailerSize
	if _, err := r.ReadAt(t[:], toff); err != nil {
		return nil, fail(toff, err)
	}
	if string(t[20:]) != trailerMagic {
		return nil, fail(toff, formatErr("no trailer at the end (truncated or still being written?)"))
	}
	foff := int64(binary.BigEndian.Uint64(t[0:]))
	flen := int64(binary.BigEndian.Uint64(t[8:]))
	if foff < PreambleSize || flen < 1 || flen > maxFooter || foff+flen != toff {
		return nil, fail(toff, formatErr("trailer points to footer at %d length %d, outside the file", foff, flen))
	}
	fb := make([]byte, flen)
	if _, err := r.ReadAt(fb, foff); err != nil {
		return nil, fail(foff, err)
	}
	if crc32.ChecksumIEEE(fb) != binary.BigEndian.Uint32(t[16:]) {
		return nil, fail(foff, formatErr("footer checksum mismatch (corrupt file)"))
	}
	var ft footer
	if err := checkLengths(fb); err != nil {
		return nil, fail(foff, fmt.Errorf("%w: footer: %v", ErrFormat, err))
	}
	if err := msgpack.Unmarshal(fb, &ft); err != nil {
		return nil, fail(foff, fmt.Errorf("%w: footer: %v", ErrFormat, err))
	}
	if ft.Header.Wallclock < 0 {
		return nil, fail(foff, formatErr("header: wallclock %d ns", ft.Header.Wallclock))
	}
	if n := ft.Header.NumRanks; n < 0 || n > MaxRanks {
		return nil, fail(foff, formatErr("header: %d ranks (a job has 0 to %d)", n, MaxRanks))
	}
	prevEnd := int64(PreambleSize)
	for _, e := range ft.Index {
		if e.Offset < prevEnd || e.Length < 0 || e.Offset+e.Length > foff {
			return nil, fail(foff, formatErr("index entry for rank %d (offset %d, length %d) outside the blocks", e.Rank, e.Offset, e.Length))
		}
		if e.Rank < 0 || e.Rank >= max(ft.Header.NumRanks, 1) {
			return nil, fail(foff, formatErr("index entry for rank %d of a job of %d ranks", e.Rank, ft.Header.NumRanks))
		}
		prevEnd = e.Offset + e.Length
	}
	return &File{Path: name, Header: ft.Header, Index: ft.Index, Size: size, r: r}, nil
}

// ReadRank reads and decodes the i-th block of the index.
func (f *File) ReadRank(i int) (*Rank, error) {
	return f.readRank(i, readAll)
}

// ReadLazy reads block i as ReadRank does, but its sequences stay in the
// form files store them (positions) until Graph.EdgeSeq maps an edge's:
// Edge.Seq is empty until then, Graph.FirstEvent gives every edge's first
// number, and Graph.Events maps them all. For the loop analysis, which
// needs the first numbers and the sequences of few edges: mapping them all
// is most of the time of reading a block.
func (f *File) ReadLazy(i int) (*Rank, error) {
	return f.readRank(i, readLazy)
}

// Skeleton reads block i as ReadRank does but for the sequences: every
// edge's Seq is empty, so its events cannot be walked, and the anchors
// derived from the timing are only the first and the last (Anchors.Ends).
// Decoding the sequences is most of the time of reading a block and of its
// memory (a rank of 2M calls of HPCC's shape: 10 MB of sequences, 150 KB
// packed).
func (f *File) Skeleton(i int) (*Rank, error) {
	return f.readRank(i, readNone)
}

func (f *File) readRank(i int, mode seqRead) (*Rank, error) {
	if i < 0 || i >= len(f.Index) {
		return nil, fmt.Errorf("%s: no block %d (file has %d)", f.Path, i, len(f.Index))
	}
	e := f.Index[i]
	fail := func(err error) error {
		return &Error{Path: f.Path, Rank: e.Rank, Offset: e.Offset, Err: err}
	}
	b := make([]byte, e.Length)
	if _, err := f.r.ReadAt(b, e.Offset); err != nil {
		return nil, fail(err)
	}
	if crc32.ChecksumIEEE(b) != e.CRC {
		return nil, fail(formatErr("block checksum mismatch (corrupt file)"))
	}
	r, err := decodeRank(b, mode)
	if err != nil {
		return nil, fail(err)
	}
	if r.Rank != e.Rank || r.Thread != e.Thread {
		return nil, fail(formatErr("block holds rank %d thread %d, index says rank %d thread %d", r.Rank, r.Thread, e.Rank, e.Thread))
	}
	return r, nil
}

// FileBytes divides the bytes of a file among its parts: the graphs (nodes,
// edges, statistics, call sites), the sequence numbers that order the
// events, the timing that restores their timestamps, and the rest
// (preamble, footer with header and index, trailer).
type FileBytes struct {
	Graph     int64 `json:"graph"`
	Sequences int64 `json:"sequences"`
	Timing    int64 `json:"timing"`
	Other     int64 `json:"other"`
}

// Add adds the bytes of o to b.
func (b *FileBytes) Add(o FileBytes) {
	b.Graph += o.Graph
	b.Sequences += o.Sequences
	b.Timing += o.Timing
	b.Other += o.Other
}

// Total is the number of bytes of all parts.
func (b FileBytes) Total() int64 { return b.Graph + b.Sequences + b.Timing + b.Other }

// FrameBytes are the bytes of the file outside the rank blocks.
func (f *File) FrameBytes() FileBytes {
	n := f.Size
	for _, e := range f.Index {
		n -= e.Length
	}
	return FileBytes{Other: n}
}

// BlockBytes divides the bytes of block i, whose decoded rank is r.
func (f *File) BlockBytes(i int, r *Rank) FileBytes {
	seq, timing, ok := f.storedPartBytes(i)
	if !ok {
		g := &r.Graph
		if !g.hasSeqs() { // a Skeleton: encode the whole block
			if whole, err := f.ReadRank(i); err == nil {
				g = &whole.Graph
			}
		}
		seq, timing = g.partBytes()
	}
	return FileBytes{Graph: f.Index[i].Length - seq - timing, Sequences: seq, Timing: timing}
}

// storedPartBytes returns what the packed sequences and timing of block i
// take in the file, read off its encoding (encoding them again, as
// partBytes does, took a third of the time of reading a job: HPCC shape,
// 16 ranks). It reports false for blocks that keep them unpacked (format
// version 1, anchors instead of a timing) or that cannot be read.
func (f *File) storedPartBytes(i int) (seq, timing int64, ok bool) {
	e := f.Index[i]
	b := make([]byte, e.Length)
	if _, err := f.r.ReadAt(b, e.Offset); err != nil {
		return 0, 0, false
	}
	br := bytes.NewReader(b)
	dec := msgpack.NewDecoder(br)
	// size is the bytes of the next value, skipped.
	size := func() int64 {
		at := br.Len()
		if dec.Skip() != nil {
			return -1
		}
		return int64(at - br.Len())
	}
	n, err := dec.DecodeMapLen()
	for ; err == nil && n > 0; n-- {
		var key string
		if key, err = dec.DecodeString(); err != nil {
			break
		}
		if key != "graph" {
			err = dec.Skip()
			continue
		}
		m, err := dec.DecodeMapLen()
		for ; err == nil && m > 0; m-- {
			if key, err = dec.DecodeString(); err != nil {
				break
			}
			switch key {
			case "seqs":
				seq = size()
			case "timingz":
				timing = size()
			default:
				err = dec.Skip()
			}
		}
		return seq, timing, err == nil && seq > 0 && timing > 0
	}
	return 0, 0, false
}

// hasSeqs tells whether g holds the sequence numbers of its edges (not a
// File.Skeleton).
func (g *Graph) hasSeqs() bool {
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Count > 0 && e.Seq.IsZero() {
			return false
		}
	}
	return true
}

// partBytes returns the encoded sizes of g's sequence numbers and timing,
// as this version writes them (for files of version 1: as it would).
func (g *Graph) partBytes() (seq, timing int64) {
	raw, _ := g.storedSeqs()
	if b, err := msgpack.Marshal(pack(raw)); err == nil && len(g.Edges) > 0 {
		seq = int64(len(b))
	}
	var err error
	var b []byte
	if g.Timing.Present() {
		b, err = msgpack.Marshal(pack(g.Timing.AppendBinary(nil)))
	} else {
		b, err = msgpack.Marshal(g.Anchors)
	}
	if err == nil {
		timing = int64(len(b))
	}
	return seq, timing
}

// ReadRanks reads the blocks of the ranks in sel (every rank if sel is
// nil), in index order.
func (f *File) ReadRanks(sel map[int]bool) ([]*Rank, error) {
	var out []*Rank
	for i, e := range f.Index {
		if sel != nil && !sel[e.Rank] {
			continue
		}
		r, err := f.ReadRank(i)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// FindRank returns the index position of the block of rank and thread, or -1.
func (f *File) FindRank(rank, thread int) int {
	for i, e := range f.Index {
		if e.Rank == rank && e.Thread == thread {
			return i
		}
	}
	return -1
}

// Close closes the underlying file.
func (f *File) Close() error {
	if f.c == nil {
		return nil
	}
	return f.c.Close()
}

// DecodeRank decodes one block and checks that its graph is consistent, so
// that later stages can index nodes and edges without checks.
func DecodeRank(b []byte) (*Rank, error) {
	return decodeRank(b, readAll)
}

// decodeRank is DecodeRank, with the sequences read as mode says.
func decodeRank(b []byte, mode seqRead) (*Rank, error) {
	var r Rank
	if err := checkLengths(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	r.Graph.read = mode
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	err := dec.Decode(&r)
	r.Graph.read = readAll
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if r.UserTime < 0 || r.SysTime < 0 || r.MaxRSS < 0 {
		return nil, fmt.Errorf("%w: negative CPU time (user %d ns, system %d ns) or memory (%d bytes)", ErrFormat, r.UserTime, r.SysTime, r.MaxRSS)
	}
	g := &r.Graph
	if g.Timing.Present() && len(g.Anchors) > 0 {
		return nil, fmt.Errorf("%w: graph has both anchors and timing", ErrFormat)
	}
	// The positions of a lazy read are checked as they are mapped.
	seqs := mode == readAll || mode == readLazy && g.lazy == nil
	if err := g.validate(seqs); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if g.Timing.Present() {
		g.Anchors = g.Timing.Anchors(g.NumEvents)
		if mode == readNone {
			g.Anchors = g.Anchors.Ends()
		}
	}
	return &r, nil
}

// Validate checks the invariants that readers rely on: edge and initial
// node indices in range, sequence numbers within the event count, edge
// counts equal to their sequence lengths, ascending anchors, a Timing
// that fits the graph.
func (g *Graph) Validate() error {
	return g.validate(true)
}

// validate is Validate, the sequence numbers left out unless seqs.
func (g *Graph) validate(seqs bool) error {
	nn := len(g.Nodes)
	if g.NumEvents < 0 {
		return fmt.Errorf("negative event count %d", g.NumEvents)
	}
	if g.NumEvents == 0 {
		if len(g.Edges) > 0 {
			return fmt.Errorf("%d edges but no events", len(g.Edges))
		}
	} else if g.Initial < 0 || g.Initial >= nn {
		return fmt.Errorf("initial node %d out of range (%d nodes)", g.Initial, nn)
	}
	if err := g.validateNodes(); err != nil {
		return err
	}
	if err := g.validateEdges(seqs); err != nil {
		return err
	}
	if err := g.validateAnchors(); err != nil {
		return err
	}
	if err := g.validateBudget(); err != nil {
		return err
	}
	if g.Timing.Present() {
		return g.Timing.validate(len(g.Nodes), len(g.Edges), g.NumEvents)
	}
	return nil
}

// validateNodes checks the nodes' figures and their sums.
func (g *Graph) validateNodes() error {
	// The sums of the nodes' and edges' figures, which summaries show
	// per rank, must not overflow either.
	var calls, mpi, moved int64
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if s := n.Key.Site; s < -1 || s >= len(g.Sites) {
			return fmt.Errorf("node %d: call site %d out of range (%d sites)", i, s, len(g.Sites))
		}
		if f, bad := firstNegative(figure{"count", n.Count, ""}, figure{"time", n.Time.Total, " ns"},
			figure{"shortest time", n.Time.Min, " ns"}, figure{"longest time", n.Time.Max, " ns"},
			figure{"bytes", n.Bytes.Total, ""}, figure{"fewest bytes", n.Bytes.Min, ""},
			figure{"most bytes", n.Bytes.Max, ""}, figure{"bytes of its key", n.Key.Bytes, ""},
			figure{"calls to other partners", n.OtherPartners, ""},
			figure{"communicator size", int64(n.CommSize), ""}); bad {
			return fmt.Errorf("node %d (%s): %v out of range", i, n.Key.Call, f)
		}
		for _, p := range n.Partners {
			if p.Count < 0 {
				return fmt.Errorf("node %d (%s): calls to partner %d: count %d out of range", i, n.Key.Call, p.Rank, p.Count)
			}
		}
		// (A recorder out of memory may count a call whose event it
		// lost: the counts need not add up to the events.)
		var ok bool
		for _, sum := range [...]struct {
			total *int64
			v     int64
			what  string
		}{{&calls, n.Count, "count"}, {&mpi, n.Time.Total, "time"}, {&moved, n.Bytes.Total, "bytes"}} {
			if *sum.total, ok = addFigure(*sum.total, sum.v); !ok {
				return fmt.Errorf("node %d (%s): the calls' %s overflows", i, n.Key.Call, sum.what)
			}
		}
	}
	return nil
}

// validateEdges checks the edges' ends, figures and, with seqs, sequence
// numbers, and that they hold every transition.
func (g *Graph) validateEdges(seqs bool) error {
	nn := len(g.Nodes)
	var compute int64
	var total int64
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src < 0 || e.Src >= nn || e.Dst < 0 || e.Dst >= nn {
			return fmt.Errorf("edge %d: %d -> %d out of range (%d nodes)", i, e.Src, e.Dst, nn)
		}
		if e.Count < 0 || e.Count >= max(g.NumEvents, 1) {
			return fmt.Errorf("edge %d: count %d out of range (%d events)", i, e.Count, g.NumEvents)
		}
		// An edge's times may be a little below 0: a clock that steps
		// back between two calls gives a compute phase below 0,
		// recorded as it was; by no more than maxClockStep.
		if e.Time.Min < -maxClockStep || e.Time.Max < -maxClockStep || e.Time.Total < -maxClockStep*max(e.Count, 1) {
			return fmt.Errorf("edge %d (%d -> %d): time %d ns (shortest %d, longest %d) out of range", i, e.Src, e.Dst, e.Time.Total, e.Time.Min, e.Time.Max)
		}
		for k, c := range e.Counters {
			if c < 0 {
				return fmt.Errorf("edge %d (%d -> %d): counter %d: %d out of range", i, e.Src, e.Dst, k, c)
			}
		}
		if c := compute + e.Time.Total; (e.Time.Total > 0 && c < compute) || (e.Time.Total < 0 && c > compute) {
			return fmt.Errorf("edge %d (%d -> %d): the compute time overflows", i, e.Src, e.Dst)
		} else {
			compute = c
		}
		if n := e.Seq.Len(); seqs && n != e.Count {
			return fmt.Errorf("edge %d: count %d but %d sequence numbers", i, e.Count, n)
		}
		if seqs && e.Count > 0 && (e.Seq.First() < 1 || e.Seq.Last() >= g.NumEvents) {
			return fmt.Errorf("edge %d: sequence numbers outside 1..%d", i, g.NumEvents-1)
		}
		total += e.Count
	}
	if g.NumEvents > 0 && total != g.NumEvents-1 {
		return fmt.Errorf("edges hold %d transitions, %d events need %d", total, g.NumEvents, g.NumEvents-1)
	}
	return nil
}

// validateAnchors checks that the anchors are in order and consistent.
func (g *Graph) validateAnchors() error {
	for i, a := range g.Anchors {
		if a.Event < 0 || a.Event > g.NumEvents || (i > 0 && (a.Event <= g.Anchors[i-1].Event || a.Time < g.Anchors[i-1].Time || a.MPITime < g.Anchors[i-1].MPITime)) {
			return fmt.Errorf("anchor %d (event %d) out of order", i, a.Event)
		}
		if a.Time < 0 || a.MPITime < 0 {
			return fmt.Errorf("anchor %d (event %d): time %d ns, MPI time %d ns out of range", i, a.Event, a.Time, a.MPITime)
		}
		// The time inside MPI between two anchors is part of the time
		// between them: else the compute gaps there, the rest, would be
		// negative and the events go back in time.
		var prev Anchor
		if i > 0 {
			prev = g.Anchors[i-1]
		}
		if mpi, all := a.MPITime-prev.MPITime, a.Time-prev.Time; mpi > all {
			return fmt.Errorf("anchor %d (event %d): %d ns inside MPI in the %d ns since the anchor before", i, a.Event, mpi, all)
		}
	}
	return nil
}

// validateBudget checks the figures of the timing budget.
func (g *Graph) validateBudget() error {
	if u := g.Budget; u != nil {
		if f, bad := firstNegative(figure{"budget", u.Budget, ""}, figure{"bytes", u.Bytes, ""}, figure{"runs", u.Runs, ""},
			figure{"approximate runs", u.Approximate, ""}, figure{"median error", u.ErrP50, ""},
			figure{"90th percentile error", u.ErrP90, ""}, figure{"largest error", u.ErrMax, ""},
			figure{"arranged intervals", u.Arranged, ""}, figure{"moved events", u.Moved, ""}); bad {
			return fmt.Errorf("budget: %v out of range", f)
		}
	}
	return nil
}

// maxClockStep is how far back a clock may step between two calls (ns):
// edges' times below it are an error.
const maxClockStep = 1_000_000

// figure is a figure of a file that cannot be negative, named for the
// error that says it is.
type figure struct {
	name string
	v    int64
	unit string // " ns" for times
}

func (f figure) String() string { return fmt.Sprintf("%s %d%s", f.name, f.v, f.unit) }

// firstNegative returns the first negative figure of fs and whether there
// is one.
func firstNegative(fs ...figure) (figure, bool) {
	for _, f := range fs {
		if f.v < 0 {
			return f, true
		}
	}
	return figure{}, false
}

// addFigure returns sum+v (both non-negative) and whether it did not
// overflow.
func addFigure(sum, v int64) (int64, bool) {
	s := sum + v
	return s, s >= 0
}
