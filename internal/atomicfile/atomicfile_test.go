package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	require.NoError(t, Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "first")
		return err
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "0666 less the umask, as os.Create")

	// A failed write keeps the old file and leaves no temporary file.
	boom := errors.New("boom")
	err = Write(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), path)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	// An unwritable directory is an error naming the file.
	err = Write(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "missing", "x"))
}

func TestAbort(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "a"))
	require.NoError(t, err)
	_, err = f.WriteString("x")
	require.NoError(t, err)
	f.Abort()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
