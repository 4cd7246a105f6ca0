package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// TestStatsEscapesFileText: what a file says reaches the terminal escaped:
// no escape sequence, no line forged by a newline in an argument.
func TestStatsEscapesFileText(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 300, Depth: 2, Sites: 5}, 2, 1)
	h.Command = []string{"./app", "x\n# forged    : yes", "\x1b[31mred"}
	h.Executable = "/bin/\x1b]0;title\x07app"
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	for _, args := range [][]string{{"stats", path}, {"loops", path}, {"aggregate", path}} {
		out, _, err := run(t, args...)
		require.NoError(t, err, args)
		assert.NotContains(t, out, "\x1b", args)
		assert.NotContains(t, out, "\x07", args)
		assert.NotContains(t, out, "\n# forged", args)
	}
	out, _, err := run(t, "stats", path)
	require.NoError(t, err)
	assert.Contains(t, out, `# command   : ./app x\x0a# forged    : yes \x1b[31mred`)
}
