// Package inputfile opens the files mpiflow reads, refusing those that
// are not files: a named pipe would block the reader until something
// writes to it, and a device may never end.
package inputfile

import (
	"fmt"
	"io/fs"
	"os"
)

// Check returns an error naming path when it is neither a regular file
// nor a directory; a missing path is the error os.Stat gives.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := st.Mode(); !m.IsRegular() && !m.IsDir() {
		return fmt.Errorf("%s: not a regular file (%s)", path, kind(m))
	}
	return nil
}

// Open opens path to read after Check.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
