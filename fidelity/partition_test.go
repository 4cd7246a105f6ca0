package fidelity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
)

// model returns a one-rank model with states A and B over three slices
// of 1000 ns, where busy[t] is the time of state B in slice t.
func model(t *testing.T, busy ...int64) *aggregate.Model {
	t.Helper()
	m, err := aggregate.NewModel([]aggregate.Resource{{Name: "r0"}}, []string{"A", "B"}, 0, 3000, 3)
	require.NoError(t, err)
	for s, b := range busy {
		c := m.Cell(0, s)
		c[0], c[1] = 1000-b, b
	}
	return m
}

func TestComparePartitions(t *testing.T) {
	spec, err := aggregate.ParseSpec([]byte(`{"name":"j","ranks":[0]}`))
	require.NoError(t, err)
	truth := model(t, 0, 0, 1000)
	h, err := aggregate.NewHierarchy(spec, truth.Resources)
	require.NoError(t, err)

	got, err := comparePartitions(model(t, 0, 0, 1000), truth, h, []float64{0.5})
	require.NoError(t, err)
	assert.Equal(t, []PartitionMatch{{P: 0.5, Same: true, Rebuilt: 2, Truth: 2, Equivalent: true}}, got)

	// Idle, idle, busy is best cut after slice 1; the rebuilt trace's
	// cut after slice 0 loses information on the truth.
	got, err = comparePartitions(model(t, 0, 1000, 1000), truth, h, []float64{0.5})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.False(t, got[0].Same)
	assert.False(t, got[0].Equivalent)
	assert.Greater(t, got[0].QualityGap, 0.1)
}

func TestJudgeTies(t *testing.T) {
	spec, err := aggregate.ParseSpec([]byte(`{"name":"j","ranks":[0]}`))
	require.NoError(t, err)
	truth := model(t, 0, 0, 1000)
	h, err := aggregate.NewHierarchy(spec, truth.Resources)
	require.NoError(t, err)
	at, err := aggregate.New(truth, h, aggregate.Options{})
	require.NoError(t, err)
	ct, err := at.BestCells(0.5)
	require.NoError(t, err)
	// The job's only rank (node 1) covers what the job (node 0) covers:
	// the same cells named by the other node are another partition of
	// equal quality.
	var other []aggregate.Cell
	for _, c := range ct {
		other = append(other, aggregate.Cell{Node: 1 - c.Node, First: c.First, Last: c.Last})
	}
	m, err := judge(at, 0.5, other, ct)
	require.NoError(t, err)
	assert.False(t, m.Same)
	assert.True(t, m.Equivalent)
	assert.InDelta(t, 0, m.QualityGap, PartitionTolerance)

	_, err = judge(at, 0.5, []aggregate.Cell{{Node: 5}}, ct)
	assert.Error(t, err)
}
