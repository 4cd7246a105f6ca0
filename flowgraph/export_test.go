package flowgraph

// Exported for the tests of package flowgraph_test.
var (
	UsePositions  = (*Graph).usePositions
	StoredSeqs    = (*Graph).storedSeqs
	FromPositions = (*Graph).fromPositions
)
