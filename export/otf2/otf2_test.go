//go:build cgo && !nootf2

package otf2

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/export"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func genFile(t testing.TB, nranks int, events int64) (*flowgraph.File, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 9, Events: events, Depth: 3, Sites: 12, Branchy: true}, nranks, 2)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, ranks
}

// expected counts the records Write must produce for r, from the
// reconstructed events and the documented mapping: Enter+Leave per call and
// per compute gap, MpiCollectiveBegin+End per blocking collective, one
// MpiSend/MpiRecv per blocking send/receive with a single known partner.
func expected(t *testing.T, r *flowgraph.Rank) (total int, perType map[string]int) {
	perType = map[string]int{}
	it := r.Graph.Events()
	var prevEnd int64
	for i := 0; it.Next(); i++ {
		ev := it.Event()
		if i > 0 && ev.Start > prevEnd {
			perType["ENTER"]++
			perType["LEAVE"]++
		}
		prevEnd = ev.End
		perType["ENTER"]++
		perType["LEAVE"]++
		n := &r.Graph.Nodes[ev.Node]
		single := len(n.Partners) == 1 && n.OtherPartners == 0
		switch n.Key.Call {
		case "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce", "MPI_Alltoall":
			perType["MPI_COLLECTIVE_BEGIN"]++
			perType["MPI_COLLECTIVE_END"]++
		case "MPI_Send":
			if single {
				perType["MPI_SEND"]++
			}
		case "MPI_Recv":
			if single {
				perType["MPI_RECV"]++
			}
		}
	}
	require.NoError(t, it.Err())
	for _, n := range perType {
		total += n
	}
	return total, perType
}

func TestWriteOTF2Print(t *testing.T) {
	otf2print, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Skip("otf2-print (Debian package otf2-tools) not installed")
	}
	f, ranks := genFile(t, 4, 700)
	out := filepath.Join(t.TempDir(), "arch", "trace.otf2")
	st, err := Write(out, f, export.Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, st.Ranks)

	// Events: otf2-print prints "TYPE  LOCATION  TIME  ..." per event.
	raw, err := exec.Command(otf2print, out).CombinedOutput()
	require.NoError(t, err, "otf2-print: %s", raw)
	line := regexp.MustCompile(`^([A-Z_]+)\s+(\d+)\s+(\d+)\s`)
	got := map[int]map[string]int{}
	regionsSeen := map[string]bool{}
	regionRe := regexp.MustCompile(`Region: "([^"]+)"`)
	for _, l := range strings.Split(string(raw), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		loc, _ := strconv.Atoi(m[2])
		if got[loc] == nil {
			got[loc] = map[string]int{}
		}
		got[loc][m[1]]++
		if rm := regionRe.FindStringSubmatch(l); rm != nil {
			regionsSeen[rm[1]] = true
		}
	}
	wantRegions := map[string]bool{ComputeRegion: true}
	for li, r := range ranks {
		_, want := expected(t, r)
		assert.Equal(t, want, got[li], "events of location %d (rank %d)", li, r.Rank)
		for _, n := range r.Graph.Nodes {
			wantRegions[n.Key.Call] = true
		}
	}
	assert.Equal(t, wantRegions, regionsSeen)

	// Definitions: the same region names, one location per rank with its
	// event count, hosts in the system tree.
	raw, err = exec.Command(otf2print, "-G", out).CombinedOutput()
	require.NoError(t, err, "otf2-print -G: %s", raw)
	defs := string(raw)
	for name := range wantRegions {
		assert.Contains(t, defs, `Name: "`+name+`"`)
	}
	assert.Contains(t, defs, `"node000"`)
	assert.Contains(t, defs, `"node001"`)
	for _, r := range ranks {
		total, _ := expected(t, r)
		assert.Regexp(t, `Name: "rank `+strconv.Itoa(r.Rank)+`".*# Events: `+strconv.Itoa(total), defs)
	}

	_, err = Write(out, f, export.Options{})
	require.Error(t, err, "an existing archive is not overwritten")
	assert.Contains(t, err.Error(), "exists")
}

func TestArchivePaths(t *testing.T) {
	tests := []struct{ in, dir, name string }{
		{"out/trace.otf2", "out", "trace"},
		{"trace.otf2", ".", "trace"},
		{"outdir", "outdir", "traces"},
	}
	for _, tt := range tests {
		d, n := ArchivePaths(tt.in)
		assert.Equal(t, tt.dir, d, tt.in)
		assert.Equal(t, tt.name, n, tt.in)
	}
}

func TestClassify(t *testing.T) {
	assert.Equal(t, KindSend, classify("MPI_Send").kind)
	assert.Equal(t, KindRecv, classify("MPI_Recv").kind)
	assert.Equal(t, KindSendRecv, classify("MPI_Sendrecv").kind)
	assert.Equal(t, KindCollective, classify("MPI_Allreduce").kind)
	assert.Equal(t, KindOther, classify("MPI_Iallreduce").kind)
	assert.Equal(t, KindOther, classify("MPI_Isend").kind)
	assert.Equal(t, KindOther, classify("MPI_File_write_at_all").kind)
	// MPI-4.0: large-count calls as their int forms, persistent ones by role.
	assert.Equal(t, KindSend, classify("MPI_Send_c").kind)
	assert.Equal(t, KindCollective, classify("MPI_Allreduce_c").kind)
	assert.Equal(t, classify("MPI_Allreduce").role, classify("MPI_Allreduce_init").role)
	assert.Equal(t, KindOther, classify("MPI_Allreduce_init").kind)
	assert.Equal(t, KindOther, classify("MPI_Send_init").kind)
	assert.Equal(t, classify("MPI_Send").role, classify("MPI_Psend_init").role)
	assert.Equal(t, classify("MPI_Send").role, classify("MPI_Isendrecv").role)
}

func BenchmarkExportOTF2(b *testing.B) {
	f, _ := genFile(b, 8, 100_000)
	dir := b.TempDir()
	b.ResetTimer()
	var events int64
	for i := 0; b.Loop(); i++ {
		st, err := Write(filepath.Join(dir, "t"+strconv.Itoa(i)+".otf2"), f, export.Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += st.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// writeEnv makes TestWriteChild write a generated job to the archive it
// names and print the error, in a process of its own.
const writeEnv = "MPIFLOW_TEST_OTF2_WRITE"

func TestWriteChild(t *testing.T) {
	out := os.Getenv(writeEnv)
	if out == "" {
		t.Skip("run by TestWriteWithoutLibrary")
	}
	f, _ := genFile(t, 2, 100)
	_, err := Write(out, f, export.Options{})
	fmt.Printf("error: %v\n", err)
}

// TestWriteWithoutLibrary: where the OTF2 library cannot be loaded, Write
// fails naming it and its package, and writes nothing; in a process of its
// own, as a loaded library stays loaded.
func TestWriteWithoutLibrary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "arch")
	out := filepath.Join(dir, "trace.otf2")
	write := func(lib string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriteChild$")
		cmd.Env = append(os.Environ(), writeEnv+"="+out, "MPIFLOW_OTF2_LIB="+lib)
		raw, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", raw)
		return string(raw)
	}
	assert.Contains(t, write("/nonexistent"), "error: write "+out+": cannot load the OTF2 library (libopen-trace-format2.so.10, "+
		"Debian package libopen-trace-format2-10) from MPIFLOW_OTF2_LIB=/nonexistent: /nonexistent: cannot open shared object file")
	assert.NoDirExists(t, dir, "nothing written")
	assert.Contains(t, write(""), "error: <nil>", "the installed library")
	assert.FileExists(t, out)
}
