package export

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// treeCase is a generated job to export.
type treeCase struct {
	name     string
	ranks    int
	counters int
	threads  bool // rank 0 also has a thread 1
	noLoops  bool // loaded without the loop analysis
	rankList map[int]bool
}

var treeCases = []treeCase{
	{name: "loops", ranks: 4},
	{name: "counters", ranks: 3, counters: 2},
	{name: "threads", ranks: 2, threads: true, counters: 1},
	{name: "no loops", ranks: 2, noLoops: true},
	{name: "selected ranks", ranks: 4, rankList: map[int]bool{1: true, 3: true}},
}

// treeJob writes the job of tc, half of its call sites resolved, and
// loads it as the export command does.
func treeJob(t testing.TB, tc treeCase) *analysis.Job {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 11, Events: 3000, Depth: 3, Sites: 12, Branchy: true, Counters: tc.counters}, tc.ranks, 2)
	h.Command = []string{"./halo", "500"}
	h.Executable = "/opt/apps/halo"
	h.MPILibrary, h.MPIVersion = "Open MPI v4.1.4", "3.1"
	for _, r := range ranks {
		for i := range r.Graph.Sites {
			if i%2 == 0 {
				s := &r.Graph.Sites[i]
				s.Function, s.File, s.Line = fmt.Sprintf("step%d", i), "/src/halo.c", 40+i
			}
		}
	}
	if tc.threads {
		th := *ranks[0]
		th.Thread = 1
		ranks = append([]*flowgraph.Rank{ranks[0], &th}, ranks[1:]...)
	}
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	job, err := analysis.Load(path, analysis.Options{NoSequences: true, NoSiteTable: true, NoLoops: tc.noLoops, Ranks: tc.rankList})
	require.NoError(t, err)
	return job
}

// callOf is the MPI call a call node's name starts with.
func callOf(name string) string {
	call, _, _ := strings.Cut(name, " at ")
	return call
}

