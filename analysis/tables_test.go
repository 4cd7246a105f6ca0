package analysis

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// halo4 is the recorded 4-rank halo exchange of the report's tests: a 2x2
// grid of ranks, 100 iterations of two Irecv, two Send (256 B each), two
// Wait and an 8-byte Allreduce.
var halo4 = filepath.Join("..", "report", "testdata", "halo4.mpiflow")

// truthJob writes a generated job and returns its path with the calls of
// every rank as the generator made them.
func truthJob(t *testing.T, nranks int) (string, map[int][]flowgraph.Call) {
	t.Helper()
	calls := map[int][]flowgraph.Call{}
	h, ranks := flowgen.RunTruth(flowgen.Options{Seed: 11, Events: 2000, Depth: 3, Sites: 10, MaxIter: 8, Branchy: true}, nranks, 2,
		func(rank int, c flowgraph.Call) { calls[rank] = append(calls[rank], c) })
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path, calls
}

// The call sites sum the generated calls by call and site: counts, times,
// bytes and the ranks that made them.
func TestCallSitesAgainstTruth(t *testing.T) {
	in, truth := truthJob(t, 5)
	job, err := Load(in, Options{NoLoops: true, NoResolve: true, Ranks: map[int]bool{0: true, 2: true, 3: true, 4: true}})
	require.NoError(t, err)
	type acc struct {
		count, time, bytes int64
		ranks              map[int]bool
	}
	want := map[string]*acc{}
	for _, r := range []int{0, 2, 3, 4} {
		for _, c := range truth[r] {
			// Generated site i is at offset 0x1000+16i of /usr/bin/app.
			k := fmt.Sprintf("%s at app+%#x", c.Key.Call, 0x1000+16*c.Key.Site)
			a := want[k]
			if a == nil {
				a = &acc{ranks: map[int]bool{}}
				want[k] = a
			}
			a.count++
			a.time += c.Exit - c.Enter
			a.bytes += c.Bytes
			a.ranks[r] = true
		}
	}
	require.Len(t, job.CallSites, len(want))
	for i, s := range job.CallSites {
		a := want[s.Call+" at "+s.Site]
		require.NotNil(t, a, "%s at %s", s.Call, s.Site)
		assert.Equal(t, a.count, s.Count, s.Site)
		assert.Equal(t, a.time, s.Time.Total, s.Site)
		assert.Equal(t, a.bytes, s.Bytes, s.Site)
		assert.Equal(t, len(a.ranks), s.Ranks, s.Site)
		assert.Equal(t, a.time/a.count, s.Avg(), s.Site)
		assert.LessOrEqual(t, s.Time.Min, s.Time.Max)
		if i > 0 {
			assert.GreaterOrEqual(t, job.CallSites[i-1].Time.Total, s.Time.Total, "by descending time")
		}
	}
	// Every generated site is called by every selected rank here.
	assert.Equal(t, "0,2-4", job.CallSites[0].RankList)
}

// The matrix counts the generated sends (MPI_Send, MPI_Isend) by sender
// and destination with their bytes; receives and collectives are outside.
func TestCommMatrixAgainstTruth(t *testing.T) {
	in, truth := truthJob(t, 6)
	job, err := Load(in, Options{NoLoops: true, NoResolve: true})
	require.NoError(t, err)
	want := map[[2]int]Traffic{}
	var other int64
	for r, cs := range truth {
		for _, c := range cs {
			if c.Key.Call != "MPI_Send" && c.Key.Call != "MPI_Isend" {
				other += c.Bytes
				continue
			}
			w := want[[2]int{r, c.Partner}]
			w.Count++
			w.Bytes += c.Bytes
			want[[2]int{r, c.Partner}] = w
		}
	}
	m := job.Comm
	require.NotNil(t, m)
	assert.Equal(t, 6, m.Size)
	assert.Equal(t, 6, m.SelectedRanks)
	require.Len(t, m.Cells, len(want))
	for _, c := range m.Cells {
		assert.Equal(t, want[[2]int{c.From, c.To}], c.Traffic, "%d -> %d", c.From, c.To)
	}
	assert.False(t, m.Estimated, "one size per generated call site")
	assert.Zero(t, m.Unattributed)
	var sum int64
	for _, o := range m.Other {
		assert.NotContains(t, []string{"MPI_Send", "MPI_Isend"}, o.Call)
		sum += o.Bytes
	}
	assert.Equal(t, other, sum)
	for i := 1; i < len(m.Cells); i++ {
		a, b := m.Cells[i-1], m.Cells[i]
		assert.True(t, a.From < b.From || a.From == b.From && a.To < b.To, "cells in order")
	}
	// Blocks of 3 ranks add up to the whole.
	blocks := m.Blocks(2, func(r int) int { return r / 3 })
	var bt Traffic
	for _, row := range blocks {
		for _, c := range row {
			bt.Count += c.Count
			bt.Bytes += c.Bytes
		}
	}
	assert.Equal(t, m.Total(), bt)
}

