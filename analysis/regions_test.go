package analysis

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// regionCall is one call of a rank for regionRank: an MPI call, or
// MPI_Pcontrol entering (level 1) or leaving (-1) region.
type regionCall struct {
	call   string
	level  int
	region string
	enter  int64
	exit   int64
}

// regionCounters are the counters of regionRank: instructions, cycles and
// floating-point operations at 2, 1 and 3 per ns.
var regionCounters = []string{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS"}

func countersAt(t int64) []int64 { return []int64{2 * t, t, 3 * t} }

// regionRank records calls into a rank, each MPI_Pcontrol of a level and
// region at a site of its own, as the preload library records them.
func regionRank(rank int, calls []regionCall) *flowgraph.Rank {
	b := flowgraph.NewBuilder(len(regionCounters), 0)
	sites := map[[2]string]int{}
	for _, c := range calls {
		key := [2]string{c.call, c.region + string(rune('0'+c.level+1))}
		s, ok := sites[key]
		if !ok {
			s = b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + len(sites)), Region: c.region, Level: c.level})
			sites[key] = s
		}
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: c.call, Site: s, Partner: -1, Comm: -1}, Enter: c.enter, Exit: c.exit, Partner: -1,
			CountersEnter: countersAt(c.enter), CountersExit: countersAt(c.exit)})
	}
	return &flowgraph.Rank{Rank: rank, Complete: true, Graph: b.Graph()}
}

// solveStep is one step of a program of regions: "solve" holds "halo"
// (a send) and an Allreduce; t is its start.
func solveStep(t int64, allreduce int64) []regionCall {
	return []regionCall{
		{pcontrol, 1, "solve", t, t + 1},
		{pcontrol, 1, "halo", t + 10, t + 11},
		{"MPI_Send", 0, "", t + 20, t + 30},
		{pcontrol, -1, "halo", t + 40, t + 41},
		{"MPI_Allreduce", 0, "", t + 50, t + 50 + allreduce},
		{pcontrol, -1, "solve", t + 90 + allreduce, t + 91 + allreduce},
	}
}

func regionProgram(allreduce int64, unclosed bool) []regionCall {
	calls := []regionCall{{"MPI_Init", 0, "", 0, 5}}
	calls = append(calls, solveStep(100, allreduce)...)
	calls = append(calls, solveStep(1000, allreduce)...)
	// mpiP's MPI_Pcontrol(0): no region.
	calls = append(calls, regionCall{pcontrol, 0, "", 2000, 2001})
	if unclosed {
		calls = append(calls, regionCall{pcontrol, 1, "io", 2100, 2101}, regionCall{"MPI_Barrier", 0, "", 2200, 2300})
	}
	return append(calls, regionCall{"MPI_Finalize", 0, "", 3000, 3010})
}

