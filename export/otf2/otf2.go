//go:build cgo && !nootf2

// Package otf2 writes reconstructed mpiflow traces as OTF2 archives through
// the OTF2 C library (cgo; built with Debian package libotf2-trace-dev), so
// Vampir, Score-P's tools and otf2-print read them. The library is loaded
// with dlopen on first use (internal/otf2dl): mpiflow runs without it, and
// Write says which package to install when it is missing.
//
// What the archive holds:
//   - system tree: one root "machine" node, one "node" per host; one
//     location group (MPI process) per rank under its host, one location
//     (CPU thread) per recorded rank/thread block;
//   - one region per MPI call name (paradigm MPI, with a role from the
//     call's kind) and one "Compute" region;
//   - per MPI call: Enter, Leave, and in between MpiSend (blocking sends,
//     at the Enter time), MpiRecv (blocking receives, at the Leave time),
//     or MpiCollectiveBegin/End for blocking collectives; per compute phase
//     between two calls: Enter/Leave of Compute.
//
// What is approximated, because the event flow graph does not keep it per
// call: times inside an anchor interval come from the reconstruction (see
// flowgraph.EventIter); the message size is the node's key bytes or else
// its mean bytes; the partner is the node's key partner or else its only
// partner, and without one known partner no MpiSend/MpiRecv is written;
// every message and collective is put on MPI_COMM_WORLD with tag 0 and, for
// rooted collectives, an undefined root; collectives send and receive the
// node's bytes. Non-blocking calls (MPI_Isend, MPI_Iallreduce, ...) get
// only Enter/Leave, since their requests are not recorded. Messages to
// ranks left out by the rank selection are not written.
package otf2

