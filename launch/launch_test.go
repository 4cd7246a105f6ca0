package launch

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

func TestInjectEnv(t *testing.T) {
	vars := map[string]string{"LD_PRELOAD": "/l/libmpiflow-openmpi.so", "MPIFLOW_DIR": "/out", "MPIFLOW_KEY": "call,site,partner"}
	tests := []struct {
		name string
		argv []string
		kind launchKind
		want []string
	}{
		{"openmpi", []string{"mpirun", "-np", "4", "./app", "x"}, launchOpenMPI,
			[]string{"mpirun", "-x", "LD_PRELOAD", "-x", "MPIFLOW_DIR", "-x", "MPIFLOW_KEY", "-np", "4", "./app", "x"}},
		{"hydra", []string{"mpiexec", "-n", "2", "./app"}, launchHydra,
			[]string{"mpiexec", "-genv", "LD_PRELOAD", "/l/libmpiflow-openmpi.so", "-genv", "MPIFLOW_DIR", "/out",
				"-genv", "MPIFLOW_KEY", "call,site,partner", "-n", "2", "./app"}},
		{"direct", []string{"./app", "-np"}, launchDirect, []string{"./app", "-np"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, injectEnv(tt.argv, tt.kind, vars))
		})
	}
}

// TestJobCommand checks the command lines run builds from the environment
// and the flags, for each MPI's launcher.
func TestJobCommand(t *testing.T) {
	env := []string{"PATH=/bin", "LD_PRELOAD=/other.so", "MPIFLOW_ANCHORS=2", "MPIFLOW_PAPI=PAPI_TOT_INS,PAPI_TOT_CYC",
		"MPIFLOW_KEY=call", "MPIFLOW_DIR=/ignored", "MPIFLOW_CHECKPOINT=", "MPIFLOWX=1", "OMPI_MCA_x=1"}
	o := Options{Key: "call,site,partner", Trace: true}
	tests := []struct {
		name   string
		argv   []string
		flavor string
		want   []string
	}{
		{"openmpi", []string{"mpirun", "-np", "2", "./app"}, OpenMPI, []string{"mpirun",
			"-x", "LD_PRELOAD", "-x", "MPIFLOW_ANCHORS", "-x", "MPIFLOW_DIR", "-x", "MPIFLOW_KEY", "-x", "MPIFLOW_PAPI", "-x", "MPIFLOW_TRACE",
			"-np", "2", "./app"}},
		{"mpich", []string{"/usr/bin/mpiexec.mpich", "-n", "2", "./app"}, MPICH, []string{"/usr/bin/mpiexec.mpich",
			"-genv", "LD_PRELOAD", "/l/lib.so:/other.so", "-genv", "MPIFLOW_ANCHORS", "2", "-genv", "MPIFLOW_DIR", "/out",
			"-genv", "MPIFLOW_KEY", "call,site,partner", "-genv", "MPIFLOW_PAPI", "PAPI_TOT_INS,PAPI_TOT_CYC", "-genv", "MPIFLOW_TRACE", "1",
			"-n", "2", "./app"}},
		{"mpich as mpiexec", []string{"mpiexec", "-n", "2", "./app"}, MPICH, []string{"mpiexec",
			"-genv", "LD_PRELOAD", "/l/lib.so:/other.so", "-genv", "MPIFLOW_ANCHORS", "2", "-genv", "MPIFLOW_DIR", "/out",
			"-genv", "MPIFLOW_KEY", "call,site,partner", "-genv", "MPIFLOW_PAPI", "PAPI_TOT_INS,PAPI_TOT_CYC", "-genv", "MPIFLOW_TRACE", "1",
			"-n", "2", "./app"}},
		{"direct", []string{"./app", "-x"}, OpenMPI, []string{"./app", "-x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := jobVars("/l/lib.so", "/out", o, env)
			assert.Equal(t, tt.want, injectEnv(tt.argv, launcherKind(tt.argv[0], tt.flavor), vars))
		})
	}
}

func TestOutputDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name, flag, env string
		want            string // "" when an error is expected
		wantErr         string
	}{
		{"flag created", filepath.Join(tmp, "a", "b"), "", filepath.Join(tmp, "a", "b"), ""},
		{"flag over env", filepath.Join(tmp, "c"), filepath.Join(tmp, "d"), filepath.Join(tmp, "c"), ""},
		{"env created", "", filepath.Join(tmp, "e", "f"), filepath.Join(tmp, "e", "f"), ""},
		{"existing", tmp, "", tmp, ""},
		{"under a file", filepath.Join(file, "x"), "", "", "create the output directory: mkdir " + file},
		{"a file", file, "", "", "create the output directory: mkdir " + file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := outputDir(tt.flag, tt.env)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.DirExists(t, got)
		})
	}
}

func TestExpandDir(t *testing.T) {
	u, err := user.Current()
	require.NoError(t, err)
	day := time.Date(2026, 3, 7, 23, 59, 0, 0, time.Local)
	pid := fmt.Sprintf("run%d", os.Getpid())
	for _, tc := range []struct {
		tmpl string
		env  map[string]string
		want string
	}{
		{"/logs/%u/%Y/%m/%d", nil, "/logs/" + u.Username + "/2026/03/07"},
		{"/logs/%j", map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "3"}, "/logs/12.3"},
		{"/logs/%j", map[string]string{"PBS_JOBID": "4.server"}, "/logs/4.server"},
		{"/logs/%j", nil, "/logs/" + pid},
		{"/a%%b/%x/%", nil, "/a%b/%x/%"},
		{"/plain", nil, "/plain"},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			assert.Equal(t, tc.want, expandDir(tc.tmpl, day, func(k string) string { return tc.env[k] }))
		})
	}
}

