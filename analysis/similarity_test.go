package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// twoRoles moves the call sites of the odd ranks elsewhere, as if they ran
// other code: even and odd ranks then play two roles, and within each
// role the generated ranks differ by branches of small share.
func twoRoles(_ *flowgraph.Header, ranks []*flowgraph.Rank) {
	for _, r := range ranks {
		if r.Rank%2 == 0 {
			continue
		}
		sites := slices.Clone(r.Graph.Sites)
		for i := range sites {
			sites[i].Addr += 1 << 20
			sites[i].Offset += 1 << 20
		}
		r.Graph.Sites = sites
	}
}

func TestSimilarGroups(t *testing.T) {
	in := genJob(t, 8, twoRoles)
	exact, err := Load(in, Options{Similarity: 1})
	require.NoError(t, err)
	job, err := Load(in, Options{})
	require.NoError(t, err)
	assert.Equal(t, DefaultSimilarity, job.Similarity)
	require.Greater(t, len(exact.Groups), 2, "the generated ranks of each role differ in structure")

	require.Len(t, job.Groups, 2, "one group per role")
	assert.Equal(t, []int{0, 2, 4, 6}, job.Groups[0].Members)
	assert.Equal(t, []int{1, 3, 5, 7}, job.Groups[1].Members)
	// Every group of the same structure is inside one group.
	structures := make([]int, len(job.Groups))
	for _, eg := range exact.Groups {
		g := job.Ranks[eg.Members[0]].Group
		structures[g]++
		for _, m := range eg.Members {
			assert.Equal(t, g, job.Ranks[m].Group, "rank %d", m)
		}
	}
	for gi, g := range job.Groups {
		assert.Equal(t, structures[gi], g.Structures, "group %d", gi)
		k := slices.Index(g.Members, g.Rep)
		require.GreaterOrEqual(t, k, 0, "the representative is a member")
		require.Len(t, g.Distances, len(g.Members))
		assert.Zero(t, g.Distances[k])
		for i, d := range g.Distances {
			assert.LessOrEqual(t, d, 1-DefaultSimilarity+0.05, "member %d of group %d", g.Members[i], gi)
		}
		assert.Equal(t, exact.Ranks[g.Rep].Loops.Signature, g.Signature)
		checkGroupTree(t, job, gi)
		checkGroupLevels(t, job, gi)
	}
}

// checkGroupTree checks that every loop of the members is in the group's
// tree once, with the ranks that have it.
func checkGroupTree(t *testing.T, job *Job, gi int) {
	g := &job.Groups[gi]
	has := map[loops.LoopKey][]int{}
	for _, m := range g.Members {
		r := job.Ranks[m]
		for _, k := range loops.LoopKeys(&r.Graph, r.Collapsed) {
			has[k] = append(has[k], r.Rank.Rank)
		}
	}
	require.Len(t, g.Tree, len(has), "group %d: one row per loop key", gi)
	for _, row := range g.Tree {
		rs := has[row.Key]
		assert.Equal(t, len(rs), row.Ranks, "%s", row.Key)
		if len(rs) < len(g.Members) {
			assert.Equal(t, RankRanges(rs), row.Where, "%s", row.Key)
		} else {
			assert.Empty(t, row.Where)
		}
		assert.LessOrEqual(t, row.MinShare, row.AvgShare+1e-12)
		assert.LessOrEqual(t, row.AvgShare, row.MaxShare+1e-12)
	}
}

// checkGroupLevels checks the values of the group's top level: the mean
// over the members that have each element.
func checkGroupLevels(t *testing.T, job *Job, gi int) {
	g := &job.Groups[gi]
	nt := MetricIndex(job.Metrics, MetricTime)
	top := &g.Levels[0]
	require.Equal(t, len(job.Ranks[g.Rep].Levels[0].Nodes), len(top.Nodes))
	for i, e := range top.Nodes {
		sum, n := 0.0, 0
		for _, m := range g.Members {
			for _, x := range job.Ranks[m].Levels[0].Nodes {
				if x.Key == e.Key {
					sum += x.Vals[nt]
					n++
				}
			}
		}
		require.Positive(t, n, "the representative has its own elements")
		assert.InDelta(t, sum/float64(n), e.Vals[nt], 1e-9*max(1, sum), "group %d node %d %s", gi, i, e.Key)
	}
}

