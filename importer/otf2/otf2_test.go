//go:build cgo && !nootf2

package otf2

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/export"
	exportotf2 "mpiflow/export/otf2"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// TestRoundTrip writes a generated job as OTF2 and reads it back: the
// Compute and MPI regions are at the top level, so the microscopic model
// must equal the one built from the graph directly.
func TestRoundTrip(t *testing.T) {
	arch, h, ranks := writeArchive(t, t.TempDir(), 6, 4, 2500)

	tr, err := Read(arch)
	require.NoError(t, err)
	require.Len(t, tr.Res, 6)
	for i, r := range tr.Res {
		assert.Equal(t, i, r.Rank, "ranks from the location group names")
		assert.Equal(t, "MPI Rank "+string(rune('0'+i)), r.Name)
	}
	fs, err := aggregate.NewRankSource(&h, ranks, aggregate.FlowOptions{})
	require.NoError(t, err)
	want, err := aggregate.Build(fs, 20, 2)
	require.NoError(t, err)
	got, err := aggregate.Build(tr, 20, 2)
	require.NoError(t, err)
	assert.Equal(t, want.Bounds, got.Bounds)
	gotState := map[string]int{}
	for i, s := range got.States {
		gotState[s] = i
	}
	require.Len(t, got.States, len(want.States))
	for r := range want.Resources {
		for ts := 0; ts < 20; ts++ {
			wc, gc := want.Cell(r, ts), got.Cell(r, ts)
			for s, name := range want.States {
				gs, ok := gotState[name]
				require.True(t, ok, name)
				assert.InDelta(t, float64(wc[s]), float64(gc[gs]), 0.5, "rank %d slice %d %s", r, ts, name)
			}
		}
	}

	// Hierarchy: machine -> host -> rank, like job -> host -> rank.
	hh, err := aggregate.NewHierarchy(tr.DefaultSpec(), tr.Resources())
	require.NoError(t, err)
	assert.Equal(t, "machine", hh.Nodes[0].Name)
	assert.Equal(t, 2, hh.Height())
	assert.Len(t, hh.Nodes[0].Children, 2, "two hosts")
}

// readEnv names the archive that the test binary, run with it set, reads
// in a process of its own and prints the error of.
const readEnv = "MPIFLOW_TEST_OTF2_READ"

func TestMain(m *testing.M) {
	if path := os.Getenv(readEnv); path != "" {
		_, err := Read(path)
		fmt.Print(err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeArchive writes a generated job of nranks ranks, perHost on a host,
// as an OTF2 archive under dir and returns its anchor file and the job.
func writeArchive(t *testing.T, dir string, nranks, perHost int, events int64) (string, flowgraph.Header, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 21, Events: events, Depth: 3, Sites: 12, Branchy: true}, nranks, perHost)
	path := filepath.Join(dir, "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	arch := filepath.Join(dir, "out", "trace.otf2")
	_, err = exportotf2.Write(arch, f, export.Options{})
	require.NoError(t, err)
	return arch, h, ranks
}

// TestReadDamagedLocation cuts short or removes one location's file of an
// archive: the import fails naming that file. OTF2's global event reader
// either fails without naming the location or, in a process that has read
// no archive before, drops the location and returns success, as if it had
// no more events; each archive is read in both.
func TestReadDamagedLocation(t *testing.T) {
	tests := []struct {
		name, file string
		events     int64 // per rank
		size       int64 // -1: removed, -2: cut at half
		want       string
	}{
		{"events cut at half", "2.evt", 1500, -2, "cut short or damaged: location \"rank 2\" has "},
		{"events cut at 100 bytes", "2.evt", 1500, 100, "cut short or damaged"},
		{"events cut past a chunk", "2.evt", 2500, 40000, "cut short or damaged: location \"rank 2\" has 5841 of the 12801 events"},
		{"events empty", "1.evt", 1500, 0, "open events"},
		{"events removed", "3.evt", 1500, -1, "open events"},
		{"local definitions cut", "1.def", 1500, 5, "open events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arch, _, _ := writeArchive(t, t.TempDir(), 4, 2, tt.events)
			file := filepath.Join(filepath.Dir(arch), "trace", tt.file)
			switch tt.size {
			case -1:
				require.NoError(t, os.Remove(file))
			case -2:
				st, err := os.Stat(file)
				require.NoError(t, err)
				require.NoError(t, os.Truncate(file, st.Size()/2))
			default:
				require.NoError(t, os.Truncate(file, tt.size))
			}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), readEnv+"="+arch)
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Contains(t, string(out), file+": ", "in a process of its own")
			assert.Contains(t, string(out), tt.want, "in a process of its own")

			_, err = Read(arch)
			require.Error(t, err)
			assert.Contains(t, err.Error(), file+": ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.otf2")
	require.NoError(t, os.WriteFile(junk, []byte("not an archive\n"), 0o644))
	for _, p := range []string{junk, filepath.Join(dir, "missing.otf2"), dir} {
		_, err := Read(p)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), p)
	}
}

// TestReadWithoutLibrary: where the OTF2 library cannot be loaded, Read
// fails naming it and its package; in a process of its own, as a loaded
// library stays loaded.
func TestReadWithoutLibrary(t *testing.T) {
	arch, _, _ := writeArchive(t, t.TempDir(), 2, 2, 100)
	read := func(lib string) string {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), readEnv+"="+arch, "MPIFLOW_OTF2_LIB="+lib)
		out, err := cmd.Output()
		require.NoError(t, err)
		return string(out)
	}
	assert.Equal(t, "read "+arch+": cannot load the OTF2 library (libopen-trace-format2.so.10, Debian package libopen-trace-format2-10) "+
		"from MPIFLOW_OTF2_LIB=/nonexistent: /nonexistent: cannot open shared object file: No such file or directory", read("/nonexistent"))
	assert.Equal(t, "<nil>", read(""), "the installed library")
}
