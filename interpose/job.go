package main

/*
#include <stdlib.h>
#include <string.h>
#include "mpiflow.h"

static int ops_bcast(const mf_ops *o, void *b, int n) { return o->bcast(b, n); }
static int ops_allreduce(const mf_ops *o, int64_t *v, int n, int op) { return o->allreduce_i64(v, n, op); }
static int ops_exscan(const mf_ops *o, int64_t in, int64_t *out) { return o->exscan_i64(in, out); }
static int ops_gather(const mf_ops *o, const void *s, int n, void *r) { return o->gather(s, n, r); }
static int ops_open(const mf_ops *o, const char *p) { return o->file_open(p); }
static int ops_write_at_all(const mf_ops *o, int64_t off, const void *b, int64_t n) { return o->file_write_at_all(off, b, n); }
static int ops_write_at(const mf_ops *o, int64_t off, const void *b, int64_t n) { return o->file_write_at(off, b, n); }
static int ops_close(const mf_ops *o) { return o->file_close(); }
static void ops_errstr(const mf_ops *o, int code, char *b, int n) { o->error_string(code, b, n); }
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"mpiflow/flowgraph"
)

// comm is the collective communication and file I/O the job file writer
// needs, on all ranks of the job. The C implementation calls MPI; tests use
// a single-process one.
type comm interface {
	Rank() int
	Size() int
	Bcast(b []byte) error               // from rank 0
	Allreduce(v []int64, op int) error  // in place; op is C.MF_SUM, MF_MIN or MF_MAX
	Exscan(v int64) (int64, error)      // 0 on rank 0
	Gather(send []byte) ([]byte, error) // the concatenation on rank 0, nil elsewhere
	Open(path string) error             // collective create, write only
	WriteAtAll(off int64, b []byte) error
	WriteAt(off int64, b []byte) error
	Close() error
}

// Reduction operations of comm.Allreduce.
const (
	opSum = int(C.MF_SUM)
	opMin = int(C.MF_MIN)
	opMax = int(C.MF_MAX)
)

// cComm implements comm with the preload library's MPI helpers.
type cComm struct {
	ops        *C.mf_ops
	rank, size int
}

func (c *cComm) Rank() int { return c.rank }
func (c *cComm) Size() int { return c.size }

func (c *cComm) err(what string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	buf := make([]byte, 512)
	C.ops_errstr(c.ops, rc, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf)))
	return fmt.Errorf("%s: %s", what, C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
}

// cbytes copies b into C memory, which MPI may keep using after a call
// returns (cgo forbids passing Go memory that C retains).
func cbytes(b []byte) (unsafe.Pointer, func()) {
	if len(b) == 0 {
		p := C.malloc(1)
		return p, func() { C.free(p) }
	}
	p := C.CBytes(b)
	return p, func() { C.free(p) }
}

func (c *cComm) Bcast(b []byte) error {
	p, free := cbytes(b)
	defer free()
	rc := C.ops_bcast(c.ops, p, C.int(len(b)))
	copy(b, unsafe.Slice((*byte)(p), len(b)))
	return c.err("MPI_Bcast", rc)
}

func (c *cComm) Allreduce(v []int64, op int) error {
	p := (*C.int64_t)(C.malloc(C.size_t(8 * len(v))))
	defer C.free(unsafe.Pointer(p))
	cv := unsafe.Slice(p, len(v))
	for i := range v {
		cv[i] = C.int64_t(v[i])
	}
	rc := C.ops_allreduce(c.ops, p, C.int(len(v)), C.int(op))
	for i := range v {
		v[i] = int64(cv[i])
	}
	return c.err("MPI_Allreduce", rc)
}

func (c *cComm) Exscan(v int64) (int64, error) {
	var out C.int64_t
	rc := C.ops_exscan(c.ops, C.int64_t(v), &out)
	return int64(out), c.err("MPI_Exscan", rc)
}

func (c *cComm) Gather(send []byte) ([]byte, error) {
	p, free := cbytes(send)
	defer free()
	var recv unsafe.Pointer
	if c.rank == 0 {
		recv = C.malloc(C.size_t(len(send)*c.size + 1))
		defer C.free(recv)
	}
	rc := C.ops_gather(c.ops, p, C.int(len(send)), recv)
	if err := c.err("MPI_Gather", rc); err != nil {
		return nil, err
	}
	if c.rank != 0 {
		return nil, nil
	}
	return C.GoBytes(recv, C.int(len(send)*c.size)), nil
}

func (c *cComm) Open(path string) error {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	return c.err("MPI_File_open "+path, C.ops_open(c.ops, p))
}

func (c *cComm) WriteAtAll(off int64, b []byte) error {
	p, free := cbytes(b)
	defer free()
	return c.err("MPI_File_write_at_all", C.ops_write_at_all(c.ops, C.int64_t(off), p, C.int64_t(len(b))))
}

func (c *cComm) WriteAt(off int64, b []byte) error {
	p, free := cbytes(b)
	defer free()
	return c.err("MPI_File_write_at", C.ops_write_at(c.ops, C.int64_t(off), p, C.int64_t(len(b))))
}

func (c *cComm) Close() error { return c.err("MPI_File_close", C.ops_close(c.ops)) }

// recording is a thread's Rank and the state its timing was finished
// from (nil: none), which the budget may shrink (FitBudgetFrom).
type recording struct {
	*flowgraph.Rank
	timing *flowgraph.TimingState
}

// job is what finalize needs from one rank.
type job struct {
	comm comm
	// ranks returns this rank's data, one recording per thread (thread
	// 0 first), times relative to startUnix.
	ranks     func(startUnix int64) []recording
	initReal  int64 // unix ns at MPI_Init
	wall      int64 // ns from MPI_Init to MPI_Finalize
	keyFields []string
	counters  []string // hardware counter names, one sum per edge
	mpiLib    string
	mpiVer    string
	clock     string
	traces    map[int]string // full trace so far per thread
	traceErrs map[int]error  // why a thread's full trace failed
	env       func(string) string
	// dir is the output directory: MPIFLOW_DIR with its placeholders
	// expanded at MPI_Init (core.c), "" for the working directory
	dir string
	// id is the job's id (core.c's job_id at MPI_Init), which names the
	// job file and fills its header
	id string
	// budget bounds the bytes of each graph's sequences and timing
	// (MPIFLOW_BUDGET; flowgraph.Graph.FitBudget), 0: none
	budget int64
}

// newJob collects the data of the calling rank from the C context.
func newJob(ctx *C.mf_ctx) *job {
	names := callNames(ctx.names, int(ctx.ncalls))
	threads := unsafe.Slice(ctx.threads, int(ctx.nthreads))
	j := &job{
		comm:      &cComm{ops: ctx.ops, rank: int(ctx.rank), size: int(ctx.size)},
		initReal:  int64(ctx.init_real),
		wall:      int64(ctx.finalize_mono - ctx.init_mono),
		mpiLib:    C.GoString(ctx.mpi_library),
		mpiVer:    C.GoString(ctx.mpi_version),
		clock:     C.GoString(ctx.clock),
		traces:    map[int]string{},
		traceErrs: map[int]error{},
		env:       getenv,
		dir:       C.GoString(ctx.output_dir),
		id:        C.GoString(ctx.job),
		budget:    int64(ctx.budget),
	}
	if len(threads) > 0 {
		j.keyFields = keyFields(uint32(threads[0].rec.cfg.keyflags))
	}
	if cs := C.GoString(ctx.counters); cs != "" {
		j.counters = strings.Split(cs, ",")
	}
	for _, t := range threads {
		if t.trace_tmp != nil {
			j.traces[int(t.thread)] = C.GoString(t.trace_tmp)
		}
		if t.trace_err != 0 {
			j.traceErrs[int(t.thread)] = syscall.Errno(t.trace_err)
		}
	}
	regions := unsafe.Slice(ctx.regions, int(ctx.nregions))
	complete := ctx.complete != 0
	initMono := int64(ctx.init_mono)
	j.ranks = func(startUnix int64) []recording {
		var out []recording
		for _, t := range threads {
			rec := t.rec
			r := &flowgraph.Rank{Rank: int(ctx.rank), Thread: int(t.thread), Complete: complete && rec.failed == 0}
			var err error
			var st *flowgraph.TimingState
			if r.Graph, st, err = recGraphTiming(rec, names); err != nil {
				fmt.Fprintf(os.Stderr, "mpiflow: rank %d thread %d: %v\n", int(ctx.rank), int(t.thread), err)
			}
			regionSites(r.Graph.Sites, regions)
			locateSites(r.Graph.Sites)
			if r.Graph.NumEvents > 0 {
				r.Start = j.initReal + (int64(rec.t0) - initMono) - startUnix
			}
			fillProcess(r)
			out = append(out, recording{r, st})
		}
		return out
	}
	return j
}

// keyFields lists the node key fields of recorder key flags (recorder.h's
// MF_KEY_*; call is in every key), in flowgraph's order.
func keyFields(f uint32) []string {
	bits := map[string]uint32{flowgraph.KeySite: C.MF_KEY_SITE, flowgraph.KeyBytes: C.MF_KEY_BYTES,
		flowgraph.KeyPartner: C.MF_KEY_PARTNER, flowgraph.KeyComm: C.MF_KEY_COMM}
	var k []string
	for _, name := range flowgraph.KeyFieldNames() {
		if name == flowgraph.KeyCall || f&bits[name] != 0 {
			k = append(k, name)
		}
	}
	return k
}
