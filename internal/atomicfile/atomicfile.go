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
	"sync"
)

// pending are the temporary files being written, for RemovePending: a
// signal ends the whole process, so the set is the process's.
var pending = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

func track(name string, on bool) {
	pending.Lock()
	defer pending.Unlock()
	if on {
		pending.names[name] = true
	} else {
		delete(pending.names, name)
	}
}

// RemovePending removes the temporary files of every File not yet
// committed or aborted: what a command interrupted by a signal calls
// before it ends, so that nothing half-written is left behind.
func RemovePending() {
	pending.Lock()
	defer pending.Unlock()
	for name := range pending.names {
		os.Remove(name)
		delete(pending.names, name)
	}
}

// File is an output file being written under a temporary name in the
// directory of its final path, or directly to a path that cannot be
// replaced.
type File struct {
	*os.File
	path   string
	direct bool
}

// Create creates a temporary file beside path. Like os.Create, it gives
// the file mode 0666 less the umask; a file it replaces keeps its
// permissions, and a symbolic link to a file stays a link to the new one.
// A path that names something else than a regular file (a device, a pipe,
// a terminal, as /dev/stdout does) is written directly: it cannot be
// replaced, and is not truncated.
func Create(path string) (*File, error) {
	target, perm := path, os.FileMode(0o666)
	keep := false
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			if fi.IsDir() {
				return nil, fmt.Errorf("create %s: is a directory", path)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("create %s: %w", path, err)
			}
			return &File{File: f, path: path, direct: true}, nil
		}
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
		perm, keep = fi.Mode().Perm(), true
	}
	dir, base := filepath.Split(target)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()%1e9, 10))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if keep {
			// The umask applied at creation: the replaced file's
			// permissions, as they were.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, fmt.Errorf("create %s: %w", path, err)
			}
		}
		track(tmp, true)
		return &File{File: f, path: target}, nil
	}
	return nil, fmt.Errorf("create %s: no free temporary name in %s", path, dir)
}

// Path returns the final path (the file a symbolic link named).
func (f *File) Path() string { return f.path }

// Commit closes the file and renames it to its final path.
func (f *File) Commit() error {
	if !f.direct {
		defer track(f.Name(), false)
	}
	err := f.File.Close()
	if err == nil && !f.direct {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		if !f.direct {
			os.Remove(f.Name())
		}
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file.
func (f *File) Abort() {
	f.File.Close()
	if !f.direct {
		os.Remove(f.Name())
		track(f.Name(), false)
	}
}

// NotInput returns an error when path names one of the files inputs
// (through links too): writing it would destroy what is being read.
func NotInput(path string, inputs ...string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil // nothing there yet
	}
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil && os.SameFile(out, fi) {
			return fmt.Errorf("output %s is the input %s: choose another output", path, in)
		}
	}
	return nil
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