// TestSimilarityOne: a similarity of 1 makes the groups of the same
// structure, as Options.Similarity promises.
func TestSimilarityOne(t *testing.T) {
	in := genJob(t, 8, nil)
	job, err := Load(in, Options{Similarity: 1})
	require.NoError(t, err)
	for _, g := range job.Groups {
		assert.Equal(t, 1, g.Structures)
		for _, m := range g.Members {
			assert.Equal(t, g.Signature, job.Ranks[m].Loops.Signature)
		}
	}
	sigs := map[string]bool{}
	for _, r := range job.Ranks {
		sigs[r.Loops.Signature] = true
	}
	assert.Len(t, job.Groups, len(sigs))
}

func prof(keys []uint64, w ...float64) profile {
	var p profile
	for i, x := range w {
		p = append(p, feature{key: keys[i], w: [dims]float64{x, x, x}})
	}
	return p
}

func TestDistance(t *testing.T) {
	a := prof([]uint64{1, 2}, 0.5, 0.5)
	for _, tc := range []struct {
		name string
		a, b profile
		want float64
	}{
		{"same", a, a, 0},
		{"same keys, other shares", a, prof([]uint64{1, 2}, 0.9, 0.1), 0},
		{"disjoint", a, prof([]uint64{3, 4}, 0.5, 0.5), 1},
		{"one more with a tenth", a, prof([]uint64{1, 2, 3}, 0.45, 0.45, 0.1), 0.05},
		{"one fewer", a, prof([]uint64{2}, 1), 0.25},
		{"empty", a, profile{}, 0.5},
		{"worst dimension", prof([]uint64{1, 2}, 0.5, 0.5),
			profile{{key: 1, w: [dims]float64{0.9, 0.5, 1}}, {key: 3, w: [dims]float64{0.1, 0.5, 0}}}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, distance(&tc.a, &tc.b), 1e-12)
			assert.InDelta(t, tc.want, distance(&tc.b, &tc.a), 1e-12, "symmetric")
		})
	}
}

// TestSimilarGroupsBounded: ranks of a few roles, each rank with a few
// keys of its own, are grouped by role with a bounded number of profiles
// built per rank (not one per pair of ranks).
func TestSimilarGroupsBounded(t *testing.T) {
	const ranks, roles = 400, 5
	rng := rand.New(rand.NewPCG(1, 2))
	profiles := make([]profile, ranks)
	for r := range profiles {
		role := uint64(r % roles)
		var keys []uint64
		var w []float64
		for k := range uint64(20) {
			keys = append(keys, role<<32|k)
			w = append(w, 0.049)
		}
		// A key of the rank's own with 2% of its time: a rare branch.
		keys = append(keys, 1<<40|uint64(rng.IntN(1000)))
		w = append(w, 0.02)
		profiles[r] = prof(keys, w...)
	}
	classes := make([][]int, ranks)
	for r := range classes {
		classes[r] = []int{r}
	}
	built := 0
	get := func(r int) profile { built++; return profiles[r] }
	groups, reps, dists := similarGroups(classes, get, 1-DefaultSimilarity)
	require.Len(t, groups, roles)
	for g, ms := range groups {
		assert.Len(t, ms, ranks/roles)
		for _, m := range ms {
			assert.Equal(t, groups[g][0]%roles, m%roles, "rank %d", m)
		}
		assert.Contains(t, ms, reps[g])
		assert.Len(t, dists[g], len(ms))
	}
	assert.LessOrEqual(t, built, 3*ranks+medoidCandidates*roles, "profiles built")
}
