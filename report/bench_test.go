package report

import (
	"bytes"
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
)

// BenchmarkReport10000 analyzes and writes the report of a generated
// 10,000-rank job (1,000 events per rank, 2 ranks per host), as `mpiflow
// report` does (without holding the ranks' sequences); the target is at
// most 60 s and 4 GB. It reports the process's peak resident memory,
// which includes generating the job. Ranks of a realistic size and shape
// are `make bench-scale`'s (scripts/bench-scale.sh), the scale benchmark
// of record.
func BenchmarkReport10000(b *testing.B) {
	in := genJob(b, 10000, 1000, nil)
	b.ResetTimer()
	for range b.N {
		job, err := analysis.Load(in, analysis.Options{NoSequences: true})
		require.NoError(b, err)
		var buf bytes.Buffer
		require.NoError(b, Write(context.Background(), &buf, job, Options{}))
	}
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
}

// BenchmarkReport1024 writes the report of a generated 1,024-rank run with
// a 30-slice overview, as `mpiflow report` does; the target is under 10 s
// and under 20 MB.
func BenchmarkReport1024(b *testing.B) {
	in := genJob(b, 1024, 5000, nil)
	var size int
	b.ResetTimer()
	for range b.N {
		job, err := analysis.Load(in, analysis.Options{NoSequences: true})
		require.NoError(b, err)
		var buf bytes.Buffer
		require.NoError(b, Write(context.Background(), &buf, job, Options{Slices: 30}))
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}