// buildRank records calls into a rank's graph.
func buildRank(rank int, calls []flowgraph.Call) *flowgraph.Rank {
	b := flowgraph.NewBuilder(0, 0)
	site := b.Site(flowgraph.CallSite{Addr: 0x1000, Object: "/bin/app", Offset: 0x10})
	t := int64(0)
	for _, c := range calls {
		c.Key.Site, c.Key.Comm = site, -1
		if c.Key.Partner == 0 {
			c.Key.Partner = -1
		}
		c.Enter, c.Exit = t+10, t+20
		t += 20
		b.Add(c)
	}
	return &flowgraph.Rank{Rank: rank, Complete: true, Graph: b.Graph()}
}

// How sends with several sizes, Sendrecv, missing partners and partners
// in the node key make cells.
func TestCommMatrixRules(t *testing.T) {
	send := func(call string, bytes int64, partner int) flowgraph.Call {
		return flowgraph.Call{Key: flowgraph.NodeKey{Call: call}, Bytes: bytes, Partner: partner}
	}
	tests := []struct {
		name      string
		calls     []flowgraph.Call
		cells     []CommCell
		unattr    Traffic
		estimated bool
	}{
		{"one size, two partners: exact", []flowgraph.Call{send("MPI_Send", 100, 1), send("MPI_Send", 100, 2), send("MPI_Send", 100, 1)},
			[]CommCell{{0, 1, Traffic{2, 200}}, {0, 2, Traffic{1, 100}}}, Traffic{}, false},
		{"two sizes, one partner: exact", []flowgraph.Call{send("MPI_Isend_c", 100, 3), send("MPI_Isend_c", 300, 3)},
			[]CommCell{{0, 3, Traffic{2, 400}}}, Traffic{}, false},
		{"two sizes, two partners: mean size", []flowgraph.Call{send("MPI_Ssend", 100, 1), send("MPI_Ssend", 300, 2)},
			[]CommCell{{0, 1, Traffic{1, 200}}, {0, 2, Traffic{1, 200}}}, Traffic{}, true},
		{"sendrecv: half the bytes", []flowgraph.Call{send("MPI_Sendrecv", 200, 1)},
			[]CommCell{{0, 1, Traffic{1, 100}}}, Traffic{}, true},
		{"MPI_PROC_NULL: no partner", []flowgraph.Call{send("MPI_Send", 8, -1), send("MPI_Send", 8, 1)},
			[]CommCell{{0, 1, Traffic{1, 8}}}, Traffic{1, 8}, false},
		{"receives and collectives are not sends", []flowgraph.Call{send("MPI_Recv", 8, 1), send("MPI_Allreduce", 8, 1), send("MPI_Send_init", 8, 1)},
			[]CommCell{}, Traffic{}, false},
		{"partner in the key", []flowgraph.Call{
			{Key: flowgraph.NodeKey{Call: "MPI_Bsend", Partner: 2}, Bytes: 10, Partner: 2},
			{Key: flowgraph.NodeKey{Call: "MPI_Bsend", Partner: 1}, Bytes: 20, Partner: 1}},
			[]CommCell{{0, 1, Traffic{1, 20}}, {0, 2, Traffic{1, 10}}}, Traffic{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a commAcc
			a.add(buildRank(0, tt.calls))
			m := a.finish(4)
			assert.Equal(t, tt.cells, m.Cells)
			assert.Equal(t, tt.unattr, m.Unattributed)
			assert.Equal(t, tt.estimated, m.Estimated)
			assert.Equal(t, 4, m.Size)
		})
	}
	// More partners than a node records: the rest are unattributed.
	var calls []flowgraph.Call
	for p := range flowgraph.MaxPartners + 6 {
		calls = append(calls, send("MPI_Send", 4, p+1))
	}
	var a commAcc
	a.add(buildRank(0, calls))
	m := a.finish(2)
	assert.Len(t, m.Cells, flowgraph.MaxPartners)
	assert.Equal(t, Traffic{6, 24}, m.Unattributed)
	assert.Equal(t, flowgraph.MaxPartners+1, m.Size, "the largest partner seen")
}

