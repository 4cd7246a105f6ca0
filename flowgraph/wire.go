package flowgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"
)

// graphFields is Graph without its msgpack methods.
type graphFields Graph

// graphWire is a Graph as files of format version 2 store it: the edges'
// sequence numbers are taken out of the edges and stored together in
// Seqs, one edge after the other, compressed. Irregular sequences are
// most of a large graph's bytes, and the edges around one loop repeat each
// other's terms (a poll that ends after a varying number of tries moves
// every edge out of and back into the poll), which a general-purpose
// compressor finds. Partial files, written without Go, keep each edge's
// sequence numbers in the edge; readers accept both.
type graphWire struct {
	graphFields `msgpack:",inline"`
	Seqs        []byte `msgpack:"seqs,omitempty"`
}

// Seqs encodings: a codec byte, then the concatenated encodings of the
// edges' sequences (AppendBinary), raw or as uvarint(raw length) and a
// zstd frame.
const (
	seqsRaw  = 0
	seqsZstd = 1
	// maxSeqsRaw bounds the decompressed sequences of one graph, and
	// maxSeqsRatio their size against the compressed size (sequence
	// encodings are dense already: real graphs compress 2 to 4 times), so
	// a crafted block cannot make a reader allocate without limit.
	maxSeqsRaw   = 1 << 30
	maxSeqsRatio = 1024
)

// EncodeMsgpack writes g as a graphWire.
func (g Graph) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := graphWire{graphFields: graphFields(g)}
	if len(g.Edges) > 0 {
		w.Edges = slices.Clone(g.Edges)
		var raw []byte
		for i := range w.Edges {
			raw = w.Edges[i].Seq.AppendBinary(raw)
			w.Edges[i].Seq = Seq{}
		}
		w.Seqs = packSeqs(raw)
	}
	return enc.Encode(&w)
}

// DecodeMsgpack reads a Graph of any format version.
func (g *Graph) DecodeMsgpack(dec *msgpack.Decoder) error {
	var w graphWire
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*g = Graph(w.graphFields)
	if w.Seqs == nil {
		return nil
	}
	raw, err := unpackSeqs(w.Seqs)
	if err != nil {
		return err
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if !e.Seq.IsZero() {
			return fmt.Errorf("edge %d: sequence numbers both in the edge and in the graph", i)
		}
		if raw, err = e.Seq.decode(raw); err != nil {
			return fmt.Errorf("edge %d: %w", i, err)
		}
	}
	if len(raw) > 0 {
		return fmt.Errorf("sequences: %d bytes after the last edge's", len(raw))
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
		d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxSeqsRaw))
		return d
	})
)

// packSeqs returns the stored form of raw: compressed when that is
// smaller.
func packSeqs(raw []byte) []byte {
	if len(raw) > 64 {
		if e := zstdEncoder(); e != nil {
			b := binary.AppendUvarint([]byte{seqsZstd}, uint64(len(raw)))
			if b = e.EncodeAll(raw, b); len(b) < len(raw)+1 {
				return b
			}
		}
	}
	return append([]byte{seqsRaw}, raw...)
}

func unpackSeqs(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errors.New("sequences: empty")
	}
	switch b[0] {
	case seqsRaw:
		return b[1:], nil
	case seqsZstd:
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || n > maxSeqsRaw || n > maxSeqsRatio*uint64(len(b))+1<<20 {
			return nil, errors.New("sequences: bad length")
		}
		var h zstd.Header
		if err := h.Decode(b[1+k:]); err != nil || (h.HasFCS && h.FrameContentSize != n) || h.WindowSize > max(n, 1<<20) {
			return nil, errors.New("sequences: bad compressed frame")
		}
		d := zstdDecoder()
		if d == nil {
			return nil, errors.New("sequences: no zstd decoder")
		}
		raw, err := d.DecodeAll(b[1+k:], make([]byte, 0, n))
		if err != nil {
			return nil, fmt.Errorf("sequences: %w", err)
		}
		if uint64(len(raw)) != n {
			return nil, fmt.Errorf("sequences: %d bytes, header says %d", len(raw), n)
		}
		return raw, nil
	}
	return nil, fmt.Errorf("sequences: unknown codec %d", b[0])
}
