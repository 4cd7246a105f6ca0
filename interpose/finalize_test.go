package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// soloComm is a one-rank comm that writes with plain file I/O.
type soloComm struct {
	f        *os.File
	writeErr error
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
	env := map[string]string{"MPIFLOW_DIR": dir, "MPIFLOW_QUIET": "1", "SLURM_JOB_ID": "42"}
	return &job{
		comm:      c,
		ranks:     func(int64) []*flowgraph.Rank { return []*flowgraph.Rank{{Complete: true, Host: "h", Graph: g}} },
		initReal:  1e18,
		wall:      1000,
		keyFields: []string{"call", "site"},
		env:       func(k string) string { return env[k] },
	}
}

func TestFinalizeWritesJobFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, finalize(soloJob(t, dir, &soloComm{})))
	f, err := flowgraph.Open(filepath.Join(dir, "interpose.test.42.mpiflow"))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "42", f.Header.JobID)
	assert.Equal(t, 1, f.Header.NumRanks)
	assert.Equal(t, []string{"h"}, f.Header.Hosts)
	r, err := f.ReadRank(0)
	require.NoError(t, err)
	assert.EqualValues(t, 10, r.Graph.NumEvents)
	// A second job with the same id does not overwrite the first.
	require.NoError(t, finalize(soloJob(t, dir, &soloComm{})))
	_, err = os.Stat(filepath.Join(dir, "interpose.test.42.2.mpiflow"))
	assert.NoError(t, err)
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	assert.Empty(t, left, "no temporary files left")
}

func TestFinalizeErrors(t *testing.T) {
	dir := t.TempDir()
	err := finalize(soloJob(t, filepath.Join(dir, "missing"), &soloComm{}))
	assert.ErrorContains(t, err, "output directory")

	full := errors.New("no space left on device")
	err = finalize(soloJob(t, dir, &soloComm{writeErr: full}))
	assert.ErrorIs(t, err, full)
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, left, "a failed write leaves nothing behind")
}

func TestJobID(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, "7.0", jobID(env(map[string]string{"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0"})))
	assert.Equal(t, "a_b", jobID(env(map[string]string{"OMPI_MCA_ess_base_jobid": "a/b"})))
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
