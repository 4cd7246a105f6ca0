package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// genJob writes a generated job of nranks ranks and returns its path.
func genJob(t testing.TB, nranks int, events int64, mutate func(h *flowgraph.Header, ranks []*flowgraph.Rank)) string {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 7, Events: events, Depth: 3, Sites: 12, MaxIter: 8, Branchy: true,
		SlowRanks: []int{nranks - 1}}, nranks, 2)
	if mutate != nil {
		mutate(&h, ranks)
	}
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path
}

// hpccJob writes a generated job of HPCC's shape (flowgen.HPCCShape: 400
// call sites, more calls than the palette, polls) of two ranks and returns
// its path.
func hpccJob(t testing.TB, events int64) string {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.HPCCShape(events), 2, 2)
	path := filepath.Join(t.TempDir(), "hpcc.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	return path
}

// artifacts is where tests leave reports and screenshots to look at:
// $MPIFLOW_ARTIFACTS if set, else a temporary directory.
func artifacts(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("MPIFLOW_ARTIFACTS"); d != "" {
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

// writeReport writes the report of the job at in and returns its path and
// contents.
func writeReport(t testing.TB, in, name string, opt Options) (string, string) {
	t.Helper()
	return writeReportOf(t, in, name, analysis.Options{}, opt)
}

// writeReportOf writes the report of the job at in, analysed with aopt,
// and returns its path and contents.
func writeReportOf(t testing.TB, in, name string, aopt analysis.Options, opt Options) (string, string) {
	t.Helper()
	out := filepath.Join(artifacts(t), name)
	job, err := analysis.Load(in, aopt)
	require.NoError(t, err)
	require.NoError(t, WriteFile(context.Background(), out, job, opt))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	return out, string(b)
}
