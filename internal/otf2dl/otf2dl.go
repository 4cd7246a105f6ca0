//go:build cgo && !nootf2

package otf2dl

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "otf2dl.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// Supported tells whether this build can load OTF2 (it can: cgo build).
const Supported = true

var mu sync.Mutex // serializes loading

// Load loads the OTF2 library unless it is loaded already: the path in
// $MPIFLOW_OTF2_LIB if set (and nothing else), else Library, else the
// unversioned libopen-trace-format2.so of the development package. Its
// error names the library, why the dynamic loader refused it and the
// package to install. It is safe for concurrent use; after a failure a
// later call tries again.
func Load() error {
	mu.Lock()
	defer mu.Unlock()
	if C.mf_otf2_loaded() != 0 {
		return nil
	}
	return load(os.Getenv(EnvLib), defaultPaths)
}

// defaultPaths are the libraries Load tries without EnvLib, in order.
var defaultPaths = []string{Library, "libopen-trace-format2.so"}

// load tries env, the value of EnvLib, if set, else each of paths; the
// caller holds mu.
func load(env string, paths []string) error {
	if env != "" {
		paths = []string{env}
	}
	var why []string
	for _, p := range paths {
		err := open(p)
		if err == nil {
			return nil
		}
		why = append(why, err.Error())
	}
	if env != "" {
		return fmt.Errorf("cannot load the OTF2 library (%s, Debian package %s) from %s=%s: %s",
			Library, Package, EnvLib, env, strings.Join(why, "; "))
	}
	return fmt.Errorf("cannot load the OTF2 library %s (install Debian package %s, or set %s to its path): %s",
		Library, Package, EnvLib, strings.Join(why, "; "))
}

// open loads the library at path and looks up the functions; the caller
// holds mu.
func open(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [1024]C.char
	if C.mf_otf2_load(cpath, &buf[0], C.size_t(len(buf))) != 0 {
		return errors.New(C.GoString(&buf[0]))
	}
	return nil
}