/*
#cgo CFLAGS: -I${SRCDIR}/../../internal/otf2dl
#include <stdlib.h>
#include "otf2dl.h"

static OTF2_FlushType mf_pre_flush(void* userData, OTF2_FileType fileType, OTF2_LocationRef location, void* callerData, bool final) {
	return OTF2_FLUSH;
}

static OTF2_TimeStamp mf_post_flush(void* userData, OTF2_FileType fileType, OTF2_LocationRef location) {
	return 0;
}

static OTF2_FlushCallbacks mf_flush = { .otf2_pre_flush = mf_pre_flush, .otf2_post_flush = mf_post_flush };

static OTF2_ErrorCode mf_set_flush(OTF2_Archive* a) {
	return mf_OTF2_Archive_SetFlushCallbacks(a, &mf_flush, NULL);
}

enum { MF_ENTER, MF_LEAVE, MF_SEND, MF_RECV, MF_CBEGIN, MF_CEND };

// mf_rec is one event record; a batch of them is written by one cgo call,
// since a cgo call costs more than writing one record.
typedef struct {
	uint64_t t;
	uint64_t b; // bytes
	uint32_t a; // region, partner or collective op
	uint32_t kind;
} mf_rec;

static OTF2_ErrorCode mf_write(OTF2_EvtWriter* w, const mf_rec* r, size_t n) {
	OTF2_ErrorCode err = OTF2_SUCCESS;
	for (size_t i = 0; i < n && err == OTF2_SUCCESS; i++) {
		switch (r[i].kind) {
		case MF_ENTER: err = mf_OTF2_EvtWriter_Enter(w, NULL, r[i].t, r[i].a); break;
		case MF_LEAVE: err = mf_OTF2_EvtWriter_Leave(w, NULL, r[i].t, r[i].a); break;
		case MF_SEND: err = mf_OTF2_EvtWriter_MpiSend(w, NULL, r[i].t, r[i].a, 0, 0, r[i].b); break;
		case MF_RECV: err = mf_OTF2_EvtWriter_MpiRecv(w, NULL, r[i].t, r[i].a, 0, 0, r[i].b); break;
		case MF_CBEGIN: err = mf_OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, r[i].t); break;
		case MF_CEND: err = mf_OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, r[i].t, (OTF2_CollectiveOp)r[i].a, 0, OTF2_UNDEFINED_UINT32, r[i].b, r[i].b); break;
		}
	}
	return err;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"mpiflow/export"
	"mpiflow/flowgraph"
	"mpiflow/internal/otf2dl"
)

// Supported tells whether this build can handle OTF2 (it can: cgo build).
// Whether the OTF2 library is there is Available's question.
const Supported = true

// Available loads the OTF2 library unless it is loaded already; its error
// names the library and the package that installs it (see otf2dl.Load).
func Available() error { return otf2dl.Load() }

// otf2Err turns an OTF2 error code into an error naming what failed.
func otf2Err(what string, code C.OTF2_ErrorCode) error {
	if code == C.OTF2_SUCCESS {
		return nil
	}
	return fmt.Errorf("otf2: %s: %s (%s)", what, C.GoString(C.mf_OTF2_Error_GetName(code)), C.GoString(C.mf_OTF2_Error_GetDescription(code)))
}

// ArchivePaths splits an output path into the archive directory and name:
// "dir/name.otf2" is the anchor file of archive name in dir; any other
// path is a directory that gets the archive "traces" (as Score-P names it).
func ArchivePaths(path string) (dir, name string) {
	if strings.HasSuffix(path, ".otf2") {
		return filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".otf2")
	}
	return path, "traces"
}

// Kind is what an MPI call is for OTF2.
type Kind int

// Kinds of MPI calls.
const (
	KindOther      Kind = iota // only Enter/Leave
	KindSend                   // blocking send: MpiSend
	KindRecv                   // blocking receive: MpiRecv
	KindSendRecv               // MPI_Sendrecv: MpiSend and MpiRecv
	KindCollective             // blocking collective: MpiCollectiveBegin/End
)

type callInfo struct {
	kind Kind
	role C.OTF2_RegionRole
	op   C.OTF2_CollectiveOp
}

var collectiveOps = map[string]struct {
	op   C.OTF2_CollectiveOp
	role C.OTF2_RegionRole
}{
	"barrier":              {C.OTF2_COLLECTIVE_OP_BARRIER, C.OTF2_REGION_ROLE_BARRIER},
	"bcast":                {C.OTF2_COLLECTIVE_OP_BCAST, C.OTF2_REGION_ROLE_COLL_ONE2ALL},
	"gather":               {C.OTF2_COLLECTIVE_OP_GATHER, C.OTF2_REGION_ROLE_COLL_ALL2ONE},
	"gatherv":              {C.OTF2_COLLECTIVE_OP_GATHERV, C.OTF2_REGION_ROLE_COLL_ALL2ONE},
	"scatter":              {C.OTF2_COLLECTIVE_OP_SCATTER, C.OTF2_REGION_ROLE_COLL_ONE2ALL},
	"scatterv":             {C.OTF2_COLLECTIVE_OP_SCATTERV, C.OTF2_REGION_ROLE_COLL_ONE2ALL},
	"allgather":            {C.OTF2_COLLECTIVE_OP_ALLGATHER, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"allgatherv":           {C.OTF2_COLLECTIVE_OP_ALLGATHERV, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"alltoall":             {C.OTF2_COLLECTIVE_OP_ALLTOALL, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"alltoallv":            {C.OTF2_COLLECTIVE_OP_ALLTOALLV, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"alltoallw":            {C.OTF2_COLLECTIVE_OP_ALLTOALLW, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"allreduce":            {C.OTF2_COLLECTIVE_OP_ALLREDUCE, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"reduce":               {C.OTF2_COLLECTIVE_OP_REDUCE, C.OTF2_REGION_ROLE_COLL_ALL2ONE},
	"reduce_scatter":       {C.OTF2_COLLECTIVE_OP_REDUCE_SCATTER, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"reduce_scatter_block": {C.OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, C.OTF2_REGION_ROLE_COLL_ALL2ALL},
	"scan":                 {C.OTF2_COLLECTIVE_OP_SCAN, C.OTF2_REGION_ROLE_COLL_OTHER},
	"exscan":               {C.OTF2_COLLECTIVE_OP_EXSCAN, C.OTF2_REGION_ROLE_COLL_OTHER},
}

// classify maps an MPI call name to its OTF2 kind, region role and
// collective operation. A large-count (_c) call is classified as its int
// form; a persistent (_init) one only by role, as its communication happens
// at MPI_Start.
func classify(call string) callInfo {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(call, "P"), "MPI_"))
	name = strings.TrimSuffix(name, "_c")
	if base, ok := strings.CutSuffix(name, "_init"); ok {
		return callInfo{kind: KindOther, role: classify("MPI_" + base).role}
	}
	if c, ok := collectiveOps[name]; ok {
		return callInfo{kind: KindCollective, role: c.role, op: c.op}
	}
	if c, ok := collectiveOps[strings.TrimPrefix(name, "i")]; ok && strings.HasPrefix(name, "i") {
		return callInfo{kind: KindOther, role: c.role}
	}
	switch name {
	case "send", "ssend", "bsend", "rsend":
		return callInfo{kind: KindSend, role: C.OTF2_REGION_ROLE_POINT2POINT}
	case "recv":
		return callInfo{kind: KindRecv, role: C.OTF2_REGION_ROLE_POINT2POINT}
	case "sendrecv", "sendrecv_replace":
		return callInfo{kind: KindSendRecv, role: C.OTF2_REGION_ROLE_POINT2POINT}
	case "isend", "issend", "ibsend", "irsend", "irecv", "probe", "iprobe", "mprobe", "improbe", "mrecv", "imrecv",
		"isendrecv", "isendrecv_replace", "psend", "precv", "pready", "pready_range", "pready_list", "parrived":
		return callInfo{kind: KindOther, role: C.OTF2_REGION_ROLE_POINT2POINT}
	}
	if strings.HasPrefix(name, "file_") {
		return callInfo{kind: KindOther, role: C.OTF2_REGION_ROLE_FILE_IO}
	}
	return callInfo{kind: KindOther, role: C.OTF2_REGION_ROLE_FUNCTION}
}

// ComputeRegion is the name of the region of compute phases.
const ComputeRegion = "Compute"

// batch is the number of records written per cgo call.
const batch = 4096

type location struct {
	rank, thread int
	host         string
	name         string
	events       uint64
}

// Write writes the selected ranks of f as an OTF2 archive at path (see
// ArchivePaths). It refuses to overwrite an existing archive. Ranks are
// written one after the other (OTF2 needs no global order), so memory holds
// one rank's graph and OTF2's event buffer.
func Write(path string, f *flowgraph.File, opt export.Options) (st export.Stats, err error) {
	dir, name := ArchivePaths(path)
	anchor := filepath.Join(dir, name+".otf2")
	if err := Available(); err != nil {
		return st, fmt.Errorf("write %s: %w", anchor, err)
	}
	if _, err := os.Stat(anchor); err == nil {
		return st, fmt.Errorf("write %s: archive exists (remove it first)", anchor)
	}
	blocks, commRank, worldRanks := selectRanks(f, opt)
	if len(blocks) == 0 {
		return st, fmt.Errorf("%s: no rank selected", f.Path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return st, fmt.Errorf("write %s: %w", path, err)
	}
	cdir, cname := C.CString(dir), C.CString(name)
	defer C.free(unsafe.Pointer(cdir))
	defer C.free(unsafe.Pointer(cname))
	ar := C.mf_OTF2_Archive_Open(cdir, cname, C.OTF2_FILEMODE_WRITE, 1<<20, 4<<20, C.OTF2_SUBSTRATE_POSIX, C.OTF2_COMPRESSION_NONE)
	if ar == nil {
		return st, fmt.Errorf("write %s: otf2: cannot create the archive", anchor)
	}
	closed := false
	defer func() {
		if !closed {
			C.mf_OTF2_Archive_Close(ar)
		}
		if err != nil {
			// Do not leave a partial archive behind.
			os.Remove(anchor)
			os.Remove(filepath.Join(dir, name+".def"))
			os.RemoveAll(filepath.Join(dir, name))
			err = fmt.Errorf("write %s: %w", anchor, err)
		}
	}()
	if err := setupArchive(ar); err != nil {
		return st, err
	}
	w := &archiveWriter{
		ar: ar, f: f, opt: opt, st: &st, commRank: commRank,
		regions:     map[string]uint32{ComputeRegion: 0},
		regionNames: []string{ComputeRegion},
		regionRoles: []C.OTF2_RegionRole{C.OTF2_REGION_ROLE_FUNCTION},
		names:       export.ResourceNames(f),
		recs:        make([]C.mf_rec, 0, batch),
	}
	for li, bi := range blocks {
		if err := w.writeRank(li, bi, len(blocks)); err != nil {
			return st, err
		}
	}
	if err := otf2Err("close event files", C.mf_OTF2_Archive_CloseEvtFiles(ar)); err != nil {
		return st, err
	}
	if err := writeLocalDefs(ar, len(w.locs)); err != nil {
		return st, err
	}
	if err := writeGlobalDefs(ar, f, w.locs, worldRanks, w.regionNames, w.regionRoles, w.traceEnd); err != nil {
		return st, err
	}
	closed = true
	if err := otf2Err("close archive", C.mf_OTF2_Archive_Close(ar)); err != nil {
		return st, err
	}
	if opt.Progress != nil {
		opt.Progress(1, 1)
	}
	return st, nil
}

// selectRanks returns the index blocks of the selected ranks, and each
// rank's position in MPI_COMM_WORLD of the archive.
func selectRanks(f *flowgraph.File, opt export.Options) (blocks []int, commRank map[int]int, worldRanks []int) {
	commRank = map[int]int{}
	for i, e := range f.Index {
		if opt.Ranks != nil && !opt.Ranks[e.Rank] {
			continue
		}
		blocks = append(blocks, i)
		if _, ok := commRank[e.Rank]; !ok {
			commRank[e.Rank] = len(worldRanks)
			worldRanks = append(worldRanks, e.Rank)
		}
	}
	return blocks, commRank, worldRanks
}

// setupArchive sets the callbacks and the creator of a new archive and
// opens its event files.
func setupArchive(ar *C.OTF2_Archive) error {
	if err := otf2Err("set flush callbacks", C.mf_set_flush(ar)); err != nil {
		return err
	}
	if err := otf2Err("set collective callbacks", C.mf_OTF2_Archive_SetSerialCollectiveCallbacks(ar)); err != nil {
		return err
	}
	creator := C.CString("mpiflow")
	defer C.free(unsafe.Pointer(creator))
	C.mf_OTF2_Archive_SetCreator(ar, creator)
	return otf2Err("open event files", C.mf_OTF2_Archive_OpenEvtFiles(ar))
}

// writeLocalDefs writes the local definition files: empty, but readers
// expect one per location.
func writeLocalDefs(ar *C.OTF2_Archive, nlocs int) error {
	if err := otf2Err("open definition files", C.mf_OTF2_Archive_OpenDefFiles(ar)); err != nil {
		return err
	}
	for li := range nlocs {
		dw := C.mf_OTF2_Archive_GetDefWriter(ar, C.OTF2_LocationRef(li))
		if dw == nil {
			return fmt.Errorf("otf2: no definition writer for location %d", li)
		}
		if err := otf2Err("close definition writer", C.mf_OTF2_Archive_CloseDefWriter(ar, dw)); err != nil {
			return err
		}
	}
	return otf2Err("close definition files", C.mf_OTF2_Archive_CloseDefFiles(ar))
}

// archiveWriter holds what Write's ranks share: the regions met so far,
// the locations written, the end of the trace and the record batch.
type archiveWriter struct {
	ar          *C.OTF2_Archive
	f           *flowgraph.File
	opt         export.Options
	st          *export.Stats
	commRank    map[int]int
	regions     map[string]uint32
	regionNames []string
	regionRoles []C.OTF2_RegionRole
	names       []string
	locs        []location
	traceEnd    int64
	recs        []C.mf_rec

	ew  *C.OTF2_EvtWriter // of the rank being written
	loc *location
}

// nodeInfo is a node's region, kind, partner (in the archive's world) and
// bytes.
type nodeInfo struct {
	region  uint32
	info    callInfo
	partner int // -1 when unknown or not selected
	bytes   uint64
}

// nodeInfos returns the nodeInfo of every node of g, adding its regions.
func (w *archiveWriter) nodeInfos(g *flowgraph.Graph) []nodeInfo {
	nodes := make([]nodeInfo, len(g.Nodes))
	for k := range g.Nodes {
		n := &g.Nodes[k]
		reg, ok := w.regions[n.Key.Call]
		info := classify(n.Key.Call)
		if !ok {
			reg = uint32(len(w.regionNames))
			w.regions[n.Key.Call] = reg
			w.regionNames = append(w.regionNames, n.Key.Call)
			w.regionRoles = append(w.regionRoles, info.role)
		}
		ni := nodeInfo{region: reg, info: info, partner: -1, bytes: uint64(max(export.MeanBytes(n), 0))}
		if p, ok := export.Partner(n); ok {
			if cr, ok := w.commRank[p]; ok {
				ni.partner = cr
			}
		}
		nodes[k] = ni
	}
	return nodes
}

func (w *archiveWriter) flush() error {
	if len(w.recs) == 0 {
		return nil
	}
	code := C.mf_write(w.ew, &w.recs[0], C.size_t(len(w.recs)))
	w.loc.events += uint64(len(w.recs))
	w.recs = w.recs[:0]
	return otf2Err("write events", code)
}

func (w *archiveWriter) add(kind C.uint32_t, t int64, a uint32, b uint64) error {
	w.recs = append(w.recs, C.mf_rec{t: C.uint64_t(max(t, 0)), b: C.uint64_t(b), a: C.uint32_t(a), kind: kind})
	if len(w.recs) == batch {
		return w.flush()
	}
	return nil
}

// writeRank writes the events of index block bi as location li of nblocks.
func (w *archiveWriter) writeRank(li, bi, nblocks int) error {
	f, opt := w.f, w.opt
	if opt.Progress != nil {
		opt.Progress(int64(li)*(1<<20), int64(nblocks)*(1<<20))
	}
	r, err := f.ReadRank(bi)
	if err != nil {
		return err
	}
	host := r.Host
	if h := f.Header.Hosts; host == "" && r.Rank < len(h) {
		host = h[r.Rank]
	}
	if host == "" {
		host = "unknown host"
	}
	loc := location{rank: r.Rank, thread: r.Thread, host: host, name: w.names[bi]}
	nodes := w.nodeInfos(&r.Graph)
	w.ew = C.mf_OTF2_Archive_GetEvtWriter(w.ar, C.OTF2_LocationRef(li))
	if w.ew == nil {
		return fmt.Errorf("otf2: no event writer for location %d", li)
	}
	w.loc = &loc
	s, err := export.NewRankEvents(r, opt)
	if err != nil {
		return err
	}
	// Closed below once the rank is written; the deferred Close is for
	// the error returns.
	defer s.Close()
	started := false
	var prevEnd int64
	for {
		sp, ok, err := s.Next()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if !ok {
			break
		}
		export.RankProgress(opt, li, nblocks, r, sp.Index)
		w.st.Events++
		w.traceEnd = max(w.traceEnd, sp.End)
		if started && sp.Start > prevEnd {
			if err := errors.Join(w.add(C.MF_ENTER, prevEnd, 0, 0), w.add(C.MF_LEAVE, sp.Start, 0, 0)); err != nil {
				return err
			}
		}
		started, prevEnd = true, sp.End
		if err := w.span(&nodes[sp.Node], sp.Start, sp.End); err != nil {
			return err
		}
	}
	if err := s.Close(); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	if err := otf2Err("close event writer", C.mf_OTF2_Archive_CloseEvtWriter(w.ar, w.ew)); err != nil {
		return err
	}
	w.locs = append(w.locs, loc)
	w.st.Ranks++
	return nil
}

// span adds the records of one call of node ni from start to end.
func (w *archiveWriter) span(ni *nodeInfo, start, end int64) error {
	errs := []error{w.add(C.MF_ENTER, start, ni.region, 0)}
	switch {
	case ni.info.kind == KindCollective:
		errs = append(errs, w.add(C.MF_CBEGIN, start, 0, 0), w.add(C.MF_CEND, end, uint32(ni.info.op), ni.bytes))
	case ni.partner < 0:
	case ni.info.kind == KindSend:
		errs = append(errs, w.add(C.MF_SEND, start, uint32(ni.partner), ni.bytes))
	case ni.info.kind == KindRecv:
		errs = append(errs, w.add(C.MF_RECV, end, uint32(ni.partner), ni.bytes))
	case ni.info.kind == KindSendRecv:
		errs = append(errs, w.add(C.MF_SEND, start, uint32(ni.partner), ni.bytes), w.add(C.MF_RECV, end, uint32(ni.partner), ni.bytes))
	}
	errs = append(errs, w.add(C.MF_LEAVE, end, ni.region, 0))
	return errors.Join(errs...)
}

// defs writes global definitions, interning strings.
type defs struct {
	w       *C.OTF2_GlobalDefWriter
	strings map[string]C.OTF2_StringRef
	err     error
}

func (d *defs) check(what string, code C.OTF2_ErrorCode) {
	if d.err == nil {
		d.err = otf2Err(what, code)
	}
}

func (d *defs) str(s string) C.OTF2_StringRef {
	if ref, ok := d.strings[s]; ok {
		return ref
	}
	ref := C.OTF2_StringRef(len(d.strings))
	d.strings[s] = ref
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	d.check("write string", C.mf_OTF2_GlobalDefWriter_WriteString(d.w, ref, cs))
	return ref
}

func writeGlobalDefs(ar *C.OTF2_Archive, f *flowgraph.File, locs []location, worldRanks []int,
	regionNames []string, roles []C.OTF2_RegionRole, traceEnd int64) error {
	gw := C.mf_OTF2_Archive_GetGlobalDefWriter(ar)
	if gw == nil {
		return errors.New("otf2: no global definition writer")
	}
	d := &defs{w: gw, strings: map[string]C.OTF2_StringRef{}}
	// Timestamps are ns since the job start; the realtime of time 0 is the
	// job's start.
	d.check("write clock properties", C.mf_OTF2_GlobalDefWriter_WriteClockProperties(gw, 1_000_000_000, 0,
		C.uint64_t(max(traceEnd, 0)+1), C.uint64_t(max(f.Header.StartUnixNano, 0))))
	empty := d.str("")
	for i, name := range regionNames {
		paradigm := C.OTF2_Paradigm(C.OTF2_PARADIGM_MPI)
		if i == 0 {
			paradigm = C.OTF2_PARADIGM_USER
		}
		n := d.str(name)
		d.check("write region", C.mf_OTF2_GlobalDefWriter_WriteRegion(gw, C.OTF2_RegionRef(i), n, n, empty,
			roles[i], paradigm, C.OTF2_REGION_FLAG_NONE, empty, 0, 0))
	}
	machine := d.str("machine")
	d.check("write system tree", C.mf_OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, machine, machine, C.OTF2_UNDEFINED_SYSTEM_TREE_NODE))
	nodeClass := d.str("node")
	hostNode := map[string]C.OTF2_SystemTreeNodeRef{}
	groupOf := map[int]C.OTF2_LocationGroupRef{}
	for _, l := range locs {
		hn, ok := hostNode[l.host]
		if !ok {
			hn = C.OTF2_SystemTreeNodeRef(len(hostNode) + 1)
			hostNode[l.host] = hn
			d.check("write system tree", C.mf_OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, hn, d.str(l.host), nodeClass, 0))
		}
		if _, ok := groupOf[l.rank]; !ok {
			g := C.OTF2_LocationGroupRef(len(groupOf))
			groupOf[l.rank] = g
			d.check("write location group", C.mf_OTF2_GlobalDefWriter_WriteLocationGroup(gw, g, d.str(fmt.Sprintf("MPI Rank %d", l.rank)),
				C.OTF2_LOCATION_GROUP_TYPE_PROCESS, hn, C.OTF2_UNDEFINED_LOCATION_GROUP))
		}
	}
	// MPI_COMM_WORLD of the archive: the first location of each selected
	// rank, in rank order of selection.
	first := map[int]uint64{}
	for li, l := range locs {
		if _, ok := first[l.rank]; !ok {
			first[l.rank] = uint64(li)
		}
	}
	for li, l := range locs {
		d.check("write location", C.mf_OTF2_GlobalDefWriter_WriteLocation(gw, C.OTF2_LocationRef(li), d.str(l.name),
			C.OTF2_LOCATION_TYPE_CPU_THREAD, C.uint64_t(l.events), groupOf[l.rank]))
	}
	members := make([]C.uint64_t, len(worldRanks))
	ranks := make([]C.uint64_t, len(worldRanks))
	for i, r := range worldRanks {
		members[i] = C.uint64_t(first[r])
		ranks[i] = C.uint64_t(i)
	}
	d.check("write group", C.mf_OTF2_GlobalDefWriter_WriteGroup(gw, 0, d.str("MPI_COMM_WORLD locations"), C.OTF2_GROUP_TYPE_COMM_LOCATIONS,
		C.OTF2_PARADIGM_MPI, C.OTF2_GROUP_FLAG_NONE, C.uint32_t(len(members)), &members[0]))
	d.check("write group", C.mf_OTF2_GlobalDefWriter_WriteGroup(gw, 1, d.str("MPI_COMM_WORLD group"), C.OTF2_GROUP_TYPE_COMM_GROUP,
		C.OTF2_PARADIGM_MPI, C.OTF2_GROUP_FLAG_NONE, C.uint32_t(len(ranks)), &ranks[0]))
	d.check("write communicator", C.mf_OTF2_GlobalDefWriter_WriteComm(gw, 0, d.str("MPI_COMM_WORLD"), 1, C.OTF2_UNDEFINED_COMM, C.OTF2_COMM_FLAG_NONE))
	return d.err
}
