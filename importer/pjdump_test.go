package importer

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pjDump runs PajeNG's pj_dump on path with flags and returns its lines;
// it skips the test when pj_dump is not installed.
func pjDump(t *testing.T, path string, flags ...string) []string {
	t.Helper()
	bin, err := exec.LookPath("pj_dump")
	if err != nil {
		t.Skip("pj_dump (pajeng) is not installed: scripts/install-deps.sh installs it")
	}
	out, err := exec.Command(bin, append(append([]string{"-l", "9"}, flags...), path)...).Output()
	require.NoError(t, err, "pj_dump %s", path)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	// The flex reader keeps the quotes of quoted strings.
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, `"`, "")
	}
	return lines
}

// flatInterval is a time interval in one state, the innermost one, with
// times in ns.
type flatInterval struct {
	Start, End int64
	State      string
}

// flatten turns nested states (start, end, depth, value) into the
// intervals of the innermost state, merging neighbours in one state, as
// the importer flattens them.
func flatten(t *testing.T, states [][]string) []flatInterval {
	type nested struct {
		start, end int64
		depth      float64
		value      string
	}
	var ns []nested
	var cuts []int64
	for _, f := range states {
		s, err := parseTime(f[3])
		require.NoError(t, err)
		e, err := parseTime(f[4])
		require.NoError(t, err)
		d, err := strconv.ParseFloat(f[6], 64)
		require.NoError(t, err)
		ns = append(ns, nested{s, e, d, f[7]})
		cuts = append(cuts, s, e)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []flatInterval
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		best := -1
		for k, n := range ns {
			if n.start <= a && n.end >= b && (best < 0 || n.depth > ns[best].depth) {
				best = k
			}
		}
		if best < 0 {
			continue
		}
		out = appendFlat(out, flatInterval{a, b, ns[best].value})
	}
	return out
}

func appendFlat(out []flatInterval, iv flatInterval) []flatInterval {
	if n := len(out); n > 0 && out[n-1].End == iv.Start && out[n-1].State == iv.State {
		out[n-1].End = iv.End
		return out
	}
	return append(out, iv)
}

// TestPajeAgainstPjDump imports hand-written traces that use every event
// of the Pajé format, in both header styles, and compares the containers
// and each container's states with what PajeNG's pj_dump makes of them
// (with its default and its flex reader).
func TestPajeAgainstPjDump(t *testing.T) {
	tests := []struct {
		file  string
		flags []string
		// states is the number of State lines pj_dump prints, so a
		// reader that stops early cannot pass.
		states int
	}{
		{"pajeng-all.paje", nil, 9},
		{"pajeng-old.paje", []string{"-n"}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			lines := pjDump(t, path, tt.flags...)
			assert.Equal(t, lines, pjDump(t, path, append(tt.flags, "-f")...), "the flex reader reads the same")

			wantTree := map[string]string{} // container name -> parent name
			wantStates := map[string][][]string{}
			n := 0
			for _, l := range lines {
				f := strings.Split(l, ", ")
				switch f[0] {
				case "Container":
					if f[6] != "0" {
						wantTree[f[6]] = f[1]
					}
				case "State":
					wantStates[f[1]] = append(wantStates[f[1]], f)
					n++
				}
			}
			require.Equal(t, tt.states, n, "pj_dump states")

			tr, err := ReadPaje(path, PajeOptions{})
			require.NoError(t, err)
			gotTree := map[string]string{}
			for _, c := range tr.Containers {
				parent := "0"
				if c.Parent >= 0 {
					parent = tr.Containers[c.Parent].Name
				}
				gotTree[c.Name] = parent
			}
			assert.Equal(t, wantTree, gotTree, "containers and their parents")

			got := map[string][]flatInterval{}
			for r, evs := range tr.Events {
				var out []flatInterval
				for _, ev := range evs {
					out = appendFlat(out, flatInterval{ev.Start, ev.End, tr.StateNames[ev.State]})
				}
				got[tr.Res[r].Name] = out
			}
			want := map[string][]flatInterval{}
			for c, st := range wantStates {
				want[c] = flatten(t, st)
			}
			assert.Equal(t, want, got, "states per container")
		})
	}
}
