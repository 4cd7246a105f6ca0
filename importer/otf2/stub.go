//go:build !cgo || nootf2

// Package otf2 imports OTF2 archives as state traces. This build has no
// OTF2 support (built without cgo or with the nootf2 tag): Read returns an
// error.
package otf2

import (
	"errors"
	"fmt"

	"mpiflow/importer"
)

// Supported tells whether this build can read OTF2.
const Supported = false

// Read fails: this build has no OTF2 support.
func Read(path string) (*importer.Trace, error) {
	return nil, fmt.Errorf("read %s: %w", path, errors.New("this mpiflow was built without OTF2 support (rebuild with cgo and libotf2-trace-dev installed)"))
}
