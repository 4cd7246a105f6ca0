package aggregate

import (
	"errors"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCallGroup(t *testing.T) {
	tests := []struct{ call, want string }{
		{"MPI_Send", GroupP2P},
		{"MPI_Irecv", GroupP2P},
		{"MPI_Sendrecv", GroupP2P},
		{"MPI_Put", GroupP2P},
		{"MPI_Allreduce", GroupCollective},
		{"MPI_Iallreduce", GroupCollective},
		{"MPI_Ibarrier", GroupCollective},
		{"MPI_Reduce_scatter_block", GroupCollective},
		{"MPI_Wait", GroupWait},
		{"MPI_Waitall", GroupWait},
		{"MPI_Testany", GroupWait},
		{"MPI_Win_fence", GroupWait},
		{"MPI_File_write_at_all", GroupIO},
		{"MPI_Init", GroupOther},
		{"MPI_Comm_rank", GroupOther},
		{"MPI_Isomething", GroupOther},
		{"MPI_Send_init", GroupP2P},
		{"MPI_Recv_c", GroupP2P},
		{"MPI_Isendrecv", GroupP2P},
		{"MPI_Isendrecv_replace_c", GroupP2P},
		{"MPI_Psend_init", GroupP2P},
		{"MPI_Pready_list", GroupP2P},
		{"MPI_Parrived", GroupWait},
		{"MPI_Allreduce_init", GroupCollective},
		{"MPI_Neighbor_alltoallw_init_c", GroupCollective},
		{"MPI_Ialltoallv_c", GroupCollective},
		{"MPI_File_write_at_all_c", GroupIO},
		{"MPI_Comm_create_from_group", GroupOther},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, CallGroup(tt.call), tt.call)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// writeJob writes a generated job of nranks ranks, 2 per host.
func writeJob(t testing.TB, nranks int, events int64) (string, flowgraph.Header, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: events, Anchors: 64}, nranks, 2)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path, h, ranks
}

// fileSource is the state trace of every rank of the file at path, as
// mpiflow aggregate reads it.
func fileSource(t testing.TB, path string, opt FlowOptions) *RankSource {
	t.Helper()
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	src, err := NewRankSource(&f.Header, readRanks(t, f.ReadRank, len(f.Index)), opt)
	require.NoError(t, err)
	return src
}

// readRanks reads blocks 0 to n-1 with read.
func readRanks(t testing.TB, read func(i int) (*flowgraph.Rank, error), n int) []*flowgraph.Rank {
	t.Helper()
	ranks := make([]*flowgraph.Rank, n)
	for i := range ranks {
		var err error
		ranks[i], err = read(i)
		require.NoError(t, err)
	}
	return ranks
}

// TestRankSourceLoad: ranks without their sequences, read whole when their
// events are, give the model of the ranks read whole.
func TestRankSourceLoad(t *testing.T) {
	path, _, _ := writeJob(t, 4, 3000)
	want, err := Build(fileSource(t, path, FlowOptions{}), 13, 2)
	require.NoError(t, err)
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	ranks := readRanks(t, f.Skeleton, len(f.Index))
	var loads atomic.Int64
	load := func(i int) (*flowgraph.Rank, error) {
		loads.Add(1)
		return f.ReadRank(i)
	}
	src, err := NewRankSource(&f.Header, ranks, FlowOptions{Load: load})
	require.NoError(t, err)
	got, err := Build(src, 13, 2)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, int64(len(ranks)), loads.Load(), "each rank read once")

	// Several windows at once: each model is that of its window alone,
	// and each rank is still read once. The event source (not a
	// RankSource) gives the same.
	start, end := src.Span()
	mid := (start + end) / 2
	wins := []Window{{start, end, 13}, {mid, end, 7}, {start + 1, mid, 40}}
	loads.Store(0)
	ms, err := BuildWindows(src, wins, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(len(ranks)), loads.Load(), "each rank read once for all windows")
	events, err := BuildWindows(eventsOnly{src}, wins, 1)
	require.NoError(t, err)
	require.Len(t, ms, len(wins))
	for i, w := range wins {
		one, err := BuildWindow(fileSource(t, path, FlowOptions{}), w.Start, w.End, w.Slices, 1)
		require.NoError(t, err)
		assert.Equal(t, one, ms[i], "window %d", i)
		assert.Equal(t, one.Dur, events[i].Dur, "window %d read through events", i)
	}
}

