package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
)

func TestSniff(t *testing.T) {
	dir := t.TempDir()
	files := []struct {
		name, data string
		want       Format
		err        string
	}{
		{"a.mpiflow", "MPIFLOW\x00\x00\x00\x00\x01", FormatMpiflow, ""},
		{"a.paje", "# comment\n%EventDef PajeSetState 1\n", FormatPaje, ""},
		{"traces.otf2", "\x00binary", FormatOTF2, ""},
		{"a.txt", "hello\n", "", "unknown trace format"},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		require.NoError(t, os.WriteFile(p, []byte(f.data), 0o644))
		got, err := Sniff(p)
		if f.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), f.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, f.want, got, f.name)
	}
	_, err := Sniff(filepath.Join(dir, "missing"))
	require.Error(t, err)
	_, err = Sniff(dir)
	require.Error(t, err)
}

func TestMapStates(t *testing.T) {
	tr, err := ParsePaje(strings.NewReader(pajeDefs+pajeBody), "t.paje", PajeOptions{})
	require.NoError(t, err)
	tr.MapStates(func(s string) string {
		if s == "Compute" {
			return s
		}
		return aggregate.CallGroup(s)
	})
	assert.Equal(t, []string{"Compute", aggregate.GroupP2P, aggregate.GroupWait}, tr.StateNames)
	assert.Equal(t, 1, tr.Events[0][1].State, "MPI_Send is p2p")
	assert.Equal(t, 2, tr.Events[1][1].State, "MPI_Wait is wait")
}
