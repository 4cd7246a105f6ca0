package flowgraph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"mpiflow/flowgraph"
)

// TestRankEnd: a rank ends at its closing anchor, or without anchors
// after the sum of its call and compute times.
func TestRankEnd(t *testing.T) {
	nodes := []flowgraph.Node{{Time: flowgraph.Stat{Total: 30}}, {Time: flowgraph.Stat{Total: 20}}}
	edges := []flowgraph.Edge{{Time: flowgraph.Stat{Total: 7}}}
	tests := []struct {
		name    string
		anchors flowgraph.Anchors
		want    int64
	}{
		{"no anchors", nil, 57},
		{"closing anchor", flowgraph.Anchors{{Event: 0}, {Event: 2, Time: 55}}, 55},
		{"later anchor", flowgraph.Anchors{{Event: 0}, {Event: 2, Time: 60}}, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &flowgraph.Rank{Start: 1000, Graph: flowgraph.Graph{Nodes: nodes, Edges: edges, NumEvents: 2, Anchors: tt.anchors}}
			assert.Equal(t, int64(57), r.Graph.TimeSum())
			assert.Equal(t, tt.want, r.Graph.Duration())
			assert.Equal(t, 1000+tt.want, r.End())
		})
	}
}