// The model of a file keeps every ns: per rank, Compute holds the edges'
// total time and the calls the nodes' total time, whatever the slicing.
func TestRankSourceKeepsTime(t *testing.T) {
	path, _, ranks := writeJob(t, 4, 3000)
	kept := ranks[0].Graph.Nodes[len(ranks[0].Graph.Nodes)-1].Key.Call
	calls, groups, keep := map[string]bool{}, map[string]bool{}, map[string]bool{kept: true}
	for _, r := range ranks {
		for _, nd := range r.Graph.Nodes {
			calls[nd.Key.Call] = true
			groups[CallGroup(nd.Key.Call)] = true
			if nd.Key.Call != kept {
				keep[CallGroup(nd.Key.Call)] = true
			}
		}
	}
	for _, opt := range []FlowOptions{{}, {Group: true}, {Group: true, Keep: map[string]bool{kept: true}}} {
		src := fileSource(t, path, opt)
		assert.Equal(t, ComputeState, src.States()[0])
		want := calls
		switch {
		case opt.Keep != nil:
			want = keep // the kept call and the groups of the others
		case opt.Group:
			want = groups
		}
		assert.ElementsMatch(t, keys(want), src.States()[1:])
		m, err := Build(src, 17, 2)
		require.NoError(t, err)
		for i, r := range ranks {
			var calls, compute, keptTime int64
			for _, nd := range r.Graph.Nodes {
				calls += nd.Time.Total
				if nd.Key.Call == kept {
					keptTime += nd.Time.Total
				}
			}
			for _, e := range r.Graph.Edges {
				compute += e.Time.Total
			}
			var gotCalls, gotCompute, gotKept int64
			for s := 0; s < m.Slices(); s++ {
				for x, d := range m.Cell(i, s) {
					if x == 0 {
						gotCompute += d
					} else {
						gotCalls += d
					}
					if src.States()[x] == kept {
						gotKept += d
					}
				}
			}
			assert.Equal(t, compute, gotCompute, "rank %d compute", i)
			assert.Equal(t, calls, gotCalls, "rank %d calls", i)
			if !opt.Group || opt.Keep != nil {
				assert.Equal(t, keptTime, gotKept, "rank %d: %s", i, kept)
			}
		}
	}
}

func TestRankSourceDefaultHierarchy(t *testing.T) {
	path, hdr, _ := writeJob(t, 6, 500)
	src := fileSource(t, path, FlowOptions{})
	h, err := NewHierarchy(src.DefaultSpec(), src.Resources())
	require.NoError(t, err)
	// job -> 3 hosts of 2 ranks.
	root := h.Nodes[0]
	assert.Equal(t, hdr.JobID, root.Name)
	require.Len(t, root.Children, 3)
	for k, c := range root.Children {
		assert.Equal(t, hdr.Hosts[2*k], h.Nodes[c].Name)
		assert.Len(t, h.Nodes[c].Children, 2)
	}
	m, err := Build(src, 10, 0)
	require.NoError(t, err)
	a, err := New(m, h, Options{})
	require.NoError(t, err)
	part, err := a.Best(1)
	require.NoError(t, err)
	require.Len(t, part.Aggregates, 1)
	ag := part.Aggregates[0]
	assert.Equal(t, hdr.JobID, ag.Path)
	start, end := src.Span()
	assert.InDelta(t, float64(start)/1e9, ag.Start, 1e-12)
	assert.InDelta(t, float64(end)/1e9, ag.End, 1e-12)
	var sum float64
	for _, p := range ag.Proportions {
		sum += p
	}
	// Ranks do not all last the whole span: at most 1, and mostly busy.
	assert.LessOrEqual(t, sum, 1+1e-9)
	assert.Greater(t, sum, 0.5)
}

