package analysis

import (
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// BenchmarkManySites loads a job of 2 ranks whose every call is at a call
// site of its own, 10^6 of them (a generated program; issue 40), as
// `mpiflow loops` loads it, and reports the peak of the heap and the live
// heap the job holds once loaded: the memory that grows with the call
// sites, not with the events; the ranks' graphs, hundreds of MB, are
// dropped once read (Options.NoGraphs).
func BenchmarkManySites(b *testing.B) {
	const sites = 1_000_000
	var ranks []*flowgraph.Rank
	for r := range 2 {
		bl := flowgraph.NewBuilder(r, 0)
		now := int64(0)
		for i := range sites {
			site := bl.Site(flowgraph.CallSite{Addr: uint64(0x401000 + 8*i), Object: "/bin/sites", Offset: uint64(0x1000 + 8*i)})
			bl.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Barrier", Site: site, Partner: -1, Comm: -1},
				Enter: now, Exit: now + 500 + int64(i%7), Partner: -1})
			now += 1000
		}
		g := bl.Graph()
		ranks = append(ranks, &flowgraph.Rank{Rank: r, Graph: g, Complete: true})
	}
	h := flowgraph.Header{NumRanks: 2, Wallclock: sites * 1000}
	path := filepath.Join(b.TempDir(), "sites.mpiflow")
	require.NoError(b, flowgraph.WriteFile(path, h, ranks))
	ranks = nil
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak.Store(max(peak.Load(), ms.HeapInuse))
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		job, err := Load(path, Options{NoSequences: true, NoResolve: true, NoGraphs: true, NoSiteTable: true})
		close(stop)
		<-done
		require.NoError(b, err)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		require.Len(b, job.Ranks[0].Levels[0].Nodes, MaxLevelNodes)
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MB")
	}
}
