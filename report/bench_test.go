package report

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// BenchmarkReport1024 writes the report of a generated 1,024-rank run with
// a 30-slice overview; the target is under 10 s and under 20 MB.
func BenchmarkReport1024(b *testing.B) {
	in := genJob(b, 1024, 5000, nil)
	f, err := flowgraph.Open(in)
	require.NoError(b, err)
	defer f.Close()
	var size int
	b.ResetTimer()
	for range b.N {
		var buf bytes.Buffer
		require.NoError(b, Write(context.Background(), &buf, f, Options{Slices: 30}))
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}