func TestLauncherKind(t *testing.T) {
	tests := []struct {
		argv0, flavor string
		want          launchKind
	}{
		{"mpirun", OpenMPI, launchOpenMPI},
		{"/usr/bin/mpiexec", OpenMPI, launchOpenMPI},
		{"mpiexec", MPICH, launchHydra},
		{"mpiexec.hydra", OpenMPI, launchHydra},
		{"srun", OpenMPI, launchDirect},
		{"./app", "", launchDirect},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, launcherKind(tt.argv0, tt.flavor), tt.argv0)
	}
}

func TestJobVars(t *testing.T) {
	env := []string{"LD_PRELOAD=/other.so", "MPIFLOW_KEY=call", "MPIFLOW_QUIET=1", "MPIFLOW_ANCHORS=2", "MPIFLOW_TRACE=0", "MPIFLOW_PAPI="}
	v := jobVars("/l/lib.so", "/out", Options{Trace: true}, env)
	assert.Equal(t, map[string]string{
		"LD_PRELOAD":      "/l/lib.so:/other.so",
		"MPIFLOW_DIR":     "/out",
		"MPIFLOW_KEY":     "call",
		"MPIFLOW_TRACE":   "1",
		"MPIFLOW_QUIET":   "1",
		"MPIFLOW_ANCHORS": "2",
	}, v)
	v = jobVars("/l/lib.so", "/out", Options{Key: "call,site,bytes"}, env[1:])
	assert.Equal(t, map[string]string{"LD_PRELOAD": "/l/lib.so", "MPIFLOW_DIR": "/out", "MPIFLOW_KEY": "call,site,bytes",
		"MPIFLOW_QUIET": "1", "MPIFLOW_ANCHORS": "2", "MPIFLOW_TRACE": "0"}, v)
	v = jobVars("/l/lib.so", "/out", Options{Quiet: true}, nil)
	assert.Equal(t, map[string]string{"LD_PRELOAD": "/l/lib.so", "MPIFLOW_DIR": "/out", "MPIFLOW_QUIET": "1"}, v)
	v = jobVars("/l/lib.so", "/out", Options{Exact: true}, nil)
	assert.Equal(t, map[string]string{"LD_PRELOAD": "/l/lib.so", "MPIFLOW_DIR": "/out", "MPIFLOW_EXACT": "1"}, v)
}

func TestResolveFlavorRejectsUnknown(t *testing.T) {
	_, err := resolveFlavor("lam", "")
	assert.ErrorContains(t, err, "--mpi")
	f, err := resolveFlavor("mpich", "")
	assert.NoError(t, err)
	assert.Equal(t, MPICH, f)
}

func TestPartialJobs(t *testing.T) {
	files := []string{
		"/o/app.77.rank1.partial.mpiflow",
		"/o/app.77.rank0.partial.mpiflow",
		"/o/app.77.rank0.t1.partial.mpiflow",
		"/o/other.rank.x.5.rank3.partial.mpiflow",
		"/o/norank.partial.mpiflow",
	}
	assert.Equal(t, map[string][]string{
		"/o/app.77":         {"/o/app.77.rank0.partial.mpiflow", "/o/app.77.rank0.t1.partial.mpiflow", "/o/app.77.rank1.partial.mpiflow"},
		"/o/other.rank.x.5": {"/o/other.rank.x.5.rank3.partial.mpiflow"},
	}, partialJobs(files))
}

// writePartial writes a one-rank partial file as the library does, of a
// rank that stopped early or (complete) reached MPI_Finalize.
func writePartial(t *testing.T, path, job string, rank int, complete bool) {
	t.Helper()
	w, err := flowgraph.Create(path)
	require.NoError(t, err)
	b := flowgraph.NewBuilder(0, 0)
	s := b.Site(flowgraph.CallSite{Addr: 0x1000})
	b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: "MPI_Init", Site: s, Partner: -1, Comm: -1}, Partner: -1, Enter: 0, Exit: 10})
	require.NoError(t, w.WriteRank(&flowgraph.Rank{Rank: rank, Complete: complete, Graph: b.Graph()}))
	hosts := make([]string, 4)
	hosts[rank] = "h"
	require.NoError(t, w.Close(flowgraph.Header{JobID: job, NumRanks: 4, Hosts: hosts, Incomplete: !complete}))
}

func TestMergePartials(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ranks    int
		complete bool
	}{
		{"crashed", 3, false},        // rank 3 is missing
		{"all finished", 4, true},    // the job file could not be written
		{"one unfinished", 4, false}, // the ranks stopped early
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			var files []string
			for r := range tc.ranks {
				p := filepath.Join(tmp, fmt.Sprintf("app.9.rank%d.partial.mpiflow", r))
				writePartial(t, p, "9", r, tc.complete)
				files = append(files, p)
			}
			// A file of that name exists already: the merged one gets another.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "app.9.mpiflow"), []byte("x"), 0o644))
			out, incomplete, err := mergePartials(files, dir)
			require.NoError(t, err)
			require.Equal(t, []string{filepath.Join(dir, "app.9.2.mpiflow")}, out, "merged into the output directory")
			f, err := flowgraph.Open(out[0])
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, !tc.complete, f.Header.Incomplete)
			assert.Equal(t, !tc.complete, incomplete)
			assert.Len(t, f.Index, tc.ranks)
			for _, p := range files {
				assert.NoFileExists(t, p, "partial files are removed once merged")
			}
			assert.Equal(t, map[string]bool{filepath.Join(dir, "app.9.mpiflow"): true, out[0]: true}, profiles(dir, false))
			assert.Empty(t, profiles(tmp, true))
		})
	}
}
