package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph/flowgen"
)

// cliArgs, when set, makes the test binary run the CLI with these
// arguments (a JSON list) instead of the tests, so that a test can start
// it as a process of its own.
const cliArgs = "MPIFLOW_TEST_CLI_ARGS"

func TestMain(m *testing.M) {
	if v := os.Getenv(cliArgs); v != "" {
		var args []string
		if err := json.Unmarshal([]byte(v), &args); err != nil {
			panic(err)
		}
		os.Args = append(os.Args[:1], args...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInterruptRemovesTemporary: a command that SIGINT ends while it
// writes its output leaves neither the output nor its temporary file, and
// ends as the signal ends a process.
func TestInterruptRemovesTemporary(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a job of 4 M events")
	}
	dir := t.TempDir()
	job := filepath.Join(dir, "job.mpiflow")
	_, _, err := flowgen.WriteJob(job, flowgen.HPCCShape(2_000_000), 2, 2)
	require.NoError(t, err)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "trace.csv")
	exe, err := os.Executable()
	require.NoError(t, err)
	args, _ := json.Marshal([]string{"trace", job, "-o", out})
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), cliArgs+"="+string(args))
	require.NoError(t, cmd.Start())
	// Interrupt once the temporary output exists.
	deadline := time.Now().Add(time.Minute)
	for {
		entries, _ := os.ReadDir(outDir)
		if len(entries) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "ended by the signal before it finished")
	ws := ee.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGINT, "ended by SIGINT: %v", ws)
	entries, err := os.ReadDir(outDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, "nothing left: %s", strings.Join(names, ", "))
}
