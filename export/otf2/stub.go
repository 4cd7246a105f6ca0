//go:build !cgo || nootf2

// Package otf2 writes reconstructed mpiflow traces as OTF2 archives. This
// build has no OTF2 support (built without cgo or with the nootf2 tag):
// Write returns an error.
package otf2

import (
	"errors"
	"path/filepath"
	"strings"

	"mpiflow/export"
	"mpiflow/flowgraph"
)

// Supported tells whether this build can write OTF2.
const Supported = false

// ComputeRegion is the name of the region of compute phases.
const ComputeRegion = "Compute"

// ArchivePaths splits an output path into the archive directory and name
// (see the cgo build).
func ArchivePaths(path string) (dir, name string) {
	if strings.HasSuffix(path, ".otf2") {
		return filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".otf2")
	}
	return path, "traces"
}

// errNotBuilt is the error of every function of this build.
var errNotBuilt = errors.New("this mpiflow was built without OTF2 support (rebuild with cgo and libotf2-trace-dev installed)")

// Available fails: this build has no OTF2 support.
func Available() error { return errNotBuilt }

// Write fails: this build has no OTF2 support.
func Write(path string, f *flowgraph.File, opt export.Options) (export.Stats, error) {
	return export.Stats{}, errNotBuilt
}