// The recorded halo exchange: each rank of the 2x2 grid sends 100
// messages of 256 B to each of its two neighbours.
func TestHaloTables(t *testing.T) {
	job, err := Load(halo4, Options{NoLoops: true})
	require.NoError(t, err)
	m := job.Comm
	var cells []string
	for _, c := range m.Cells {
		cells = append(cells, fmt.Sprintf("%d->%d", c.From, c.To))
		assert.Equal(t, Traffic{100, 25600}, c.Traffic)
	}
	assert.Equal(t, []string{"0->1", "0->2", "1->0", "1->3", "2->0", "2->3", "3->1", "3->2"}, cells)
	assert.Equal(t, []CallTraffic{{"MPI_Send", Traffic{800, 204800}}}, m.Sent)
	require.Len(t, m.Other, 2)
	assert.Equal(t, CallTraffic{"MPI_Irecv", Traffic{800, 204800}}, m.Other[0])
	assert.Equal(t, CallTraffic{"MPI_Allreduce", Traffic{400, 3200}}, m.Other[1])
	assert.False(t, m.Estimated)

	// Sites: the two Send and two Irecv of an iteration are each one
	// call site in a loop over the neighbours.
	bySite := map[string]int64{}
	for _, s := range job.CallSites {
		bySite[s.Call] += s.Count
		assert.Equal(t, 4, s.Ranks, "%s at %s", s.Call, s.Site)
		assert.Equal(t, "0-3", s.RankList)
	}
	for _, c := range job.Calls {
		assert.Equal(t, c.Count, bySite[c.Call], c.Call)
	}

	// Sizes: the calls that move data, at their message size.
	var sizes []string
	for _, cs := range job.Sizes {
		for _, b := range cs.Buckets {
			sizes = append(sizes, fmt.Sprintf("%s %d B x%d", cs.Call, b.Max, b.Count))
		}
	}
	assert.Equal(t, []string{"MPI_Allreduce 8 B x400", "MPI_Send 256 B x800", "MPI_Irecv 256 B x800"}, sizes)

	// The call table: MPI_Init outside the shares, which add up to 100 %.
	var share float64
	for _, r := range job.CallTable() {
		if r.Call == "MPI_Init" {
			assert.True(t, r.StartUp)
			assert.Zero(t, r.MPIPct)
			continue
		}
		assert.False(t, r.StartUp)
		assert.Equal(t, r.Time.Total/r.Count, r.Avg)
		assert.Less(t, r.WallPct, r.MPIPct)
		share += r.MPIPct
	}
	assert.InDelta(t, 100, share, 1e-9)
}

func TestSizeBucket(t *testing.T) {
	for _, tt := range []struct {
		mean float64
		want int64
	}{{0, 0}, {0.5, 1}, {1, 1}, {1.5, 2}, {2, 2}, {3, 4}, {4, 4}, {4.2, 8}, {256, 256}, {257, 512}, {1e30, 1 << 62}} {
		assert.Equal(t, tt.want, sizeBucket(tt.mean), "mean %g", tt.mean)
	}
}
