//go:build !cgo || nootf2

package otf2dl

import "errors"

// Supported tells whether this build can load OTF2 (it cannot).
const Supported = false

// Load fails: this build has no OTF2 support.
func Load() error {
	return errors.New("this mpiflow was built without OTF2 support (rebuild with cgo and libotf2-trace-dev installed)")
}
