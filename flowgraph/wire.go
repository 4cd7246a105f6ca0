package flowgraph

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"
)

// graphFields is Graph without its msgpack methods.
type graphFields Graph

// graphWire is a Graph as files of format version 2 store it. Its tables
// (nodes, edges and call sites) are msgpack-encoded and compressed into
// Tables: their map keys repeat for every node and edge. The edges'
// sequence numbers are taken out of the edges and stored together in Seqs,
// one edge after the other, compressed: irregular sequences are most of a
// large graph's bytes, and the edges around one loop repeat each other's
// terms (a poll that ends after a varying number of tries moves every edge
// out of and back into the poll), which a general-purpose compressor
// finds. Partial files, written without Go, keep the tables and each
// edge's sequence numbers in plain msgpack; readers accept both.
type graphWire struct {
	graphFields `msgpack:",inline"`
	Tables      []byte `msgpack:"tables,omitempty"`
	Seqs        []byte `msgpack:"seqs,omitempty"`
	// Positions tells that Seqs holds positions (positions.go).
	Positions bool `msgpack:"pos,omitempty"`
	// TimingZ is the Timing packed; the plain "timing" is then nil. The
	// anchors, derived from the timing, are not stored.
	TimingZ []byte `msgpack:"timingz,omitempty"`
}

// graphTables are the tables of a graphWire.
type graphTables struct {
	Nodes []Node     `msgpack:"nodes"`
	Edges []Edge     `msgpack:"edges"`
	Sites []CallSite `msgpack:"sites"`
}

// Packed parts (Tables, Seqs): a codec byte, then the bytes raw or as
// uvarint(raw length) and a zstd frame.
const (
	packRaw  = 0
	packZstd = 1
	// maxPackedRaw bounds the unpacked size of a part, and maxPackRatio
	// its size against the packed size (real parts compress 2 to 10
	// times), so a crafted block cannot make a reader allocate more than
	// maxPackRatio times its bytes (the decoder stops at the size the
	// part says, which it allocates).
	maxPackedRaw = 1 << 30
	maxPackRatio = 1024
)

// EncodeMsgpack writes g as a graphWire.
func (g Graph) EncodeMsgpack(enc *msgpack.Encoder) error {
	w, err := g.wire(g.storedSeqs())
	if err != nil {
		return err
	}
	return enc.Encode(&w)
}

// wire is g as files store it, with the sequences seqs (positions if pos).
func (g *Graph) wire(seqs []byte, pos bool) (graphWire, error) {
	w := graphWire{graphFields: graphFields(*g)}
	t := graphTables{Nodes: g.Nodes, Edges: slices.Clone(g.Edges), Sites: g.Sites}
	for i := range t.Edges {
		t.Edges[i].Seq = Seq{}
	}
	if len(t.Edges) > 0 {
		w.Seqs, w.Positions = pack(seqs), pos
	}
	tables, err := msgpack.Marshal(&t)
	if err != nil {
		return w, err
	}
	w.Tables = pack(tables)
	w.Nodes, w.Edges, w.Sites = nil, nil, nil
	if g.Timing.Present() {
		w.TimingZ = pack(g.Timing.AppendBinary(nil))
		w.Timing, w.Anchors = Timing{}, nil
	}
	return w, nil
}

// DecodeMsgpack reads a Graph of any format version.
func (g *Graph) DecodeMsgpack(dec *msgpack.Decoder) error {
	mode := g.read
	var w graphWire
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*g = Graph(w.graphFields)
	if w.TimingZ != nil {
		if g.Timing.Present() {
			return errors.New("graph: timing both packed and plain")
		}
		raw, err := unpack(w.TimingZ)
		if err != nil {
			return fmt.Errorf("timing: %w", err)
		}
		if err := g.Timing.UnmarshalBinary(raw); err != nil {
			return err
		}
	}
	if w.Tables != nil {
		if g.Nodes != nil || g.Edges != nil || g.Sites != nil {
			return errors.New("graph: tables both packed and plain")
		}
		t, err := decodeTables(w.Tables)
		if err != nil {
			return fmt.Errorf("graph tables: %w", err)
		}
		g.Nodes, g.Edges, g.Sites = t.Nodes, t.Edges, t.Sites
		shareStrings(g)
	}
	if w.Seqs == nil || mode == readNone {
		return nil
	}
	raw, err := unpack(w.Seqs)
	if err != nil {
		return fmt.Errorf("sequences: %w", err)
	}
	var sc seqScratch
	for i := range g.Edges {
		e := &g.Edges[i]
		if !e.Seq.IsZero() {
			return fmt.Errorf("edge %d: sequence numbers both in the edge and in the graph", i)
		}
		if raw, err = e.Seq.decodeWith(raw, &sc); err != nil {
			return fmt.Errorf("edge %d: %w", i, err)
		}
	}
	if len(raw) > 0 {
		return fmt.Errorf("sequences: %d bytes after the last edge's", len(raw))
	}
	if !w.Positions {
		return nil
	}
	if mode == readLazy {
		m, err := newPosMap(g)
		if err == nil {
			err = m.lazy(g)
		}
		if err != nil {
			return fmt.Errorf("sequences: %w", err)
		}
		g.lazy = m
		return nil
	}
	if err := g.fromPositions(); err != nil {
		return fmt.Errorf("sequences: %w", err)
	}
	return nil
}

