package inputfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "file"), filepath.Join(dir, "fifo")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, c := range []struct{ path, err string }{
		{file, ""},
		{dir, ""},
		{fifo, fifo + ": not a regular file (a named pipe)"},
		{os.DevNull, os.DevNull + ": not a regular file (a character device)"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		f, err := Open(c.path)
		if c.err == "" {
			require.NoError(t, err, c.path)
			f.Close()
			continue
		}
		assert.ErrorContains(t, err, c.err, c.path)
	}
}
