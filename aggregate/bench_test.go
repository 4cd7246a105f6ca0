package aggregate

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"mpiflow/flowgraph"

	"github.com/stretchr/testify/require"
)

// repeatSource serves the same events for every resource, so building the
// model is measured without generating events.
type repeatSource struct {
	MemSource
	evs []StateEvent
}

func (s *repeatSource) Open(r int) (Reader, error) { return &memReader{evs: s.evs}, nil }

// Building the microscopic model, on one core: events of 100 ns to 10 us
// over 30 slices, 10 states.
func BenchmarkBuildModel(b *testing.B) {
	const nres, perRes = 8, 1 << 20
	evs := make([]StateEvent, perRes)
	t := int64(0)
	for i := range evs {
		d := int64(100 + (i*7919)%10_000)
		evs[i] = StateEvent{State: i % 10, Start: t, End: t + d}
		t += d
	}
	src := &repeatSource{evs: evs, MemSource: MemSource{
		Res: resources(nres), StateNames: make([]string, 10), Start: 0, End: t,
	}}
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		_, err := Build(src, 30, 1)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(nres*perRes)*float64(b.N)/(cpuTime()-cpu0).Seconds()/1e6, "Mevents/cpu-s")
	b.ReportMetric(float64(nres*perRes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

// The whole path from an mpiflow file: reading, reconstructing the events
// (flowgraph) and building the model, on all cores.
func BenchmarkFlowToModel(b *testing.B) {
	path, _, ranks := writeJob(b, 16, 200_000)
	var events int64
	for _, r := range ranks {
		events += r.Graph.NumEvents
	}
	b.ResetTimer()
	for b.Loop() {
		src := fileSource(b, path, FlowOptions{})
		_, err := Build(src, 30, 0)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

// The path Ocelotl took 2,911 s to read and 244 s to model: a trace of
// 700 processes and about 210 million events, from the mpiflow file to
// the best partition (30 slices, rank -> host -> job). Generating the file
// takes a few minutes: run it alone, with -benchtime=1x.
func BenchmarkOcelotlScale(b *testing.B) {
	const nranks, perRank = 700, 300_000
	path, _, ranks := writeJob(b, nranks, perRank)
	var events int64
	for _, r := range ranks {
		events += r.Graph.NumEvents
	}
	ranks = nil
	runtime.GC()
	b.ResetTimer()
	cpu0 := cpuTime()
	var model, total time.Duration
	for b.Loop() {
		t0 := time.Now()
		src := fileSource(b, path, FlowOptions{Group: true})
		m, err := Build(src, 30, 0)
		require.NoError(b, err)
		model += time.Since(t0)
		h, err := NewHierarchy(src.DefaultSpec(), m.Resources)
		require.NoError(b, err)
		a, err := New(m, h, Options{})
		require.NoError(b, err)
		_, err = a.Best(0.5)
		require.NoError(b, err)
		total += time.Since(t0)
	}
	b.ReportMetric(float64(events)/1e6, "Mevents")
	b.ReportMetric(model.Seconds()/float64(b.N), "read+model-s")
	b.ReportMetric(total.Seconds()/float64(b.N), "total-s")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// peakHeap samples the heap in use while f runs and returns its maximum.
func peakHeap(f func()) uint64 {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// hostModel is a random model of nres resources, 16 per host.
func hostModel(b *testing.B, nres, nt, nx int) (*Model, *Hierarchy) {
	m := randomModel(b, 1, nres, nt, nx)
	h, err := NewHierarchy(HostSpec("job", m.Resources, func(r int) string {
		return fmt.Sprintf("host%d", r/16)
	}), m.Resources)
	require.NoError(b, err)
	return m, h
}

func benchBest(b *testing.B, nres, nt, nx int) {
	m, h := hostModel(b, nres, nt, nx)
	runtime.GC()
	b.ResetTimer()
	var aggs int
	cpu0 := cpuTime()
	peak := peakHeap(func() {
		for b.Loop() {
			a, err := New(m, h, Options{})
			require.NoError(b, err)
			part, err := a.Best(0.5)
			require.NoError(b, err)
			aggs = len(part.Aggregates)
		}
	})
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(len(m.Dur)*8)/(1<<20), "model-MB")
	b.ReportMetric(float64(aggs), "aggregates")
}

// Best partition of 700 resources x 30 slices x 10 states (target < 0.5 s).
func BenchmarkBest700x30(b *testing.B) { benchBest(b, 700, 30, 10) }

// Best partition of 10,000 resources x 100 slices x 10 states (target
// < 20 s).
func BenchmarkBest10000x100(b *testing.B) { benchBest(b, 10_000, 100, 10) }

// Significant p values of 700 x 30 x 10.
func BenchmarkPValues700x30(b *testing.B) {
	m, h := hostModel(b, 700, 30, 10)
	b.ResetTimer()
	var n int
	for b.Loop() {
		a, err := New(m, h, Options{})
		require.NoError(b, err)
		pv, _, err := a.PValues(0)
		require.NoError(b, err)
		n = len(pv)
	}
	b.ReportMetric(float64(n), "pvalues")
}

// pollRank is a rank of testdata/apps/poll.c with the given number of
// passes (an MPI_Test every pass, an MPI_Testany every third), recorded
// with the default timing budget.
func pollRank(passes int) *flowgraph.Rank {
	b := flowgraph.NewBuilder(0, 0)
	var t int64
	call := func(name string, d int64) {
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: name, Site: -1}, Enter: t, Exit: t + d, Partner: -1})
		t += d + 40
	}
	for _, c := range []string{"MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Irecv", "MPI_Irecv"} {
		call(c, 1000)
	}
	for i := range passes {
		call("MPI_Test", 100+int64(i%7))
		if i%3 == 2 {
			call("MPI_Testany", 150)
		}
	}
	for _, c := range []string{"MPI_Send", "MPI_Send", "MPI_Waitall", "MPI_Reduce", "MPI_Finalize"} {
		call(c, 1000)
	}
	return &flowgraph.Rank{Graph: b.Graph()}
}

// BenchmarkModelPoll builds the model of a polling loop of 10^3 and 10^6
// passes, 30 slices, by timing interval, whose cost follows the intervals
// (a bounded number), and from the events as before, for comparison.
func BenchmarkModelPoll(b *testing.B) {
	for _, passes := range []int{1e3, 1e6} {
		src, err := NewRankSource(nil, []*flowgraph.Rank{pollRank(passes)}, FlowOptions{})
		require.NoError(b, err)
		for _, s := range []struct {
			name string
			src  Source
		}{{"intervals", src}, {"events", eventsOnly{src}}} {
			b.Run(fmt.Sprintf("%d/%s", passes, s.name), func(b *testing.B) {
				for b.Loop() {
					_, err := Build(s.src, DefaultSlices, 1)
					require.NoError(b, err)
				}
			})
		}
	}
}
