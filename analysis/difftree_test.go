package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/loops"
)

// TestAlignPaths: two trees pair by path in pre-order, a loop of one tree
// only leaving the other side 0, nesting kept.
func TestAlignPaths(t *testing.T) {
	row := func(id, parent int, header string) loops.TreeRow {
		return loops.TreeRow{ID: id, Parent: parent, Header: header}
	}
	outer, inner, other, newer := "MPI_Send at a.c:1", "MPI_Recv at a.c:2", "MPI_Bcast at a.c:3", "MPI_Wait at a.c:4"
	tests := []struct {
		name   string
		ta, tb []loops.TreeRow
		want   []alignedPath
	}{
		{"same trees, other IDs",
			[]loops.TreeRow{row(1, 0, outer), row(2, 1, inner)},
			[]loops.TreeRow{row(5, 0, outer), row(7, 5, inner)},
			[]alignedPath{{key: outer, header: outer, a: 1, b: 5}, {key: outer + "\n" + inner, header: inner, depth: 1, a: 2, b: 7}}},
		{"a loop only in B nests under its enclosing loop, after A's",
			[]loops.TreeRow{row(1, 0, outer), row(2, 1, inner), row(3, 0, other)},
			[]loops.TreeRow{row(1, 0, outer), row(2, 1, newer), row(3, 1, inner), row(4, 0, other)},
			[]alignedPath{
				{key: outer, header: outer, a: 1, b: 1},
				{key: outer + "\n" + inner, header: inner, depth: 1, a: 2, b: 3},
				{key: outer + "\n" + newer, header: newer, depth: 1, b: 2},
				{key: other, header: other, a: 3, b: 4},
			}},
		{"a loop only in A, with its inner loop",
			[]loops.TreeRow{row(1, 0, other), row(2, 0, outer), row(3, 2, inner)},
			[]loops.TreeRow{row(1, 0, other)},
			[]alignedPath{
				{key: other, header: other, a: 1, b: 1},
				{key: outer, header: outer, a: 2},
				{key: outer + "\n" + inner, header: inner, depth: 1, a: 3},
			}},
		{"no loops", nil, nil, []alignedPath{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, alignPaths(tc.ta, tc.tb))
		})
	}
}

// TestDiffTrees: the diff's aligned trees point at its loop items, a loop
// only in B at a new item.
func TestDiffTrees(t *testing.T) {
	a := loadProgram(t, testProgram{ranks: 2, loops: []testLoop{exchange, reduce}})
	b := loadProgram(t, testProgram{ranks: 2, loops: []testLoop{slowed(exchange, 2), reduce, extra}})
	d := Diff(a, b)
	require.Len(t, d.Trees, 1)
	rows := d.Trees[0].Rows
	require.Len(t, rows, 3)
	var status []string
	for _, r := range rows {
		require.GreaterOrEqual(t, r.Item, 0, r.Header)
		it := d.Items[r.Item]
		assert.Equal(t, ItemLoop, it.Kind)
		assert.Equal(t, r.Header, it.Path[len(it.Path)-1])
		assert.Equal(t, r.Depth, len(it.Path)-1)
		status = append(status, it.Status)
	}
	assert.Equal(t, []string{StatusMatched, StatusMatched, StatusNew}, status)
	assert.Contains(t, rows[0].Header, "app.c:10", "A's order: the exchange loop first")
	assert.InDelta(t, 2, d.Items[rows[0].Item].Ratio, 1e-9)
	assert.Positive(t, rows[0].ALoop)
	assert.Positive(t, rows[2].BLoop)
	assert.Zero(t, rows[2].ALoop, "only in B")
}
