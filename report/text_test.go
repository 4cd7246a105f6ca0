package report

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
)

func TestTerminalText(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"MPI_Send\tf.c:12\n", "MPI_Send\tf.c:12\n", `MPI_Send\x09f.c:12\x0a`},
		{"evil\x1b[2Jname", `evil\x1b[2Jname`, `evil\x1b[2Jname`},
		{"c1 \u0085 del \x7f", `c1 \u0085 del \x7f`, `c1 \u0085 del \x7f`},
		{"bad \xff utf8", `bad \xff utf8`, `bad \xff utf8`},
		{"ünïcode ok", "ünïcode ok", "ünïcode ok"},
	} {
		var b strings.Builder
		n, err := TerminalText(&b).Write([]byte(c.in))
		require.NoError(t, err)
		assert.Equal(t, len(c.in), n)
		assert.Equal(t, c.text, b.String(), "%q", c.in)
		assert.Equal(t, c.line, OneLine(c.in), "%q", c.in)
	}
}

// TestMatrixBusiestPairs: a matrix of too many ranks for a grid is
// printed as its busiest pairs, by descending bytes.
func TestMatrixBusiestPairs(t *testing.T) {
	path := filepath.Join("..", "testdata", "profiles", "unusual.mpiflow") // asymmetric, some sends without a destination
	job, err := analysis.Load(path, analysis.Options{NoLoops: true, NoResolve: true, NoSiteTable: true, NoSequences: true})
	require.NoError(t, err)
	require.NotEmpty(t, job.Comm.Cells)
	var b strings.Builder
	require.NoError(t, printMatrix(&b, job.Comm, 2, 3))
	lines := strings.Split(strings.TrimSpace(b.String()[strings.Index(b.String(), "from"):]), "\n")[1:]
	require.Len(t, lines, min(3, len(job.Comm.Cells)))
	assert.Contains(t, b.String(), "busiest")
	prev := int64(-1)
	for _, l := range lines {
		f := strings.Fields(l)
		from, _ := strconv.Atoi(f[0])
		to, _ := strconv.Atoi(f[1])
		var c *analysis.CommCell
		for i := range job.Comm.Cells {
			if job.Comm.Cells[i].From == from && job.Comm.Cells[i].To == to {
				c = &job.Comm.Cells[i]
			}
		}
		require.NotNil(t, c, l)
		assert.Equal(t, strconv.FormatInt(c.Count, 10), f[2])
		if prev >= 0 {
			assert.LessOrEqual(t, c.Bytes, prev)
		}
		prev = c.Bytes
	}

}
