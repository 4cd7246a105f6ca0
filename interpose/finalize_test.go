package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// soloComm is a one-rank comm that writes with plain file I/O.
type soloComm struct {
	f        *os.File
	writeErr error
	// short: writes of more than one byte keep only the first half and
	// report success, as Open MPI's MPI-IO does on a full file system
	short bool
}

func (c *soloComm) Rank() int                       { return 0 }
func (c *soloComm) Size() int                       { return 1 }
func (c *soloComm) Bcast([]byte) error              { return nil }
func (c *soloComm) Allreduce([]int64, int) error    { return nil }
func (c *soloComm) Exscan(int64) (int64, error)     { return 0, nil }
func (c *soloComm) Gather(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }
func (c *soloComm) Open(path string) error {
	f, err := os.Create(path)
	c.f = f
	return err
}
func (c *soloComm) WriteAtAll(off int64, b []byte) error { return c.WriteAt(off, b) }
func (c *soloComm) WriteAt(off int64, b []byte) error {
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.short && len(b) > 1 {
		b = b[:len(b)/2]
	}
	_, err := c.f.WriteAt(b, off)
	return err
}
func (c *soloComm) Close() error { return c.f.Close() }

func soloJob(t *testing.T, dir string, c comm) *job {
	b := flowgraph.NewBuilder(0, 0)
	site := b.Site(flowgraph.CallSite{Addr: 0x10})
	for i := int64(0); i < 10; i++ {
		b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Barrier", Site: site, Partner: -1, Comm: -1}, Enter: 100 * i, Exit: 100*i + 10, Partner: -1})
	}
	g := b.Graph()
	env := map[string]string{"MPIFLOW_QUIET": "1"}
	return &job{
		comm:      c,
		traces:    map[int]string{},
		traceErrs: map[int]error{},
		ranks: func(int64) []recording {
			return []recording{{Rank: &flowgraph.Rank{Complete: true, Host: "h", Graph: g}}}
		},
		initReal:  1e18,
		wall:      1000,
		keyFields: []string{"call", "site"},
		env:       func(k string) string { return env[k] },
		dir:       dir,
		id:        "42",
	}
}

func TestFinalizeWritesJobFile(t *testing.T) {
	dir := t.TempDir()
	written, err := finalize(soloJob(t, dir, &soloComm{}))
	require.NoError(t, err)
	assert.True(t, written)
	f, err := flowgraph.Open(filepath.Join(dir, "interpose.test.42.mpiflow"))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "42", f.Header.JobID)
	u, err := user.Current()
	require.NoError(t, err)
	assert.Equal(t, u.Username, f.Header.User)
	assert.Equal(t, 1, f.Header.NumRanks)
	assert.Equal(t, []string{"h"}, f.Header.Hosts)
	r, err := f.ReadRank(0)
	require.NoError(t, err)
	assert.EqualValues(t, 10, r.Graph.NumEvents)
	// A second job with the same id does not overwrite the first.
	_, err = finalize(soloJob(t, dir, &soloComm{}))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "interpose.test.42.2.mpiflow"))
	assert.NoError(t, err)
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	assert.Empty(t, left, "no temporary files left")
}

func TestFinalizeErrors(t *testing.T) {
	dir := t.TempDir()
	written, err := finalize(soloJob(t, filepath.Join(dir, "missing"), &soloComm{}))
	assert.ErrorContains(t, err, "output directory")
	assert.False(t, written)

	full := errors.New("no space left on device")
	written, err = finalize(soloJob(t, dir, &soloComm{writeErr: full}))
	assert.ErrorIs(t, err, full)
	assert.False(t, written)
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, left, "a failed write leaves nothing behind")

	// Writes that say they succeeded but wrote less are caught by the size.
	written, err = finalize(soloJob(t, dir, &soloComm{short: true}))
	assert.ErrorContains(t, err, "is the file system full?")
	assert.False(t, written)
	left, _ = filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, left, "a short write leaves nothing behind")
}

