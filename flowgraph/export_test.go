package flowgraph

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Exported for the tests of package flowgraph_test.
var (
	UsePositions  = (*Graph).usePositions
	StoredSeqs    = (*Graph).storedSeqs
	FromPositions = (*Graph).fromPositions
	// CheckLengths lets the fuzz targets walk msgpack items of fuzzed
	// bytes with the bound the reader applies.
	CheckLengths = checkLengths
	// Unpack opens the packed parts of a block (tables, sequences,
	// timing), for seeds that store them raw.
	Unpack = unpack
)

// DecodeLazy decodes a block as File.ReadLazy reads it.
func DecodeLazy(b []byte) (*Rank, error) { return decodeRank(b, readLazy) }

// Positions returns the sequences of g as files store them when they are
// positions, nil when g's are not stored so.
func Positions(g *Graph) []Seq {
	seqs, _ := g.positions()
	return seqs
}

// EncodeWithPositions encodes the block of r with seqs, one per edge,
// stored as its graph's positions, whether they fit the graph or not.
func EncodeWithPositions(r *Rank, seqs []Seq) ([]byte, error) {
	var raw []byte
	for i := range seqs {
		raw = seqs[i].AppendBinary(raw)
	}
	w, err := r.Graph.wire(raw, true)
	if err != nil {
		return nil, err
	}
	gw, err := msgpack.Marshal(&w)
	if err != nil {
		return nil, err
	}
	b, err := msgpack.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]msgpack.RawMessage
	if err := msgpack.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["graph"] = gw
	return msgpack.Marshal(m)
}

// CheckHints compares what IntervalIter.Next found of each edge's numbers
// from its hints, after the interval [First, End), with full searches:
// its next number succ(End) and the numbers below it.
func CheckHints(it *IntervalIter) error {
	for e := range it.ix {
		x := &it.ix[e]
		if want := x.succ(it.End); it.nxt[e] != want {
			return fmt.Errorf("edge %d after [%d, %d): next number %d, searched %d", e, it.First, it.End, it.nxt[e], want)
		}
		if want := x.rank(it.End); it.hint[e].below != want {
			return fmt.Errorf("edge %d after [%d, %d): %d numbers below, searched %d", e, it.First, it.End, it.hint[e].below, want)
		}
	}
	return nil
}
