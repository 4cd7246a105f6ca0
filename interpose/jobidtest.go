package main

/*
#include <stdlib.h>
#include "jobid.h"
*/
import "C"

import "unsafe"

// This file lets the tests call core.c's job id (csrc/jobid.c) from Go
// (cgo cannot be used in _test.go files).

// cJobID is mf_job_id's answer from the process's environment, with
// whether a variable named the job; n is the size of the C buffer.
func cJobID(n int) (string, bool) {
	buf := (*C.char)(C.malloc(C.size_t(n)))
	defer C.free(unsafe.Pointer(buf))
	ok := C.mf_job_id(buf, C.size_t(n)) != 0
	if !ok {
		return "", false
	}
	return C.GoString(buf), true
}
