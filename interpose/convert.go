package main

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include "mpiflow.h"

// mf_buf is a byte buffer that mf_seqv_encode fills.
typedef struct { uint8_t *p; size_t n; } mf_buf;
static void mf_buf_put(void *ctx, const uint8_t *b, size_t n) {
	mf_buf *w = ctx;
	memcpy(w->p + w->n, b, n);
	w->n += n;
}
static void (*mf_buf_put_fn(void))(void *, const uint8_t *, size_t) { return mf_buf_put; }

// site_object finds the object file holding addr and its load base; ""
// names the main program, which dladdr names by argv[0]: not a path to it
// when the program was found through PATH.
static const char *site_object(uint64_t addr, uint64_t *base) {
	Dl_info info;
	struct link_map *map = NULL;
	if (!dladdr1((void *)(uintptr_t)addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !info.dli_fname) {
		*base = 0;
		return NULL;
	}
	*base = (uint64_t)(uintptr_t)info.dli_fbase;
	if (map && map->l_name && map->l_name[0] == '\0')
		return "";
	return info.dli_fname;
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"mpiflow/flowgraph"
)

// recGraph converts the C recorder's tables into a Graph, exactly as
// flowgraph.Builder.Graph would return it for the same calls: nodes, edges
// and sites in order of first appearance, the timing with its last
// interval closed and the anchors derived from it.
// names maps call numbers to MPI function names. A recorder that ran out
// of memory gives the consistent part of its graph, as its partial file
// would (mf_rec_view). A timing that does not convert is left out (the
// graph's times then come from its node and edge means) and returned as
// the error, for the caller to warn about.
func recGraph(r *C.mf_rec, names []string) (flowgraph.Graph, error) {
	g, _, err := recGraphTiming(r, names)
	return g, err
}

// recGraphTiming is recGraph that also returns the state its timing was
// finished from (nil if it did not convert), for FitBudgetFrom.
func recGraphTiming(r *C.mf_rec, names []string) (flowgraph.Graph, *flowgraph.TimingState, error) {
	ncounters := int(r.cfg.ncounters)
	view := C.mf_rec_view(r)
	g := flowgraph.Graph{Initial: int(r.initial), NumEvents: int64(view.nevents)}
	if view.nevents == 0 {
		g.Initial = -1
	}
	nodes := unsafe.Slice(r.tab.nodes, int(r.tab.nnodes))
	g.Nodes = make([]flowgraph.Node, len(nodes))
	for i := range nodes {
		cn := &nodes[i]
		call := "?"
		if c := int(cn.call); c >= 0 && c < len(names) {
			call = names[c]
		}
		n := flowgraph.Node{
			Key: flowgraph.NodeKey{
				Call:    call,
				Site:    int(cn.site_idx),
				Bytes:   int64(cn.kbytes),
				Partner: int(cn.kpartner),
				Comm:    int(cn.kcomm),
			},
			Count:         int64(cn.count),
			Time:          stat(cn.time),
			Bytes:         stat(cn.bytes),
			OtherPartners: int64(cn.other_partners),
			CommSize:      int(cn.commsize),
		}
		for _, p := range unsafe.Slice(cn.partners, int(cn.npartners)) {
			n.Partners = append(n.Partners, flowgraph.PartnerCount{Rank: int(p.rank), Count: int64(p.count)})
		}
		g.Nodes[i] = n
	}
	edges := unsafe.Slice(r.tab.edges, int(r.tab.nedges))
	if view.drop_edges != 0 {
		edges = nil
	}
	g.Edges = make([]flowgraph.Edge, len(edges))
	for i := range edges {
		ce := &edges[i]
		e := flowgraph.Edge{
			Src:      int(ce.src),
			Dst:      int(ce.dst),
			Count:    int64(C.mf_rec_edge_count(r, ce)),
			Time:     stat(ce.time),
			Counters: make([]int64, ncounters),
		}
		for c := range e.Counters {
			e.Counters[c] = int64(ce.counters[c])
		}
		e.Seq = recSeq(r, ce)
		g.Edges[i] = e
	}
	sites := unsafe.Slice(r.tab.sites, int(r.tab.nsites))
	if len(sites) > 0 {
		g.Sites = make([]flowgraph.CallSite, len(sites))
	}
	for i, a := range sites {
		g.Sites[i].Addr = uint64(a)
	}
	var err error
	var st *flowgraph.TimingState
	if g.Timing, st, err = recTiming(r, g.NumEvents); err != nil {
		err = fmt.Errorf("timing left out: %w", err)
	}
	g.Anchors = g.Timing.Anchors(g.NumEvents)
	return g, st, err
}

// recSeq converts the sequence numbers of edge e through their encoding,
// which the C recorder writes as partial files do, so the conversion and
// the partial files share one path. A sequence that does not decode is
// left empty; the graph then fails Validate and the caller reports it.
func recSeq(r *C.mf_rec, e *C.mf_edge) flowgraph.Seq {
	v := C.mf_rec_seq(r, e)
	n := C.mf_seqv_encode(&v, nil, nil)
	buf := C.malloc(C.size_t(n))
	defer C.free(buf)
	w := C.mf_buf{p: (*C.uint8_t)(buf)}
	C.mf_seqv_encode(&v, C.mf_buf_put_fn(), unsafe.Pointer(&w))
	var s flowgraph.Seq
	s.UnmarshalBinary(C.GoBytes(buf, C.int(n)))
	return s
}

// recTiming converts the recorder's timing of a graph of nev events and
// returns the state it was finished from (nil if none). A recorder that
// failed gives, as its partial file, only the closed intervals whose
// events and gaps are all within nev.
func recTiming(r *C.mf_rec, nev int64) (flowgraph.Timing, *flowgraph.TimingState, error) {
	pub := r.tm.pub[r.tm.pubi]
	spacing, keep, shift := int64(pub.spacing), int(pub.keep), int(pub.shift)
	nibs := pub.len
	if r.failed != 0 {
		nibs = C.mf_timing_prefix(&pub, C.int64_t(max(nev-1, 0)))
	}
	closed := C.GoBytes(unsafe.Pointer(pub.buf), C.int((nibs+1)/2))
	if nibs%2 == 1 {
		closed[len(closed)-1] &= 0xf0 // the nibble after them is not theirs
	}
	if r.failed != 0 {
		// Errors cannot happen but for a bug: the recorder's own encoding.
		tm, err := flowgraph.NewTiming(spacing, keep, shift, closed)
		return tm, nil, err
	}
	st := flowgraph.TimingState{
		Budget:      flowgraph.TimingBudget{Bytes: int(r.tm.budget)/2 + C.MF_TM_HEAD, Intervals: int(r.tm.maxint)},
		Spacing:     spacing,
		Span:        int64(r.tm.span),
		Keep:        keep,
		Shift:       shift,
		Closed:      closed,
		NumClosed:   int64(pub.nclosed),
		ClosedTime:  int64(r.tm.ctime),
		MPIRest:     int64(r.tm.mrest),
		ComputeRest: int64(r.tm.crest),
		RestCarry:   [2]int64{int64(r.tm.rcarry[0]), int64(r.tm.rcarry[1])},
	}
	for ids := C.GoBytes(unsafe.Pointer(r.tm.ids[r.tm.cur]), C.int(r.tm.nids)); len(ids) > 0; {
		id, n := binary.Uvarint(ids)
		st.IDs = append(st.IDs, uint32(id))
		ids = ids[n:]
	}
	for kind := range 2 {
		for _, id := range unsafe.Slice(r.iv.ids[kind], int(r.iv.nids[kind])) {
			st.Open = append(st.Open, flowgraph.TimingEntry{Edge: id&1 == 1, Index: int(id >> 1), Sum: int64(C.mf_timing_sum(r, id))})
		}
	}
	carry := unsafe.Slice(r.tm.carry, int(r.tm.idn))
	for i := range int(r.tab.nnodes) {
		if c := carry[2*i]; c != 0 {
			st.Carry = append(st.Carry, flowgraph.TimingEntry{Index: i, Sum: int64(c)})
		}
	}
	for i := range int(r.tab.nedges) {
		if c := carry[2*i+1]; c != 0 {
			st.Carry = append(st.Carry, flowgraph.TimingEntry{Edge: true, Index: i, Sum: int64(c)})
		}
	}
	tm, err := st.Finish(nev)
	if err != nil {
		return tm, nil, err
	}
	return tm, &st, nil
}

func stat(s C.mf_stat) flowgraph.Stat {
	return flowgraph.Stat{Total: int64(s.total), Min: int64(s.min), Max: int64(s.max)}
}

// regionSites gives the pseudo call sites of MPI_Pcontrol (regions.h)
// their caller's address back, with the level and region name they stand
// for.
func regionSites(sites []flowgraph.CallSite, regions []C.mf_region) {
	for i := range sites {
		s := &sites[i]
		if s.Addr&C.MF_REGION_SITE == 0 || s.Addr&^C.MF_REGION_SITE >= uint64(len(regions)) {
			continue
		}
		rg := &regions[s.Addr&^C.MF_REGION_SITE]
		s.Addr, s.Level, s.Region = uint64(rg.caller), int(rg.level), C.GoString(&rg.name[0])
	}
}

// locateSites fills in Object and Offset of each call site with dladdr:
// Offset is the address minus the object's load base, which
// flowgraph.Resolve maps back to a virtual address of the file. Sites in
// the main program get its path from os.Executable.
func locateSites(sites []flowgraph.CallSite) {
	exe, _ := os.Executable()
	// A program's sites are in a few objects: one copy of each name
	// (dladdr gives the same C string for an object).
	names := map[*C.char]string{}
	for i := range sites {
		var base C.uint64_t
		obj := C.site_object(C.uint64_t(sites[i].Addr), &base)
		if obj == nil {
			continue
		}
		name, ok := names[obj]
		if !ok {
			name = C.GoString(obj)
			switch {
			case name == "":
				name = exe
			case !filepath.IsAbs(name):
				if abs, err := filepath.Abs(name); err == nil {
					name = abs
				}
			}
			names[obj] = name
		}
		sites[i].Object = name
		sites[i].Offset = sites[i].Addr - uint64(base)
	}
}

// callNames copies the C table of call names.
func callNames(names **C.char, n int) []string {
	out := make([]string, n)
	for i, p := range unsafe.Slice(names, n) {
		out[i] = C.GoString(p)
	}
	return out
}
