package main

/*
#include <stdlib.h>
#include <fcntl.h>
#include "record.h"

static mf_rec *rt_new(uint32_t flags, int64_t bytes, int64_t intervals) {
	mf_rec *r = malloc(sizeof(mf_rec));
	if (r && mf_rec_init(r, flags, bytes, intervals)) {
		free(r);
		return NULL;
	}
	return r;
}
static void rt_free(mf_rec *r) { mf_rec_free(r); free(r); }
// the thread CPU time of the tests: their clock less rt_lost
static int64_t rt_lost;
static int64_t rt_cpu(const mf_rec *r) { return r->last_exit - rt_lost; }
static void rt_set_lost(int64_t ns) { rt_lost = ns; }
static void rt_fast(mf_rec *r, int on) {
	r->cfg.tight_ok = on;
	r->cpu_now = rt_cpu;
	r->cpu_clean = MF_TIGHT_CLEAN;
}
// how many events rt_add counted through mf_rep_quick
static int64_t rt_quick;
static int64_t rt_quick_count(void) { return rt_quick; }
static int rt_add(mf_rec *r, int32_t call, uint64_t site, int64_t bytes, int32_t partner, int32_t comm, int32_t commsize, int64_t enter, int64_t exit, const int64_t *cin, const int64_t *cout) {
	mf_event ev = {.call = call, .partner = partner, .comm = comm, .commsize = commsize, .site = site, .bytes = bytes, .enter = enter, .exit = exit, .cin = cin, .cout = cout};
	// as the wrappers do: those of calls without a partner first try
	// mf_rep_quick, on a handle of the communicator (here its id and
	// size: one handle, one size)
	const uintptr_t h = ((uint64_t)(uint32_t)comm << 32 | (uint32_t)commsize) + 1;
	if (partner < 0 && mf_rep_quick(r, call, site, h) && mf_rep_count(r, bytes)) {
		rt_quick++;
		return 2;
	}
	int how = mf_repeat(r, call, site);
	if (how)
		mf_record_repeat(r, &ev, how);
	else
		mf_record(r, &ev);
	if (partner < 0)
		r->rep_handle = h;
	return how;
}
static int rt_trace(mf_rec *r, const char *path, int rank) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	return mf_trace_open(r, fd, rank);
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"mpiflow/flowgraph"
)

// This file drives the C recorder from Go so that the tests can compare it
// with flowgraph.Builder (cgo cannot be used in _test.go files).

// recorder is a C recorder owned by Go.
type recorder struct {
	r *C.mf_rec
}

// newRecorder returns an empty C recorder with the given MPIFLOW_KEY value,
// most timing intervals (MPIFLOW_ANCHORS) and number of counters, and the
// default timing budget.
func newRecorder(key string, intervals, ncounters int) (*recorder, error) {
	return newRecorderBudget(key, flowgraph.TimingBudget{Intervals: intervals}, ncounters)
}

// newRecorderBudget returns an empty C recorder with the given MPIFLOW_KEY
// value, timing budget and number of counters.
func newRecorderBudget(key string, tb flowgraph.TimingBudget, ncounters int) (*recorder, error) {
	if ncounters < 0 || ncounters > C.MF_MAX_COUNTERS {
		return nil, errors.New("too many counters")
	}
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	var flags C.uint32_t
	if C.mf_parse_key(ck, &flags) != 0 {
		return nil, errors.New("bad key " + key)
	}
	r := C.rt_new(flags, C.int64_t(tb.Bytes), C.int64_t(tb.Intervals))
	if r == nil {
		return nil, errors.New("out of memory")
	}
	r.cfg.ncounters = C.int32_t(ncounters)
	C.mf_rec_mode(r)
	return &recorder{r: r}, nil
}

// recEvent is one call for the C recorder; Call numbers index the names
// passed to graph.
type recEvent struct {
	Call                    int
	Site                    uint64
	Bytes                   int64
	Partner, Comm, CommSize int
	Enter, Exit             int64
	// Counter values at Enter and Exit; as many as the recorder has.
	CountersEnter, CountersExit []int64
}

// add records e as the wrappers do and returns mf_repeat's answer (0:
// mf_record; see record.h for the others).
func (r *recorder) add(e recEvent) int {
	var cin, cout *C.int64_t
	if len(e.CountersEnter) > 0 {
		cin = (*C.int64_t)(unsafe.Pointer(&e.CountersEnter[0]))
		cout = (*C.int64_t)(unsafe.Pointer(&e.CountersExit[0]))
	}
	return int(C.rt_add(r.r, C.int32_t(e.Call), C.uint64_t(e.Site), C.int64_t(e.Bytes), C.int32_t(e.Partner), C.int32_t(e.Comm), C.int32_t(e.CommSize), C.int64_t(e.Enter), C.int64_t(e.Exit), cin, cout))
}

// peek is mf_repeat's answer for e, which it does not record.
func (r *recorder) peek(e recEvent) int {
	return int(C.mf_repeat(r.r, C.int32_t(e.Call), C.uint64_t(e.Site)))
}

// quickRepeats is how many events add has counted through mf_rep_quick,
// the wrappers' path for untimed repeats of calls without a partner.
func quickRepeats() int64 { return int64(C.rt_quick_count()) }

// tightQuiet is MF_TIGHT_QUIET: how many repeats of a node are all timed
// after an unusual time.
const tightQuiet = C.MF_TIGHT_QUIET

// fastRepeats allows (or with false forbids, as MPIFLOW_EXACT=1 does)
// timing only a sample of fast runs of repeats (MF_TIGHT_NS), with a
// thread CPU time that follows the events' clock (less lostCPU) and
// enough probes that found the thread running.
func (r *recorder) fastRepeats(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.rt_fast(r.r, C.int(v))
}

// lostCPU sets the time the thread of every test recorder has not run.
func lostCPU(ns int64) { C.rt_set_lost(C.int64_t(ns)) }

// resetProbes forgets the probes that found the thread running.
func (r *recorder) resetProbes() { r.r.cpu_clean = 0 }

// Fast repeats' probes of the thread's CPU time (tight.h).
const (
	tightProbeNS = C.MF_TIGHT_PROBE_NS
	tightClean   = C.MF_TIGHT_CLEAN
	tightCalmNS  = C.MF_TIGHT_CALM_NS
	tightRecover = C.MF_TIGHT_RECOVER
)

// sample sets MPIFLOW_SAMPLE (a power of two).
func (r *recorder) sample(k int) { r.r.cfg.sample_mask = C.int64_t(k - 1) }

// repeats is how many events went through mf_record_repeat's untimed
// path and are still to be settled.
func (r *recorder) pending() int64 { return int64(r.r.pending) }

// prevNode is the node of the event recorded last.
func (r *recorder) prevNode() int { return int(r.r.prev) }

// got corrects node ni, whose event was recorded with posted bytes, for the
// got bytes it received (mf_node_got, as the completion calls do).
func (r *recorder) got(ni int, posted, got int64) {
	C.mf_node_got(r.r, C.int32_t(ni), C.int64_t(posted), C.int64_t(got))
}

// settle ends the recording as MPI_Finalize does.
func (r *recorder) settle() {
	if r.r.pending > 0 {
		C.mf_settle(r.r, C.INT64_MIN, 0)
	}
}

// graph is recGraph's graph; a timing that does not convert panics, so
// that tests see it.
func (r *recorder) graph(names []string) flowgraph.Graph {
	g, err := recGraph(r.r, names)
	if err != nil {
		panic(err)
	}
	return g
}

func (r *recorder) keyFlags() uint32 { return uint32(r.r.cfg.keyflags) }

// graphErr is recGraph of the recorder, after breaking its published
// timing (a spacing the file format refuses) when broken.
func (r *recorder) graphErr(names []string, broken bool) (flowgraph.Graph, error) {
	if broken {
		r.r.tm.pub[r.r.tm.pubi].spacing = 3
	}
	return recGraph(r.r, names)
}

// trace starts the full trace into path.
func (r *recorder) trace(path string, rank int) error {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	if C.rt_trace(r.r, p, C.int(rank)) != 0 {
		return errors.New("cannot start trace " + path)
	}
	return nil
}

// closeTrace ends the full trace with the node table.
func (r *recorder) closeTrace(names []string) error {
	cn := make([]*C.char, len(names))
	for i, n := range names {
		cn[i] = C.CString(n)
		defer C.free(unsafe.Pointer(cn[i]))
	}
	arr := (**C.char)(C.malloc(C.size_t(len(cn)) * C.size_t(unsafe.Sizeof(cn[0]))))
	defer C.free(unsafe.Pointer(arr))
	copy(unsafe.Slice(arr, len(cn)), cn)
	if C.mf_trace_close(r.r, arr, C.int(len(names))) != 0 {
		return errors.New("trace close failed")
	}
	return nil
}

func (r *recorder) free() {
	C.rt_free(r.r)
	r.r = nil
}
