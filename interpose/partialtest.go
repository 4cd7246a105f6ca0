package main

/*
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include "partial.h"

// The signal test: the handler writes the partial file, as the crash paths
// of the preload library will.
static const mf_rec *pt_sig_rec;
static const mf_partial_info *pt_sig_info;
static const char *pt_sig_dir;
static volatile int pt_sig_rc;

static void pt_handler(int sig) {
	(void)sig;
	pt_sig_rc = mf_write_partial(pt_sig_rec, pt_sig_info, pt_sig_dir);
}

// pt_write_in_handler raises SIGUSR2 with a handler that writes the file,
// then restores the previous (Go runtime's) action.
static int pt_write_in_handler(const mf_rec *r, const mf_partial_info *in, const char *dir) {
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pt_handler;
	sa.sa_flags = SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	pt_sig_rec = r;
	pt_sig_info = in;
	pt_sig_dir = dir;
	pt_sig_rc = 1;
	if (sigaction(SIGUSR2, &sa, &old))
		return -1000;
	raise(SIGUSR2);
	sigaction(SIGUSR2, &old, NULL);
	return pt_sig_rc;
}

// pt_drop_last_seq imitates a recorder whose mf_seq_close failed on the
// last event: that edge counted the event but lost its sequence number.
static int pt_drop_last_seq(mf_rec *r) {
	int64_t last = r->nevents - 1;
	for (int32_t i = 0; i < r->tab.nedges; i++) {
		mf_edge *e = &r->tab.edges[i];
		if (e->ocount == 0 || e->ostart + (e->ocount - 1) * e->ostride != last)
			continue;
		if (--e->ocount == 0)
			e->ostart = e->ostride = 0;
		r->failed = 1;
		mf_rec_mode(r);
		return 0;
	}
	return -1;
}
*/
import "C"

import (
	"errors"
	"syscall"
	"unsafe"

	"mpiflow/flowgraph"
)

// This file drives the C partial-file writer (csrc/partial.c) from Go so that
// partial_test.go can compare its output with the Go conversion (cgo cannot
// be used in _test.go files). Nothing here is exported from the library.

// partialSite is a call site resolved in advance (mf_partial_site).
type partialSite struct {
	Obj string
	Off uint64
}

// partialRegion is a region of MPI_Pcontrol (mf_region).
type partialRegion struct {
	Caller uint64
	Level  int
	Name   string
}

// cRegions makes a C table of regions, kept until a is freed.
func (a *cAlloc) regions(rs []partialRegion) *C.mf_region {
	if len(rs) == 0 {
		return nil
	}
	t := (*C.mf_region)(C.calloc(C.size_t(len(rs)), C.size_t(unsafe.Sizeof(C.mf_region{}))))
	*a = append(*a, unsafe.Pointer(t))
	for i, r := range rs {
		cr := &unsafe.Slice(t, len(rs))[i]
		cr.caller, cr.level = C.uint64_t(r.Caller), C.int32_t(r.Level)
		for k := 0; k < len(r.Name) && k < len(cr.name)-1; k++ {
			cr.name[k] = C.char(r.Name[k])
		}
	}
	return t
}

// convertRegions does what the conversion at MPI_Finalize does with the
// pseudo call sites of MPI_Pcontrol (regionSites).
func convertRegions(sites []flowgraph.CallSite, rs []partialRegion) {
	var a cAlloc
	defer a.free()
	regionSites(sites, unsafe.Slice(a.regions(rs), len(rs)))
}

// partialInfo mirrors mf_partial_info; a nil Argv is passed as NULL.
type partialInfo struct {
	Rank, Size, Thread                  int
	Host, JobID, Exe                    string
	Argv                                []string
	StartUnix, InitReal, InitMono, Wall int64
	MPILib, MPIVer, Clock, Counters     string
	Names                               []string
	Sites                               []partialSite
	Regions                             []partialRegion
	Rusage                              bool
	Complete                            bool // the rank reached MPI_Finalize
	BufLen                              int  // 0: the writer's static buffer
	InHandler                           bool // write from a signal handler
}

// cAlloc keeps C allocations until free.
type cAlloc []unsafe.Pointer

