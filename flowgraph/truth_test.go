package flowgraph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

func TestTraceWriterRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		events []flowgraph.TraceEvent
		nodes  []flowgraph.TraceNode
	}{
		{"empty", nil, nil},
		{"one", []flowgraph.TraceEvent{{Node: 0, Enter: 5, Exit: 9}}, []flowgraph.TraceNode{{Call: "MPI_Init", Site: 0x400, Partner: -1, Comm: -1}}},
		{"several", []flowgraph.TraceEvent{{Node: 0, Enter: 1_000_000, Exit: 1_000_100}, {Node: 1, Enter: 1_000_100, Exit: 1_000_100}, {Node: 0, Enter: 2_000_000, Exit: 2_500_000}},
			[]flowgraph.TraceNode{{Call: "MPI_Send", Site: 0x10, Bytes: -8, Partner: 3, Comm: 0}, {Call: "MPI_Recv", Partner: -1, Comm: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := flowgraph.NewTraceWriter(&buf, 7)
			for _, e := range tt.events {
				require.NoError(t, w.Add(e))
			}
			require.NoError(t, w.Close(tt.nodes))
			path := filepath.Join(t.TempDir(), "x.mftrace")
			require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
			ft, err := flowgraph.ReadFullTrace(path)
			require.NoError(t, err)
			assert.Equal(t, 7, ft.Rank)
			assert.True(t, ft.Complete)
			assert.Equal(t, tt.events, ft.Events)
			assert.Len(t, ft.Nodes, len(tt.nodes))
			for i := range tt.nodes {
				assert.Equal(t, tt.nodes[i], ft.Nodes[i])
			}
		})
	}
}

func TestTraceWriterRejectsBadEvents(t *testing.T) {
	w := flowgraph.NewTraceWriter(&bytes.Buffer{}, 0)
	assert.Error(t, w.Add(flowgraph.TraceEvent{Node: 0, Enter: 10, Exit: 5}))
	assert.Error(t, w.Close(nil), "the first error sticks")
}

func TestTracePath(t *testing.T) {
	assert.Equal(t, "/d/app.1.rank3.mftrace", flowgraph.TracePath("/d/app.1.mpiflow", 3, 0))
	assert.Equal(t, "/d/app.1.rank3.thread2.mftrace", flowgraph.TracePath("/d/app.1.mpiflow", 3, 2))
}