func TestRegions(t *testing.T) {
	h := flowgraph.Header{Version: flowgraph.FormatVersion, NumRanks: 2, KeyFields: []string{flowgraph.KeyCall, flowgraph.KeySite},
		Counters: regionCounters}
	ranks := []*flowgraph.Rank{regionRank(0, regionProgram(10, true)), regionRank(1, regionProgram(30, false))}
	path := filepath.Join(t.TempDir(), "regions.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	for name, opt := range map[string]Options{
		"stats":  {NoLoops: true, NoResolve: true, NoSequences: true}, // skeleton, read again for the regions
		"loops":  {NoResolve: true, NoSequences: true},
		"report": {NoResolve: true},
	} {
		t.Run(name, func(t *testing.T) {
			job, err := Load(path, opt)
			require.NoError(t, err)
			// In tree order, siblings by time: io (909 ns) before solve.
			require.Len(t, job.Regions, 3)
			io, solve, halo := job.Regions[0], job.Regions[1], job.Regions[2]
			assert.Equal(t, []string{"io"}, io.Path)
			assert.Equal(t, []string{"solve"}, solve.Path)
			assert.Equal(t, []string{"solve", "halo"}, halo.Path, "entered inside solve")
			assert.Equal(t, "solve > halo", halo.Label())

			// solve: from the end of its entry to the start of its exit,
			// 2 steps a rank: 89+10 on rank 0, 89+30 on rank 1.
			assert.EqualValues(t, 4, solve.Entries)
			assert.EqualValues(t, 2*99+2*119, solve.Wall)
			assert.EqualValues(t, 2*99, solve.WallMin)
			assert.Equal(t, 0, solve.MinRank)
			assert.EqualValues(t, 2*119, solve.WallMax)
			assert.Equal(t, 1, solve.MaxRank)
			// Its MPI: the Send and the Allreduce, not halo's MPI_Pcontrol.
			assert.EqualValues(t, 8, solve.Calls)
			assert.EqualValues(t, 2*(10+10)+2*(10+30), solve.MPI)
			assert.Equal(t, []RegionCall{{"MPI_Allreduce", 4, 80}, {"MPI_Send", 4, 40}}, solve.ByCall)
			assert.InDelta(t, 100*120.0/436, solve.MPIPercent(), 1e-9)
			assert.Equal(t, "0-1", solve.RankList)
			// Its compute phases, 77 ns a step (its wall time but the MPI
			// calls and halo's two MPI_Pcontrol), with their counters.
			assert.EqualValues(t, 4*77, solve.Compute)
			assert.Equal(t, []int64{2 * 308, 308, 3 * 308}, solve.Counters)
			assert.InDelta(t, 2, solve.IPC, 1e-9)
			assert.InDelta(t, 3, solve.Gflops, 1e-9)

			assert.EqualValues(t, 4, halo.Entries)
			assert.EqualValues(t, 4*29, halo.Wall)
			assert.EqualValues(t, 4*10, halo.MPI)
			assert.Zero(t, halo.Unclosed)

			// io is never left: counted to the rank's last event.
			assert.Equal(t, 1, io.Ranks)
			assert.Equal(t, "0", io.RankList)
			assert.EqualValues(t, 1, io.Unclosed)
			assert.EqualValues(t, 3010-2101, io.Wall)
			assert.EqualValues(t, 100+10, io.MPI, "the Barrier and the Finalize")
		})
	}
}

func TestRegionsNesting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls []regionCall
		want  map[string][2]int64 // label: wall, unclosed
	}{
		{"leaving the outer leaves the inner", []regionCall{
			{pcontrol, 1, "a", 0, 1}, {pcontrol, 1, "b", 10, 11}, {pcontrol, -1, "a", 50, 51}, {"MPI_Barrier", 0, "", 60, 70},
		}, map[string][2]int64{"a": {49, 0}, "a > b": {39, 1}}},
		{"leaving what was not entered changes nothing", []regionCall{
			{pcontrol, 1, "a", 0, 1}, {pcontrol, -1, "x", 10, 11}, {pcontrol, -1, "a", 20, 21},
		}, map[string][2]int64{"a": {19, 0}}},
		{"a region entered twice nests in itself", []regionCall{
			{pcontrol, 1, "a", 0, 1}, {pcontrol, 1, "a", 10, 11}, {pcontrol, -1, "a", 20, 21}, {pcontrol, -1, "a", 30, 31},
		}, map[string][2]int64{"a": {29, 0}, "a > a": {9, 0}}},
		{"a name not read", []regionCall{
			{pcontrol, 1, "", 0, 1}, {pcontrol, -1, "", 10, 11},
		}, map[string][2]int64{"(unnamed)": {9, 0}}},
		{"no region", []regionCall{
			{"MPI_Init", 0, "", 0, 1}, {pcontrol, 0, "", 10, 11}, {pcontrol, 2, "x", 20, 21},
		}, map[string][2]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := regionRank(0, tc.calls)
			rs, err := rankRegions(&r.Graph)
			require.NoError(t, err)
			var acc regionAcc
			acc.add(0, rs)
			got := map[string][2]int64{}
			for _, g := range acc.sorted() {
				got[g.Label()] = [2]int64{g.Wall, g.Unclosed}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