// The zstd codecs are safe for concurrent use and costly to set up, so
// one of each serves the process.
var (
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		// DecodeAll decodes no more than the capacity it is given: else
		// a frame that does not say its size (or frames after the
		// first) decode up to the maximum, whatever the part says.
		d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPackedRaw),
			zstd.WithDecodeAllCapLimit(true))
		return d
	})
)

// pack returns the stored form of raw: compressed when that is smaller.
func pack(raw []byte) []byte {
	if len(raw) > 64 {
		if e := zstdEncoder(); e != nil {
			b := binary.AppendUvarint([]byte{packZstd}, uint64(len(raw)))
			// A part packed more than maxPackRatio times is stored
			// raw: readers refuse such ratios (unpack).
			if b = e.EncodeAll(raw, b); len(b) < len(raw)+1 && uint64(len(raw)) <= maxPackRatio*uint64(len(b)) {
				return b
			}
		}
	}
	return append([]byte{packRaw}, raw...)
}

// unpack returns the bytes that pack was given.
func unpack(b []byte) ([]byte, error) {
	payload, n, err := packed(b)
	if err != nil || b[0] == packRaw {
		return payload, err
	}
	d := zstdDecoder()
	if d == nil {
		return nil, errors.New("no zstd decoder")
	}
	raw, err := d.DecodeAll(payload, make([]byte, 0, n))
	if err != nil {
		return nil, fmt.Errorf("%d bytes packed: %w", n, err)
	}
	if uint64(len(raw)) != n {
		return nil, fmt.Errorf("%d bytes, header says %d", len(raw), n)
	}
	return raw, nil
}

// packed checks the header of b, a part as pack stores it, and returns
// its payload (after the codec and the length) and the unpacked size.
func packed(b []byte) ([]byte, uint64, error) {
	if len(b) == 0 {
		return nil, 0, errors.New("empty")
	}
	switch b[0] {
	case packRaw:
		return b[1:], uint64(len(b) - 1), nil
	case packZstd:
		n, k := binary.Uvarint(b[1:])
		if k <= 0 {
			return nil, 0, errors.New("bad length")
		}
		if n > maxPackedRaw || n > maxPackRatio*uint64(len(b)) {
			return nil, 0, fmt.Errorf("bad length: %d bytes packed in %d, more than %d times as many", n, len(b), maxPackRatio)
		}
		var h zstd.Header
		if err := h.Decode(b[1+k:]); err != nil || (h.HasFCS && h.FrameContentSize != n) || h.WindowSize > max(n, 1<<20) {
			return nil, 0, errors.New("bad compressed frame")
		}
		return b[1+k:], n, nil
	}
	return nil, 0, fmt.Errorf("unknown codec %d", b[0])
}

// streamTables is the size from which decodeTables decodes tables as they
// are unpacked, rather than unpacking them first: the unpacked tables of
// a million call sites take 320 MB, twice what they take decoded.
const streamTables = 1 << 20

// decodeTables decodes the packed tables b. Large tables are unpacked
// twice as a stream, once to check their lengths (checkLengths) and once
// to decode them, so that their unpacked bytes are never all in memory.
func decodeTables(b []byte) (graphTables, error) {
	var t graphTables
	payload, n, err := packed(b)
	if err != nil {
		return t, err
	}
	if b[0] == packRaw || n < streamTables {
		raw, err := unpack(b)
		if err == nil {
			err = checkLengths(raw)
		}
		if err == nil {
			err = msgpack.Unmarshal(raw, &t)
		}
		return t, err
	}
	err = unpackStream(payload, func(r *bufio.Reader) error {
		m, err := checkItem(r, n)
		if err != nil {
			return err
		}
		// the rest of the stream, to its checksum
		rest, err := io.Copy(io.Discard, r)
		if err != nil {
			return fmt.Errorf("%d bytes packed: %w", n, err)
		}
		if got := m + uint64(rest); got != n {
			return fmt.Errorf("%d bytes, header says %d", got, n)
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	err = unpackStream(payload, func(r *bufio.Reader) error {
		dec := msgpack.NewDecoder(r)
		// The lengths are checked: the slices are allocated at their size.
		dec.DisableAllocLimit(true)
		return dec.Decode(&t)
	})
	return t, err
}

// unpackStream calls read with the zstd frame payload unpacked as a
// stream.
func unpackStream(payload []byte, read func(*bufio.Reader) error) error {
	d, err := zstd.NewReader(bytes.NewReader(payload), zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(maxPackedRaw), zstd.WithDecoderLowmem(true))
	if err != nil {
		return err
	}
	defer d.Close()
	return read(bufio.NewReaderSize(d, 64<<10))
}

// shareStrings makes the sites of one object share one copy of its path,
// and the nodes of one call one copy of its name: a program's sites are
// in a few objects, and a copy per site was a tenth of the memory of a
// graph of a million sites.
func shareStrings(g *Graph) {
	seen := map[string]string{}
	share := func(s *string) {
		if v, ok := seen[*s]; ok {
			*s = v
		} else {
			seen[*s] = *s
		}
	}
	for i := range g.Sites {
		share(&g.Sites[i].Object)
	}
	for i := range g.Nodes {
		share(&g.Nodes[i].Key.Call)
	}
}
