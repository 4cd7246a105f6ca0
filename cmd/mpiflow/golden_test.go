package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites the golden files: go test ./cmd/mpiflow -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenProfiles is where the recorded profiles of the test programs live.
const goldenProfiles = "../../testdata/profiles"

// goldenText are the commands whose standard output is kept as a golden
// file: the text tables, JSON and DOT of every view.
var goldenText = []struct {
	name string
	args []string
}{
	{"stats.txt", []string{"stats"}},
	{"stats.json", []string{"stats", "--json"}},
	{"matrix.txt", []string{"stats", "--matrix"}},
	{"loops.txt", []string{"loops"}},
	{"loops.json", []string{"loops", "--json"}},
	{"graph.dot", []string{"graph"}},
	{"graph-count-level.dot", []string{"graph", "--color", "count", "--scale", "level"}},
	{"aggregate.txt", []string{"aggregate"}},
	{"aggregate.json", []string{"aggregate", "--json", "--pvalues"}},
	{"aggregate-time-group.txt", []string{"aggregate", "--mode", "time", "--group"}},
	{"diff-halo.txt", []string{"diff", "FILE", goldenProfiles + "/halo.mpiflow"}},
	{"diff-halo.json", []string{"diff", "--json", "FILE", goldenProfiles + "/halo.mpiflow"}},
}

// goldenFiles are the commands that write a file (-o OUT): traces, exports
// and the HTML report are large, so their golden is a SHA-256 (hashes.txt).
var goldenFiles = []struct {
	name string
	args []string
}{
	{"trace.csv", []string{"trace", "--format", "csv"}},
	{"trace.json", []string{"trace", "--format", "chrome"}},
	{"trace.paje", []string{"trace", "--format", "paje"}},
	{"profile.pb.gz", []string{"export", "--format", "pprof"}},
	{"caliper.json", []string{"export", "--format", "caliper"}},
	{"report.html", []string{"report"}},
	{"compare-halo.html", []string{"report", "--compare", goldenProfiles + "/halo.mpiflow"}},
}

// generated is the line of a report that changes with every run.
var generated = regexp.MustCompile(`Report generated [^ ]+\.`)

// TestGolden checks every text, JSON and DOT output of the CLI on the
// profiles of testdata/profiles against its golden file, and the traces,
// exports and report against their hashes, so that a change of any output
// is seen (and a refactoring can show it changes none).
func TestGolden(t *testing.T) {
	profiles, err := filepath.Glob(filepath.Join(goldenProfiles, "*.mpiflow"))
	require.NoError(t, err)
	require.NotEmpty(t, profiles)
	for _, p := range profiles {
		name := strings.TrimSuffix(filepath.Base(p), ".mpiflow")
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden", name)
			for _, c := range goldenText {
				out, errOut, err := run(t, withFile(c.args, p)...)
				require.NoError(t, err, "%s: %s", c.args, errOut)
				checkGolden(t, filepath.Join(dir, c.name), []byte(out))
			}
			var hashes strings.Builder
			tmp := t.TempDir()
			for _, c := range goldenFiles {
				out := filepath.Join(tmp, c.name)
				_, errOut, err := run(t, append(append([]string{}, c.args...), p, "-o", out)...)
				require.NoError(t, err, "%s: %s", c.args, errOut)
				fmt.Fprintf(&hashes, "%x  %s\n", sha256.Sum256(goldenBytes(t, out)), c.name)
			}
			checkGolden(t, filepath.Join(dir, "hashes.txt"), []byte(hashes.String()))
		})
	}
	for name, args := range map[string][]string{"scaling.txt": {"scaling"}, "scaling.json": {"scaling", "--json"}} {
		out, errOut, err := run(t, append(args, profiles...)...)
		require.NoError(t, err, errOut)
		checkGolden(t, filepath.Join("testdata", "golden", name), []byte(out))
	}
}

// withFile returns args with the placeholder FILE replaced by path, or
// path appended when there is none.
func withFile(args []string, path string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		if a == "FILE" {
			out[i] = path
			return out
		}
	}
	return append(out, path)
}

// goldenBytes reads an output file as its golden compares it: gzip
// unpacked (the compressor's output may change with Go), the report's
// date of generation removed.
func goldenBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		b, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	return generated.ReplaceAll(b, []byte("Report generated X."))
}

// checkGolden compares got with the golden file at path, or writes it
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file (go test ./cmd/mpiflow -run TestGolden -update writes it)")
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (go test ./cmd/mpiflow -run TestGolden -update rewrites it; review with git diff):\n%s",
			path, firstDiff(string(want), string(got)))
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %.300s\ngot:  %.300s", i+1, wl, gl)
		}
	}
	return "equal lines, different bytes"
}
