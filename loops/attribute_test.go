package loops

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// attributeByExpansion is attributeIterations as it was before it walked
// the sequence descriptors: it expands every entry's sequence numbers,
// sorts them and gives each run of back edge traversals to the entries
// before its numbers by binary search. It is the reference of
// TestAttributeIterationsMatchesExpansion.
func attributeByExpansion(g *flowgraph.Graph, l *Loop) {
	if len(l.Entries) == 0 {
		return
	}
	if len(l.Entries) == 1 && !l.InitialInside {
		l.Entries[0].Iterations = l.Stats.Iterations
		return
	}
	seqOK := func(ei int) bool { return g.Edges[ei].Seq.Len() == g.Edges[ei].Count }
	for _, e := range l.Entries {
		if !seqOK(e.Edge) {
			markUnknown(l)
			return
		}
	}
	for _, b := range l.BackEdges {
		if !seqOK(b) {
			markUnknown(l)
			return
		}
	}
	var n int64
	for _, e := range l.Entries {
		n += e.Count
	}
	type event struct {
		seq   int64
		entry int32
	}
	evs := make([]event, 0, n)
	for k, e := range l.Entries {
		g.Edges[e.Edge].Seq.All(func(s int64) bool {
			evs = append(evs, event{s, int32(k)})
			return true
		})
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.seq, b.seq) })
	for _, ev := range evs {
		l.Entries[ev.entry].Iterations++
	}
	for _, b := range l.BackEdges {
		g.Edges[b].Seq.Runs(func(r flowgraph.SeqRun) bool {
			i := sort.Search(len(evs), func(i int) bool { return evs[i].seq >= r.Start }) - 1
			var done int64
			for done < r.Count {
				upto := r.Count
				if i+1 < len(evs) {
					if hi := evs[i+1].seq; r.Count > 1 && r.Last() >= hi {
						upto = (hi-r.Start-1)/r.Stride + 1
					} else if r.Count == 1 && r.Start >= hi {
						upto = 0
					}
				}
				if i >= 0 {
					l.Entries[evs[i].entry].Iterations += upto - done
				}
				done = max(done, upto)
				i++
			}
			return true
		})
	}
}

// checkAttribution recomputes the per-entry iterations of every loop of c
// by expansion and compares; it returns how many loops have more than one
// way in.
func checkAttribution(t *testing.T, name string, g *flowgraph.Graph, c *Collapsed) int {
	t.Helper()
	var multi int
	for i := range c.Loops {
		l := c.Loops[i]
		if len(l.Entries) > 1 || l.InitialInside {
			multi++
		}
		ref := l
		ref.Entries = slices.Clone(l.Entries)
		for k := range ref.Entries {
			ref.Entries[k].Iterations = 0
		}
		attributeByExpansion(g, &ref)
		require.Equal(t, ref.Entries, l.Entries, "%s: loop %d", name, l.ID)
	}
	return multi
}

// TestAttributeIterationsMatchesExpansion compares the per-entry
// iterations with the expanding computation on generated programs and on
// recorded runs of the test applications (testdata/profiles, recorded by
// `mpiflow run` from testdata/apps: poll in its three modes with 3000 and
// 200 passes, branches, halo with 4 ranks, ring, unusual, threads).
func TestAttributeIterationsMatchesExpansion(t *testing.T) {
	var multi int
	for seed := uint64(1); seed <= 30; seed++ {
		opt := flowgen.Options{Seed: seed, Events: 30000, Depth: 1 + int(seed%4), Sites: 4 + int(seed%12), Branchy: seed%3 != 0, MaxIter: 5 + int(seed%40)}
		p := flowgen.New(opt)
		b := p.NewBuilder()
		p.Execute(1, b.Add)
		g := b.Graph()
		c, err := Collapse(&g)
		require.NoError(t, err)
		multi += checkAttribution(t, fmt.Sprintf("flowgen seed %d", seed), &g, c)
	}
	files, err := filepath.Glob("../testdata/profiles/*.mpiflow")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		f, err := flowgraph.Open(path)
		require.NoError(t, err)
		for i, e := range f.Index {
			r, err := f.ReadRank(i)
			require.NoError(t, err)
			c, err := Collapse(&r.Graph)
			require.NoError(t, err)
			multi += checkAttribution(t, fmt.Sprintf("%s rank %d.%d", filepath.Base(path), e.Rank, e.Thread), &r.Graph, c)
		}
		require.NoError(t, f.Close())
	}
	t.Logf("%d loops with more than one way in", multi)
	require.Greater(t, multi, 50, "loops with more than one way in")
}
