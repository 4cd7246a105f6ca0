package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInjectEnv(t *testing.T) {
	vars := map[string]string{"LD_PRELOAD": "/l/libmpiflow-openmpi.so", "MPIFLOW_DIR": "/out"}
	tests := []struct {
		name string
		argv []string
		kind launchKind
		want []string
	}{
		{"openmpi", []string{"mpirun", "-np", "4", "./app", "x"}, launchOpenMPI,
			[]string{"mpirun", "-x", "LD_PRELOAD=/l/libmpiflow-openmpi.so", "-x", "MPIFLOW_DIR=/out", "-np", "4", "./app", "x"}},
		{"hydra", []string{"mpiexec", "-n", "2", "./app"}, launchHydra,
			[]string{"mpiexec", "-genv", "LD_PRELOAD", "/l/libmpiflow-openmpi.so", "-genv", "MPIFLOW_DIR", "/out", "-n", "2", "./app"}},
		{"direct", []string{"./app", "-np"}, launchDirect, []string{"./app", "-np"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, injectEnv(tt.argv, tt.kind, vars))
		})
	}
}

func TestLauncherKind(t *testing.T) {
	tests := []struct {
		argv0, flavor string
		want          launchKind
	}{
		{"mpirun", mpiOpenMPI, launchOpenMPI},
		{"/usr/bin/mpiexec", mpiOpenMPI, launchOpenMPI},
		{"mpiexec", mpiMPICH, launchHydra},
		{"mpiexec.hydra", mpiOpenMPI, launchHydra},
		{"srun", mpiOpenMPI, launchDirect},
		{"./app", "", launchDirect},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, launcherKind(tt.argv0, tt.flavor), tt.argv0)
	}
}

func TestJobVars(t *testing.T) {
	env := map[string]string{"LD_PRELOAD": "/other.so", "MPIFLOW_KEY": "call", "MPIFLOW_QUIET": "1"}
	get := func(k string) string { return env[k] }
	v := jobVars("/l/lib.so", "/out", runOptions{trace: true}, get)
	assert.Equal(t, map[string]string{
		"LD_PRELOAD":    "/l/lib.so:/other.so",
		"MPIFLOW_DIR":   "/out",
		"MPIFLOW_KEY":   "call",
		"MPIFLOW_TRACE": "1",
		"MPIFLOW_QUIET": "1",
	}, v)
	v = jobVars("/l/lib.so", "/out", runOptions{key: "call,site,bytes"}, func(string) string { return "" })
	assert.Equal(t, map[string]string{"LD_PRELOAD": "/l/lib.so", "MPIFLOW_DIR": "/out", "MPIFLOW_KEY": "call,site,bytes"}, v)
}

func TestResolveFlavorRejectsUnknown(t *testing.T) {
	_, err := resolveFlavor("lam", "")
	assert.ErrorContains(t, err, "--mpi")
	f, err := resolveFlavor("mpich", "")
	assert.NoError(t, err)
	assert.Equal(t, mpiMPICH, f)
}
