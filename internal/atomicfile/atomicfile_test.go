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

// TestRemovePending: the temporary files of the files still being
// written are removed; committed and aborted ones are not tracked.
func TestRemovePending(t *testing.T) {
	dir := t.TempDir()
	done, err := Create(filepath.Join(dir, "done"))
	require.NoError(t, err)
	require.NoError(t, done.Commit())
	aborted, err := Create(filepath.Join(dir, "aborted"))
	require.NoError(t, err)
	aborted.Abort()
	var open []*File
	for _, name := range []string{"a", "b"} {
		f, err := Create(filepath.Join(dir, name))
		require.NoError(t, err)
		_, err = f.WriteString("half")
		require.NoError(t, err)
		open = append(open, f)
	}
	RemovePending()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "done", entries[0].Name(), "only the committed file is left")
	for _, f := range open {
		f.Close()
	}
}

// TestReplace: a replaced file keeps its permissions, a symbolic link
// stays a link to the new file, and what is not a regular file is written
// directly, not replaced.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	write := func(path, s string) error {
		return Write(path, func(w io.Writer) error { _, err := io.WriteString(w, s); return err })
	}
	private := filepath.Join(dir, "private")
	require.NoError(t, os.WriteFile(private, []byte("old"), 0o600))
	require.NoError(t, write(private, "new"))
	st, err := os.Stat(private)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(private, link))
	require.NoError(t, write(link, "through the link"))
	lst, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, lst.Mode()&os.ModeSymlink, "still a link")
	b, err := os.ReadFile(private)
	require.NoError(t, err)
	assert.Equal(t, "through the link", string(b))

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	require.NoError(t, write(fifo, "to the reader"))
	assert.Equal(t, "to the reader", <-got)
	st, err = os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeNamedPipe, "still a pipe")
	require.NoError(t, write(os.DevNull, "nothing"))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary file left")
	require.Error(t, write(dir, "x"), "a directory")
}

// TestNotInput: an output that is an input, by name, link or hard link,
// is refused.
func TestNotInput(t *testing.T) {
	dir := t.TempDir()
	in, other := filepath.Join(dir, "in"), filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(in, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(other, []byte("y"), 0o644))
	require.NoError(t, os.Symlink(in, filepath.Join(dir, "sym")))
	require.NoError(t, os.Link(in, filepath.Join(dir, "hard")))
	for _, out := range []string{in, filepath.Join(dir, "sym"), filepath.Join(dir, "hard"), filepath.Join(dir, ".", "in")} {
		err := NotInput(out, other, in)
		require.Error(t, err, out)
		assert.Contains(t, err.Error(), in)
	}
	assert.NoError(t, NotInput(other, in))
	assert.NoError(t, NotInput(filepath.Join(dir, "new"), in))
}
