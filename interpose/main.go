// Command interpose is the Go part of mpiflow's LD_PRELOAD interposition
// library, built with -buildmode=c-shared into lib/libmpiflow-go.so.
//
// The interposition itself is plain C: csrc/ holds the MPI wrappers
// (generated from gen/mpi.spec by `go generate`) and the MPI helpers, built
// against one MPI into lib/libmpiflow-<mpi>.so; csrc/recorder.c and the files
// beside it (record.h) hold the event flow graph recorder, shared by both
// libraries (see csrc.go). The C library records
// every MPI call without calling into Go, and at MPI_Finalize it dlopen()s
// the Go library and calls mpiflowFinalize once, which converts the
// recorder's tables into a flowgraph.Rank and writes the job file with
// collective MPI-IO through C helpers.
//
// Loading the Go runtime only at MPI_Finalize keeps it out of every other
// process the preload reaches (mpirun, orted, shells, the application's
// fork/exec children) and out of the application's signal handling until
// the very end; and since the Go part never includes mpi.h, one Go library
// serves Open MPI and MPICH alike.
package main

//go:generate go run ./gen -spec gen/mpi.spec -c csrc/wrappers_gen.c -go wrapped_gen.go -md WRAPPED.md
//go:generate go run ./cfacts -flowgraph ../flowgraph -partial csrc/partial_keys.h -key csrc/key_fields.h

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/csrc
#include "mpiflow.h"
*/
import "C"

import (
	"fmt"
	"os"
)

// mpiflowFinalize is called by the preload library's MPI_Finalize wrapper on
// every rank, collectively, before PMPI_Finalize. It writes the job file and
// returns 0, or 1 (on every rank) after printing why it could not; then the
// preload library keeps each rank's data in a partial file. It never aborts
// the application.
//
//export mpiflowFinalize
func mpiflowFinalize(ctx *C.mf_ctx) (rc C.int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "mpiflow: rank %d: internal error while writing the profile: %v\n", int(ctx.rank), p)
			rc = 1
		}
	}()
	written, err := finalize(newJob(ctx))
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if e != nil {
			fmt.Fprintf(os.Stderr, "mpiflow: %v\n", e)
		}
	}
	if !written {
		return 1
	}
	return 0
}

func main() {}