// A rank recorded by two threads is two resources under a "rank N" node.
func TestRankSourceThreads(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 4, Events: 300}, 2, 2)
	th := *ranks[0]
	th.Thread = 1
	ranks = []*flowgraph.Rank{ranks[0], &th, ranks[1]}
	path := filepath.Join(t.TempDir(), "threads.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	src := fileSource(t, path, FlowOptions{})
	assert.Equal(t, []Resource{{"rank 0 thread 0", 0}, {"rank 0 thread 1", 0}, {"rank 1", 1}}, src.Resources())
	hier, err := NewHierarchy(src.DefaultSpec(), src.Resources())
	require.NoError(t, err)
	var paths []string
	for i, n := range hier.Nodes {
		if n.Resource >= 0 {
			paths = append(paths, hier.Path(i))
		}
	}
	host := h.Hosts[0]
	assert.Equal(t, []string{
		"gen/" + host + "/rank 0/rank 0 thread 0",
		"gen/" + host + "/rank 0/rank 0 thread 1",
		"gen/" + host + "/rank 1",
	}, paths)
	m, err := Build(src, 5, 0)
	require.NoError(t, err)
	// Both threads hold the same events.
	for s := 0; s < 5; s++ {
		assert.Equal(t, m.Cell(0, s), m.Cell(1, s))
	}
}

func TestRankSourceBadInput(t *testing.T) {
	_, err := NewRankSource(nil, nil, FlowOptions{})
	assert.Error(t, err)
	_, ranks := flowgen.Run(flowgen.Options{Seed: 6, Events: 50}, 2, 1)
	rs, err := NewRankSource(nil, ranks, FlowOptions{})
	require.NoError(t, err)
	assert.Equal(t, "job", rs.DefaultSpec().Name)
	_, err = rs.Open(2)
	assert.Error(t, err)
	_, err = rs.Open(-1)
	assert.Error(t, err)
}

// sliceEvents is an EventSource over events held in memory.
type sliceEvents struct {
	evs []flowgraph.Event
	cur flowgraph.Event
}

func (s *sliceEvents) Next() bool {
	if len(s.evs) == 0 {
		return false
	}
	s.cur, s.evs = s.evs[0], s.evs[1:]
	return true
}
func (s *sliceEvents) Event() flowgraph.Event { return s.cur }
func (s *sliceEvents) Err() error             { return nil }

// readAll reads every state event of a reader.
func readAll(t *testing.T, rd Reader) ([]StateEvent, error) {
	t.Helper()
	var out []StateEvent
	buf := make([]StateEvent, 7)
	for {
		n, err := rd.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
	}
}

// An EventReader over the graph's own events reads what Open reads; a node
// the graph lacks is an error.
func TestEventReader(t *testing.T) {
	_, ranks := flowgen.Run(flowgen.Options{Seed: 8, Events: 200}, 2, 1)
	rs, err := NewRankSource(nil, ranks, FlowOptions{})
	require.NoError(t, err)
	var evs []flowgraph.Event
	it := ranks[1].Graph.Events()
	for it.Next() {
		evs = append(evs, it.Event())
	}
	require.NoError(t, it.Err())

	rd, err := rs.Open(1)
	require.NoError(t, err)
	want, err := readAll(t, rd)
	require.NoError(t, err)
	rd, err = rs.EventReader(1, ranks[1], &sliceEvents{evs: evs})
	require.NoError(t, err)
	got, err := readAll(t, rd)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	bad := append([]flowgraph.Event(nil), evs...)
	bad[3].Node = len(ranks[1].Graph.Nodes)
	rd, err = rs.EventReader(1, ranks[1], &sliceEvents{evs: bad})
	require.NoError(t, err)
	_, err = readAll(t, rd)
	assert.ErrorContains(t, err, "event 3: node")
}
