package flowgraph

// Exported for the tests of package flowgraph_test.
var (
	UsePositions  = (*Graph).usePositions
	StoredSeqs    = (*Graph).storedSeqs
	FromPositions = (*Graph).fromPositions
)

// DecodeLazy decodes a block as File.ReadLazy reads it.
func DecodeLazy(b []byte) (*Rank, error) { return decodeRank(b, readLazy) }