func TestCallTree(t *testing.T) {
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			job := treeJob(t, tc)
			tree := NewCallTree(job)
			require.NotEmpty(t, tree.Nodes)
			assert.Equal(t, TreeNode{Kind: TreeProgram, Name: "halo", Parent: -1, File: "/opt/apps/halo"}, tree.Nodes[0])
			// Parents come first; siblings have distinct names.
			seen := map[string]bool{}
			for i, n := range tree.Nodes[1:] {
				i++
				require.GreaterOrEqual(t, n.Parent, 0, n.Name)
				require.Less(t, n.Parent, i, n.Name)
				assert.Equal(t, tree.Nodes[n.Parent].Depth+1, n.Depth)
				k := fmt.Sprint(n.Parent, "/", n.Name)
				assert.False(t, seen[k], "duplicate %s", k)
				seen[k] = true
				p := tree.Nodes[n.Parent].Kind
				assert.Contains(t, []TreeKind{TreeProgram, TreeLoop}, p, "only the program and loops have children")
				switch n.Kind {
				case TreeLoop:
					assert.Regexp(t, `^loop MPI_\w+ at `, n.Name)
				case TreeCall:
					assert.Equal(t, n.Call, callOf(n.Name))
					if n.Function != "" {
						assert.Contains(t, n.Name, fmt.Sprintf(" at %s halo.c:%d", n.Function, n.Line))
						assert.Equal(t, "/src/halo.c", n.File)
					}
				case TreeCompute:
					assert.Equal(t, ComputeName, n.Name)
				}
			}
			require.Len(t, tree.Blocks, len(job.Ranks))
			type sums struct{ time, calls, bytes int64 }
			perCall := map[string]*sums{}
			for bi, b := range tree.Blocks {
				r := job.Ranks[bi]
				g := &r.Graph
				assert.Equal(t, r.Rank.Rank, b.Rank)
				assert.Equal(t, r.Thread, b.Thread)
				var want sums
				wantCtr := make([]int64, len(job.Header.Counters))
				for _, n := range g.Nodes {
					want.time += n.Time.Total
					want.calls += n.Count
					want.bytes += n.Bytes.Total
				}
				for _, e := range g.Edges {
					want.time += e.Time.Total
					for k, c := range e.Counters {
						wantCtr[k] += c
					}
				}
				var got sums
				gotCtr := make([]int64, len(job.Header.Counters))
				at := map[int]int{}
				for k, v := range b.Values {
					if k > 0 {
						require.Greater(t, v.Node, b.Values[k-1].Node, "values by ascending node")
					}
					at[v.Node] = k
					n := tree.Nodes[v.Node]
					if p := n.Parent; p >= 0 {
						assert.Contains(t, at, p, "the parent of %s is there", n.Name)
					}
					got.time += v.Time
					got.calls += v.Calls
					got.bytes += v.Bytes
					for k, c := range v.Counters {
						gotCtr[k] += c
					}
					switch n.Kind {
					case TreeCall:
						c := perCall[n.Call]
						if c == nil {
							c = &sums{}
							perCall[n.Call] = c
						}
						c.time += v.Time
						c.calls += v.Calls
						c.bytes += v.Bytes
					case TreeCompute:
						assert.Zero(t, v.Calls)
					default:
						assert.Zero(t, v.Time, "%s has nothing of its own", n.Name)
						assert.Zero(t, v.Calls)
					}
				}
				assert.Equal(t, want, got, "%s: the tree adds up to the graph", r.Label)
				assert.Equal(t, g.NumEvents, got.calls)
				assert.Equal(t, wantCtr, gotCtr, "%s: counters", r.Label)
				inc := tree.Inclusive(&tree.Blocks[bi])
				assert.Equal(t, want.time, inc[0], "the root's inclusive time is the rank's")
				c := r.Collapsed
				if tc.noLoops {
					assert.Nil(t, c)
					for _, v := range b.Values {
						assert.LessOrEqual(t, tree.Nodes[v.Node].Depth, 1, "no loops: one level")
					}
					continue
				}
				require.NotNil(t, c)
				assert.Equal(t, c.Total, want.time)
				require.NotEmpty(t, c.Loops, "the job has loops")
				// A loop's inclusive time is its time; its compute node
				// holds its level's edges and back edges.
				loopTime := map[string]int64{}
				computeOf := map[string]int64{}
				for k, v := range b.Values {
					n := tree.Nodes[v.Node]
					switch n.Kind {
					case TreeLoop:
						loopTime[tree.PathName(v.Node)] = inc[k]
					case TreeCompute:
						parent := "top"
						if n.Parent > 0 {
							parent = tree.PathName(n.Parent)
						}
						computeOf[parent] = v.Time
					}
				}
				// A loop's path of names, from the outermost.
				pathOf := func(id int) string {
					var names []string
					for ; id > 0; id = c.Loop(id).Parent {
						names = append([]string{loopName(g, c.Loop(id))}, names...)
					}
					return strings.Join(names, "\n")
				}
				for id := range c.Levels {
					lv := &c.Levels[id]
					name := "top"
					if id > 0 {
						l := c.Loop(id)
						name = pathOf(id)
						assert.Equal(t, l.Stats.Time, loopTime[name], "%s %s", r.Label, l.Name)
					}
					assert.Equal(t, lv.EdgeTime+lv.BackTime, computeOf[name], "%s: compute of %s", r.Label, name)
				}
			}
			// Each call over the ranks is the job's summary of it.
			require.Len(t, perCall, len(job.Calls))
			for _, c := range job.Calls {
				require.Contains(t, perCall, c.Call)
				assert.Equal(t, sums{c.Time.Total, c.Count, c.Bytes}, *perCall[c.Call], c.Call)
			}
		})
	}
}

// TestCallTreeOrder: nodes follow the program: the program's first call
// is its first child, each level's compute node comes after its calls and
// loops.
func TestCallTreeOrder(t *testing.T) {
	job := treeJob(t, treeCases[0])
	tree := NewCallTree(job)
	r := job.Ranks[0]
	g := &r.Graph
	first := -1
	for i, n := range tree.Nodes {
		if n.Parent == 0 {
			first = i
			break
		}
	}
	require.Positive(t, first)
	c := r.Collapsed
	ln := c.Levels[0].Nodes[0]
	if ln.Loop > 0 {
		assert.Equal(t, loopName(g, c.Loop(ln.Loop)), tree.Nodes[first].Name)
	} else {
		assert.Equal(t, g.Nodes[ln.Node].Key.Call, tree.Nodes[first].Call)
	}
	// The first rank's nodes are made in its order.
	lastChild := map[int]int{}
	for _, v := range tree.Blocks[0].Values[1:] {
		lastChild[tree.Nodes[v.Node].Parent] = v.Node
	}
	computes := 0
	for _, v := range tree.Blocks[0].Values {
		if n := tree.Nodes[v.Node]; n.Kind == TreeCompute {
			computes++
			assert.Equal(t, v.Node, lastChild[n.Parent], "compute is the last child of %s", tree.Nodes[n.Parent].Name)
		}
	}
	assert.Positive(t, computes)
	assert.LessOrEqual(t, computes, len(c.Levels), "at most a compute node per level")
}

// PathName names a tree node by the names from the root's child to it, one
// a line.
func (t *CallTree) PathName(node int) string {
	var names []string
	for ; node > 0; node = t.Nodes[node].Parent {
		names = append([]string{t.Nodes[node].Name}, names...)
	}
	return strings.Join(names, "\n")
}
