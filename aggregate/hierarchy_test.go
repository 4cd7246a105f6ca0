package aggregate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHierarchyFromSpec(t *testing.T) {
	spec, err := ParseSpec([]byte(`{"name": "site", "children": [
		{"name": "c1", "children": [{"name": "n1", "ranks": [0, 1]}, {"name": "n2", "ranks": [2]}]},
		{"name": "c2", "ranks": [3]}]}`))
	require.NoError(t, err)
	// Rank 2 has two threads: it becomes a node over two leaves.
	res := []Resource{{"r0", 0}, {"r1", 1}, {"r2.0", 2}, {"r2.1", 2}, {"r3", 3}}
	h, err := NewHierarchy(spec, res)
	require.NoError(t, err)

	var paths []string
	leafOf := map[int]string{}
	for i, n := range h.Nodes {
		paths = append(paths, h.Path(i))
		if n.Resource >= 0 {
			leafOf[n.Resource] = h.Path(i)
		}
		for _, c := range n.Children {
			assert.Greater(t, c, i, "pre-order")
			assert.Equal(t, i, h.Nodes[c].Parent)
			assert.Equal(t, n.Depth+1, h.Nodes[c].Depth)
		}
	}
	assert.Equal(t, []string{"site", "site/c1", "site/c1/n1", "site/c1/n1/r0", "site/c1/n1/r1",
		"site/c1/n2", "site/c1/n2/rank 2", "site/c1/n2/rank 2/r2.0", "site/c1/n2/rank 2/r2.1",
		"site/c2", "site/c2/r3"}, paths)
	assert.Len(t, leafOf, len(res))
	assert.Equal(t, 5, h.Nodes[0].Leaves)
	assert.Equal(t, 4, h.Nodes[1].Leaves)
	assert.Equal(t, 4, h.Height())
}

func TestHierarchyErrors(t *testing.T) {
	res := resources(4)
	tests := []struct {
		name, json, want string
	}{
		{"duplicate", `{"name":"j","ranks":[0,1,2,3],"children":[{"name":"h","ranks":[1]}]}`, "rank 1 appears twice"},
		{"missing", `{"name":"j","ranks":[0,3]}`, "ranks [1 2]"},
		{"unknown rank", `{"name":"j","ranks":[0,1,2,3,9]}`, "rank 9, which is not in the trace"},
		{"empty node", `{"name":"j","ranks":[0,1,2,3],"children":[{"name":"h"}]}`, `"j/h" has neither`},
		{"no name", `{"name":"j","ranks":[0,1,2,3],"children":[{"ranks":[]}]}`, `child of "j" has no name`},
		{"unknown field", `{"name":"j","chidren":[]}`, "chidren"},
		{"cut short", `{"name":`, "cut short"},
		{"empty", ``, "empty: want a JSON object"},
		{"not an object", `[0, 1]`, "not a JSON array"},
		{"children a number", `{"name":"j","children":5}`, `"children": a JSON number is not allowed`},
		{"not json", `{"name" "j"}`, "not valid JSON at byte"},
		{"siblings of one name", `{"name":"j","children":[{"name":"h","ranks":[0,1]},{"name":"g","children":[{"name":"x","ranks":[2]},{"name":"x","ranks":[3]}]}]}`, `two children of "j/g" are named "x"`},
		{"trailing", `{"name":"j","ranks":[0,1,2,3]} {}`, "extra data"},
		{"bad range", `{"name":"j","ranks":["3-1"]}`, `"3-1" is not a rank or a range`},
		{"huge range", `{"name":"j","ranks":["0-99999999999"]}`, "more than"},
		{"negative", `{"name":"j","ranks":[-1]}`, "-1 is not a rank"},
		{"fraction", `{"name":"j","ranks":[1.5]}`, "1.5 is not a rank"},
		{"bool", `{"name":"j","ranks":[true]}`, "true is not a rank"},
		{"not a list", `{"name":"j","ranks":3}`, "want a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := ParseSpec([]byte(tt.json))
			if err == nil {
				_, err = NewHierarchy(spec, res)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "Go value", "no Go type names")
		})
	}
}

func TestRankRanges(t *testing.T) {
	s, err := ParseSpec([]byte(`{"name":"j","ranks":["0-2", 5, " 7 - 8 ", "10"]}`))
	require.NoError(t, err)
	assert.Equal(t, RankList{0, 1, 2, 5, 7, 8, 10}, s.Ranks)
}

func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "h.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"name":"j","ranks":[0]}`), 0o600))
	s, err := LoadSpec(p)
	require.NoError(t, err)
	assert.Equal(t, "j", s.Name)
	_, err = LoadSpec(filepath.Join(dir, "none.json"))
	assert.ErrorContains(t, err, "none.json")
}

func TestHostSpec(t *testing.T) {
	hosts := []string{"b", "a", "b", ""}
	s := HostSpec("", resources(4), func(r int) string { return hosts[r] })
	assert.Equal(t, &Spec{Name: "job", Children: []Spec{
		{Name: "b", Ranks: RankList{0, 2}},
		{Name: "a", Ranks: RankList{1}},
		{Name: "unknown host", Ranks: RankList{3}},
	}}, s)
	h, err := NewHierarchy(s, resources(4))
	require.NoError(t, err)
	assert.Equal(t, 2, h.Height())
	assert.Equal(t, &Spec{Name: "x", Ranks: RankList{0, 1, 2, 3}}, FlatSpec("x", resources(4)))
}

// Any input is a hierarchy or an error, never a panic; a hierarchy read
// back from its own JSON is the same, and builds over its ranks or says
// why not.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		`{"name":"j","ranks":["0-3"]}`,
		`{"name":"site","children":[{"name":"a","children":[{"name":"n1","ranks":[0,1]}]},{"name":"b","ranks":["2-3"]}]}`,
		`{"name":"j","children":[{"name":"x","ranks":[0]},{"name":"x","ranks":[1]}]}`,
		`[1]`, ``, `{"name":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			require.NotContains(t, err.Error(), "Go value")
			return
		}
		b, err := json.Marshal(s)
		require.NoError(t, err)
		s2, err := ParseSpec(b)
		require.NoError(t, err, "%s", b)
		require.Equal(t, s, s2)
		if n := maxRank(s); n < 1<<12 {
			_, _ = NewHierarchy(s, resources(n+1))
		}
	})
}

func maxRank(s *Spec) int {
	m := 0
	for _, r := range s.Ranks {
		m = max(m, r)
	}
	for i := range s.Children {
		m = max(m, maxRank(&s.Children[i]))
	}
	return m
}