func (a *cAlloc) str(s string) *C.char {
	p := C.CString(s)
	*a = append(*a, unsafe.Pointer(p))
	return p
}

func (a *cAlloc) strs(ss []string) **C.char {
	if ss == nil {
		return nil
	}
	arr := (**C.char)(C.calloc(C.size_t(len(ss)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	*a = append(*a, unsafe.Pointer(arr))
	for i, s := range ss {
		unsafe.Slice(arr, len(ss))[i] = a.str(s)
	}
	return arr
}

func (a *cAlloc) free() {
	for _, p := range *a {
		C.free(p)
	}
}

// writePartial writes the partial file of r into dir; it returns the
// file's path and the writer's error (a syscall.Errno for negative codes).
func (r *recorder) writePartial(in partialInfo, dir string) (string, error) {
	var a cAlloc
	defer a.free()
	ci := (*C.mf_partial_info)(C.calloc(1, C.size_t(unsafe.Sizeof(C.mf_partial_info{}))))
	a = append(a, unsafe.Pointer(ci))
	ci.rank, ci.size, ci.thread = C.int(in.Rank), C.int(in.Size), C.int(in.Thread)
	ci.host = a.str(in.Host)
	if in.JobID != "" {
		ci.job_id = a.str(in.JobID)
	}
	if in.Exe != "" {
		ci.exe = a.str(in.Exe)
	}
	ci.argv, ci.argc = a.strs(in.Argv), C.int(len(in.Argv))
	ci.start_unix, ci.init_real = C.int64_t(in.StartUnix), C.int64_t(in.InitReal)
	ci.init_mono, ci.wall = C.int64_t(in.InitMono), C.int64_t(in.Wall)
	ci.mpi_library, ci.mpi_version = a.str(in.MPILib), a.str(in.MPIVer)
	ci.clock, ci.counters = a.str(in.Clock), a.str(in.Counters)
	ci.names, ci.ncalls = a.strs(in.Names), C.int(len(in.Names))
	if len(in.Sites) > 0 {
		sites := (*C.mf_partial_site)(C.calloc(C.size_t(len(in.Sites)), C.size_t(unsafe.Sizeof(C.mf_partial_site{}))))
		a = append(a, unsafe.Pointer(sites))
		for i, s := range in.Sites {
			cs := &unsafe.Slice(sites, len(in.Sites))[i]
			if s.Obj != "" {
				cs.obj = a.str(s.Obj)
			}
			cs.off = C.uint64_t(s.Off)
		}
		ci.sites, ci.nsites = sites, C.int(len(in.Sites))
	}
	ci.regions, ci.nregions = a.regions(in.Regions), C.int(len(in.Regions))
	if in.Complete {
		ci.complete = 1
	}
	if in.Rusage {
		ci.rusage = 1
	}
	if in.BufLen > 0 {
		buf := C.malloc(C.size_t(in.BufLen))
		a = append(a, buf)
		ci.buf, ci.buflen = (*C.uint8_t)(buf), C.size_t(in.BufLen)
	}
	cdir := a.str(dir)
	path := make([]byte, 4096)
	n := C.mf_partial_path(ci, cdir, (*C.char)(unsafe.Pointer(&path[0])), C.size_t(len(path)))
	if n < 0 {
		return "", syscall.Errno(-n)
	}
	var rc C.int
	if in.InHandler {
		rc = C.pt_write_in_handler(r.r, ci, cdir)
	} else {
		rc = C.mf_write_partial(r.r, ci, cdir)
	}
	if rc != 0 {
		return "", syscall.Errno(-rc)
	}
	return string(path[:n]), nil
}

// dropLastSeq makes r look like a recorder whose last sequence-run append
// ran out of memory (failed set, one edge count ahead of its runs).
func (r *recorder) dropLastSeq() error {
	if C.pt_drop_last_seq(r.r) != 0 {
		return errors.New("no edge holds the last event")
	}
	return nil
}

// setFailed marks r as out of memory, as mf_record's slow paths do.
func (r *recorder) setFailed() {
	r.r.failed = 1
	C.mf_rec_mode(r.r)
}

// recT0 is the recorder's clock at event 0.
func (r *recorder) recT0() int64 { return int64(r.r.t0) }
