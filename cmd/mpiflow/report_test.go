package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/report"
)

func TestGraphCmd(t *testing.T) {
	path, _ := genJob(t)
	out, _, err := run(t, "graph", path, "--rank", "1")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "digraph"))
	assert.Regexp(t, regexp.MustCompile(`Loop 1 · MPI_\w+\\n\d+ it t=`), out, "loop node label with its header call")
	assert.Contains(t, out, "on every level", "one color scale for the rank by default")

	out, _, err = run(t, "graph", path, "--rank", "1", "--loop", "1", "--color", "count")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`label="MPI_\w+ \d+(\.\d)? ([KMG]i)?B cs=\d+ t=[0-9.e-]+"`), out, "node label as in the paper")
	assert.Regexp(t, regexp.MustCompile(`label="\d+ \([0-9.e-]+\)"`), out, "edge label as in the paper")
	assert.Contains(t, out, "color: count")
	assert.Contains(t, out, `style="dashed"`, "a back edge")

	out, _, err = run(t, "graph", path, "--rank", "1", "--loop", "1", "--scale", "level")
	require.NoError(t, err)
	assert.Contains(t, out, "(edges) of this level")

	svg := filepath.Join(t.TempDir(), "g.svg")
	_, _, err = run(t, "graph", path, "--rank", "0", "--format", "svg", "-o", svg)
	require.NoError(t, err)
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<svg")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"graph", path, "--rank", "9"}, "no rank matches the selection (the file has ranks 0-3)"},
		{[]string{"graph", path, "--loop", "999"}, "has no loop 999"},
		{[]string{"graph", path, "--color", "ipc"}, "unknown color metric"},
		{[]string{"graph", path, "--format", "png"}, "unknown format"},
		{[]string{"graph", path, "--scale", "job"}, "unknown scale"},
		{[]string{"graph", "/nonexistent.mpiflow"}, "no such file"},
	} {
		_, _, err := run(t, tt.args...)
		require.Error(t, err, tt.args)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestReportCmd(t *testing.T) {
	path, _ := genJob(t)
	out := filepath.Join(t.TempDir(), "r.html")
	_, stderr, err := run(t, "report", path, "-o", out)
	require.NoError(t, err)
	assert.Contains(t, stderr, out)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	html := string(b)
	assert.Contains(t, html, "<svg")
	assert.Contains(t, html, "./halo &lt;script&gt;", "command escaped")

	assertCallTable(t, html, path)

	_, _, err = run(t, "report", "/nonexistent.mpiflow")
	require.Error(t, err)

	// --compare adds the comparison with a baseline; a missing one is
	// an error naming it, and no report is written.
	cmp := filepath.Join(t.TempDir(), "c.html")
	_, _, err = run(t, "report", path, "-o", cmp, "--compare", path)
	require.NoError(t, err)
	b, err = os.ReadFile(cmp)
	require.NoError(t, err)
	assert.Contains(t, string(b), `id="compare-runs"`)
	missing := filepath.Join(t.TempDir(), "missing.mpiflow")
	_, _, err = run(t, "report", path, "-o", filepath.Join(t.TempDir(), "m.html"), "--compare", missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)
}

// assertCallTable checks that the report html has the numbers of stats
// --json of the profile at path: one row per call with its count and total
// time in ns (the sort keys).
func assertCallTable(t *testing.T, html, path string) {
	t.Helper()
	js, _, err := run(t, "stats", "--json", path)
	require.NoError(t, err)
	var st report.StatsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &st))
	require.NotEmpty(t, st.Calls)
	table := html[strings.Index(html, `id="calls-table"`):]
	table = table[:strings.Index(table, "</table>")]
	row := regexp.MustCompile(`<tr><td data-k="0">(MPI_\w+)</td><td data-k="(\d+)">\d+</td><td data-k="([^"]+)">`)
	rows := row.FindAllStringSubmatch(table, -1)
	require.Len(t, rows, len(st.Calls))
	for _, c := range st.Calls {
		found := false
		for _, r := range rows {
			if r[1] == c.Call {
				found = true
				assert.Equal(t, strconv.FormatInt(c.Count, 10), r[2], c.Call)
				total, err := strconv.ParseFloat(strings.ReplaceAll(r[3], "&#43;", "+"), 64)
				require.NoError(t, err)
				assert.InDelta(t, float64(c.Time.Total), total, 0.5, c.Call)
			}
		}
		assert.True(t, found, "row of %s", c.Call)
	}
}
