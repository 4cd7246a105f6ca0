package analysis

import (
	"slices"
	"strconv"
	"strings"

	"mpiflow/loops"
)

// DiffTree is the loop trees of a pair of matched groups (JobDiff.Groups)
// aligned row by row by the loops' paths: the rows of A's tree in its
// order, each loop only in B placed under its enclosing loop after A's
// loops there.
type DiffTree struct {
	// Group indexes JobDiff.Groups.
	Group int           `json:"group"`
	Rows  []DiffTreeRow `json:"rows"`
}

// DiffTreeRow is one loop of an aligned tree, in A, in B or in both.
type DiffTreeRow struct {
	// Depth is the loop's nesting, 0 for an outermost loop; Header the
	// last element of its path (JobDiff.Items' Path).
	Depth  int    `json:"depth"`
	Header string `json:"header"`
	// ALoop and BLoop are the loop's ID in each group's tree
	// (loops.TreeRow.ID, that of the group's drawn levels), 0 where it is
	// not.
	ALoop int `json:"a_loop"`
	BLoop int `json:"b_loop"`
	// Item indexes JobDiff.Items: the loop's comparison; -1 when no rank
	// of either group ran it.
	Item int `json:"item"`
}

// alignTrees aligns the loop trees of d's matched groups; d.Items must be
// in their final order.
func (d *JobDiff) alignTrees(a, b *Job) []DiffTree {
	items := make(map[string]int)
	for i, it := range d.Items {
		if it.Kind == ItemLoop {
			items[strconv.Itoa(it.Group)+"\n"+strings.Join(it.Path, "\n")] = i
		}
	}
	var out []DiffTree
	for gi, m := range d.Groups {
		if m.Status != StatusMatched {
			continue
		}
		t := DiffTree{Group: gi}
		for _, r := range alignPaths(a.Groups[m.A].Tree, b.Groups[m.B].Tree) {
			item, ok := items[strconv.Itoa(gi)+"\n"+r.key]
			if !ok {
				item = -1
			}
			t.Rows = append(t.Rows, DiffTreeRow{Depth: r.depth, Header: r.header, ALoop: r.a, BLoop: r.b, Item: item})
		}
		out = append(out, t)
	}
	return out
}

// alignedPath is one loop of two trees aligned by path (treePaths).
type alignedPath struct {
	key, header string
	depth, a, b int
}

// alignPaths pairs the rows of trees a and b by their paths and returns
// them in pre-order: a node's children are A's in A's order, then B's
// others in B's order.
func alignPaths(ta, tb []loops.TreeRow) []alignedPath {
	rows := map[string]*alignedPath{}
	children := map[string][]string{}
	add := func(tree []loops.TreeRow, inA bool) {
		for i, p := range treePaths(tree) {
			k := strings.Join(p, "\n")
			r := rows[k]
			if r == nil {
				r = &alignedPath{key: k, header: p[len(p)-1], depth: len(p) - 1}
				rows[k] = r
				parent := strings.Join(p[:len(p)-1], "\n")
				children[parent] = append(children[parent], k)
			}
			if inA {
				r.a = tree[i].ID
			} else {
				r.b = tree[i].ID
			}
		}
	}
	add(ta, true)
	add(tb, false)
	out := make([]alignedPath, 0, len(rows))
	var walk func(k string)
	walk = func(k string) {
		for _, c := range children[k] {
			out = append(out, *rows[c])
			walk(c)
		}
	}
	walk("")
	if len(out) < len(rows) {
		// A path whose enclosing loop is in neither tree: bad input,
		// kept at the end rather than lost.
		seen := make(map[string]bool, len(out))
		for _, r := range out {
			seen[r.key] = true
		}
		var rest []string
		for k := range rows {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range rest {
			out = append(out, *rows[k])
		}
	}
	return out
}
