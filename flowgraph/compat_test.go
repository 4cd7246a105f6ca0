package flowgraph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// v1Program makes the calls of testdata/v1.mpiflow, a file written by the
// format-version-1 writer (mpiflow before format 2): a poll loop with a
// branch every third pass.
func v1Program() []flowgraph.Call {
	var calls []flowgraph.Call
	t := int64(0)
	add := func(call string, dur int64) {
		calls = append(calls, flowgraph.Call{Key: flowgraph.NodeKey{Call: call}, Enter: t, Exit: t + dur, Partner: -1})
		t += dur + 100
	}
	add("MPI_Init", 5000)
	for i := range 200 {
		add("MPI_Test", 50)
		add("MPI_Test", 50)
		if i%3 == 0 {
			add("MPI_Testany", 70+int64(i))
		}
		add("MPI_Allreduce", 300)
	}
	add("MPI_Finalize", 1000)
	return calls
}

// TestReadsVersion1 reads a version-1 file: its arithmetic runs become
// sequences that rebuild the same events.
func TestReadsVersion1(t *testing.T) {
	f, err := flowgraph.Open("testdata/v1.mpiflow")
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 1, f.Header.Version)
	r, err := f.ReadRank(0)
	require.NoError(t, err)
	calls := v1Program()
	require.Equal(t, int64(len(calls)), r.Graph.NumEvents)
	it := r.Graph.Events()
	var i int
	var prevEnd int64
	for it.Next() {
		ev := it.Event()
		require.Equal(t, calls[i].Key.Call, r.Graph.Nodes[ev.Node].Key.Call, "event %d", i)
		require.GreaterOrEqual(t, ev.Start, prevEnd)
		prevEnd = ev.End
		i++
	}
	require.NoError(t, it.Err())
	assert.Equal(t, len(calls), i)
	last := calls[len(calls)-1]
	assert.Equal(t, last.Exit-calls[0].Enter, prevEnd, "the run ends at the closing anchor")
	// Version 1 stored a run per pass for the Test->Test edge (taken at
	// two of every three passes of four events); recoded, it folds.
	for _, e := range r.Graph.Edges {
		if n := r.Graph.Nodes[e.Src].Key.Call; n == "MPI_Test" && e.Src == e.Dst {
			assert.Greater(t, e.Seq.NumTerms(), 50)
			s := flowgraph.SeqOf(values(&e.Seq)...)
			assert.LessOrEqual(t, s.NumTerms(), 6)
		}
	}
}
