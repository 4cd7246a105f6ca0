package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/export/otf2"
	"mpiflow/flowgraph"
	"mpiflow/importer"
)

// absEvents reconstructs the events of r with times since the job start.
func absEvents(t *testing.T, r *flowgraph.Rank) []flowgraph.Event {
	var out []flowgraph.Event
	it := r.Graph.Events()
	for it.Next() {
		ev := it.Event()
		ev.Start += r.Start
		ev.End += r.Start
		out = append(out, ev)
	}
	require.NoError(t, it.Err())
	return out
}

func TestTraceChrome(t *testing.T) {
	path, ranks := genJob(t)
	out := filepath.Join(t.TempDir(), "t.json")
	_, stderr, err := run(t, "trace", path, "--format", "chrome", "--ranks", "1-2", "-o", out)
	require.NoError(t, err)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Pid int    `json:"pid"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	perPid := map[int]int{}
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "X" {
			perPid[ev.Pid]++
		}
	}
	want := map[int]int{1: int(ranks[1].Graph.NumEvents), 2: int(ranks[2].Graph.NumEvents)}
	assert.Equal(t, want, perPid)
	assert.Contains(t, stderr, "wrote "+strconv.Itoa(want[1]+want[2])+" events of 2 ranks")
}

func TestTraceWindow(t *testing.T) {
	path, ranks := genJob(t)
	evs := absEvents(t, ranks[0])
	from, to := evs[300].Start, evs[600].Start
	// Count independently: events overlapping [from, to).
	want := 0
	for _, ev := range evs {
		if ev.End > from && ev.Start < to {
			want++
		}
	}
	sec := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 9, 64) }
	out, _, err := run(t, "trace", path, "--rank", "0", "--from", sec(from), "--to", sec(to))
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, want+1)

	// A duration works as well as seconds.
	out2, _, err := run(t, "trace", path, "--rank", "0", "--from", strconv.FormatInt(from, 10)+"ns", "--to", strconv.FormatInt(to, 10)+"ns")
	require.NoError(t, err)
	assert.Equal(t, out, out2)
}

func TestTracePajeImport(t *testing.T) {
	path, ranks := genJob(t)
	out := filepath.Join(t.TempDir(), "t.paje")
	_, _, err := run(t, "trace", path, "--format", "paje", "-o", out)
	require.NoError(t, err)
	tr, err := importer.ReadPaje(out, importer.PajeOptions{})
	require.NoError(t, err)
	require.Len(t, tr.Res, len(ranks))
	for i, r := range ranks {
		var calls int
		for _, ev := range tr.Events[i] {
			if tr.StateNames[ev.State] != "Compute" {
				calls++
			}
		}
		// Consecutive calls of the same state merge only if they touch and
		// share a state; Pajé writes one SetState per call, so each call
		// is one interval unless it lasts 0 ns.
		var nonEmpty int
		for _, ev := range absEvents(t, r) {
			if ev.End > ev.Start {
				nonEmpty++
			}
		}
		assert.Equal(t, nonEmpty, calls, "rank %d", r.Rank)
	}
}

func TestTraceOTF2(t *testing.T) {
	if !otf2.Supported {
		t.Skip("built without OTF2 support")
	}
	path, ranks := genJob(t)
	out := filepath.Join(t.TempDir(), "arch", "trace.otf2")
	_, _, err := run(t, "trace", path, "--format", "otf2", "-o", out)
	require.NoError(t, err)
	_, err = os.Stat(out)
	require.NoError(t, err)
	otf2print, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Skip("otf2-print (Debian package otf2-tools) not installed")
	}
	raw, err := exec.Command(otf2print, "-G", out).CombinedOutput()
	require.NoError(t, err, "%s", raw)
	for _, r := range ranks {
		assert.Contains(t, string(raw), `"rank `+strconv.Itoa(r.Rank)+`"`)
	}
	// Writing again over it is refused, with a clear message.
	_, _, err = run(t, "trace", path, "--format", "otf2", "-o", out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists")
}

func TestTraceBadInput(t *testing.T) {
	path, _ := genJob(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"trace", path, "--format", "otf2"}, "give it with -o"},
		{[]string{"trace", path, "--format", "vtf"}, "unknown format \"vtf\" (known: csv, chrome, paje, otf2)"},
		{[]string{"trace", path, "--from", "abc"}, "--from \"abc\": not a time"},
		{[]string{"trace", path, "--from", "2s", "--to", "1s"}, "--to 1s is not after --from 2s"},
		{[]string{"trace", path, "--from", "-1s"}, "negative time"},
		{[]string{"trace", path, "--format", "paje", "--ranks", "7"}, "no rank matches --rank 7"},
		{[]string{"trace", path, "--format", "chrome", "-o", "/nonexistent-dir/x.json"}, "/nonexistent-dir/x.json"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			_, _, err := run(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestTraceHelp(t *testing.T) {
	out, _, err := run(t, "trace", "--help")
	require.NoError(t, err)
	for _, s := range []string{"--format", "--from", "--to", "otf2", "Perfetto", "Example"} {
		assert.Contains(t, out, s)
	}
}