// TestFinalizeTraces: full traces move next to the job file; one whose
// writing failed is removed, not left truncated under the final name.
func TestFinalizeTraces(t *testing.T) {
	dir := t.TempDir()
	j := soloJob(t, dir, &soloComm{})
	for thread := range 3 {
		tmp := filepath.Join(dir, fmt.Sprintf(".trace%d.tmp", thread))
		require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o644))
		j.traces[thread] = tmp
	}
	j.traceErrs[1] = syscall.ENOSPC
	j.traceErrs[5] = syscall.EACCES // a thread whose trace never opened
	written, err := finalize(j)
	assert.True(t, written, "the job file does not depend on the traces")
	assert.ErrorContains(t, err, "rank 0 thread 1: no space left on device; not kept")
	assert.ErrorContains(t, err, "rank 0 thread 5: permission denied")
	final := filepath.Join(dir, "interpose.test.42.mpiflow")
	for thread, want := range map[int]bool{0: true, 1: false, 2: true} {
		_, serr := os.Stat(flowgraph.TracePath(final, 0, thread))
		assert.Equal(t, want, serr == nil, "trace of thread %d", thread)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	assert.Empty(t, left, "no temporary files left")
}

// TestJobID: the scheduler's job id names the file before the launcher's
// (core.c's job_id, which passes it to the Go part); without one, rank
// 0's pid does.
func TestJobID(t *testing.T) {
	vars := []string{"SLURM_JOB_ID", "SLURM_STEP_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID",
		"OMPI_MCA_ess_base_jobid", "PMI_JOBID"}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0"}, "7.0"},
		{map[string]string{"OMPI_MCA_ess_base_jobid": "a/b"}, "a_b"},
		{map[string]string{"PBS_JOBID": "1234.pbs01", "OMPI_MCA_ess_base_jobid": "99"}, "1234.pbs01"},
		{map[string]string{"LSB_JOBID": "55", "PMI_JOBID": "3"}, "55"},
		{map[string]string{"FLUX_JOB_ID": "ƒ2NBuTqrN", "OMPI_MCA_ess_base_jobid": "99"}, "__2NBuTqrN"},
		{map[string]string{"COBALT_JOBID": "881"}, "881"},
		{map[string]string{"PMI_JOBID": strings.Repeat("x", 200)}, strings.Repeat("x", 127)}, // core.h's G.job
		{map[string]string{}, ""},
	} {
		for _, k := range vars {
			t.Setenv(k, tc.env[k])
		}
		id, ok := cJobID(128)
		assert.Equal(t, tc.want != "", ok, "%v", tc.env)
		assert.Equal(t, tc.want, id, "%v", tc.env)
	}
}

// TestRunEnv: the header keeps the variables that tune a run or name its
// job, sorted, and nothing else.
func TestRunEnv(t *testing.T) {
	env := []string{"HOME=/root", "OMP_NUM_THREADS=4", "MPIFLOW_BUDGET=64K", "AWS_SECRET_ACCESS_KEY=x", "SLURM_JOB_ID=42",
		"OMPI_MCA_btl=self,vader", "PATH=/bin", "SLURM_JOB_PARTITIONX=no", "MKL_NUM_THREADS=1", "broken",
		"OMPI_MCA_orte_precondition_transports=a7b5-bcbd", "OMPI_MCA_orte_hnp_uri=9306112.0;tcp://192.0.2.2:40205",
		"OMPI_MCA_ess_base_jobid=9306113", "OMPI_MCA_pmix=^s1", "OMPI_MCA_initial_wdir=/tmp"}
	assert.Equal(t, []string{"MKL_NUM_THREADS=1", "MPIFLOW_BUDGET=64K", "OMPI_MCA_btl=self,vader", "OMP_NUM_THREADS=4", "SLURM_JOB_ID=42"}, runEnv(env))
	assert.Empty(t, runEnv(nil))
}
