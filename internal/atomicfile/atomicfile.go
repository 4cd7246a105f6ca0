// Package atomicfile writes files under a temporary name and renames them
// into place at the end, so that a failed or interrupted write never
// leaves a partial file, nor replaces a good one.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// File is an output file being written under a temporary name in the
// directory of its final path.
type File struct {
	*os.File
	path string
}

// Create creates a temporary file beside path. Like os.Create, it gives
// the file mode 0666 less the umask.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()%1e9, 10))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		return &File{File: f, path: path}, nil
	}
	return nil, fmt.Errorf("create %s: no free temporary name in %s", path, dir)
}

// Path returns the final path.
func (f *File) Path() string { return f.path }

// Commit closes the file and renames it to its final path.
func (f *File) Commit() error {
	err := f.File.Close()
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file.
func (f *File) Abort() {
	f.File.Close()
	os.Remove(f.Name())
}

// Write writes path with write, buffered, through a temporary file.
func Write(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}
