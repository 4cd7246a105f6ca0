//go:build cgo && !nootf2

// Package otf2 imports OTF2 archives (Score-P and other tools) as state
// traces for the aggregator, through the OTF2 C library (cgo; built with
// Debian package libotf2-trace-dev), loaded with dlopen on first use
// (internal/otf2dl): Read says which package to install when it is missing.
//
// Each location is a resource; its state at any time is the innermost
// region it is in (Enter/Leave), so nested regions are flattened: time in
// MPI_Send inside main counts for MPI_Send only. The hierarchy is the
// system tree, then the location groups, then the locations; a location
// group with a single location is that resource. Other events are
// ignored.
package otf2

/*
#cgo CFLAGS: -I${SRCDIR}/../../internal/otf2dl
#include <stdlib.h>
#include <string.h>
#include "otf2dl.h"

// mf_def is one definition of a system tree node, location group,
// location or region.
typedef struct {
	uint64_t self;
	uint64_t parent; // tree parent, group of a location; unused for regions
	uint32_t name;   // string ref
	uint32_t pad;
	uint64_t nev;    // events the definition of a location announces
} mf_def;

typedef struct {
	uint64_t loc;
	uint64_t t;
	uint32_t region;
	uint32_t enter; // 1 Enter, 0 Leave
} mf_ev;

typedef struct {
	char**   strs;
	uint64_t nstrs;
	mf_def*  defs[4]; // 0 system tree nodes, 1 location groups, 2 locations, 3 regions
	uint64_t ndefs[4];
	uint64_t cap[4];
	uint64_t resolution, offset, length;
	mf_ev*   evs;
	uint64_t nevs, capevs;
	int      oom;
	OTF2_EvtReader** evtr; // the event reader of each location, in definition order
} mf_data;

static void mf_add_def(mf_data* d, int kind, uint64_t self, uint64_t parent, uint32_t name, uint64_t nev) {
	if (d->ndefs[kind] == d->cap[kind]) {
		uint64_t c = d->cap[kind] ? 2 * d->cap[kind] : 64;
		mf_def* n = realloc(d->defs[kind], c * sizeof(mf_def));
		if (!n) { d->oom = 1; return; }
		d->defs[kind] = n;
		d->cap[kind] = c;
	}
	mf_def* x = &d->defs[kind][d->ndefs[kind]++];
	x->self = self; x->parent = parent; x->name = name; x->pad = 0; x->nev = nev;
}

static OTF2_CallbackCode mf_string(void* u, OTF2_StringRef self, const char* s) {
	mf_data* d = u;
	if (self >= d->nstrs) {
		uint64_t n = self + 1 > 2 * d->nstrs ? self + 1 : 2 * d->nstrs;
		if (n > (1u << 28)) { d->oom = 1; return OTF2_CALLBACK_INTERRUPT; }
		char** x = realloc(d->strs, n * sizeof(char*));
		if (!x) { d->oom = 1; return OTF2_CALLBACK_INTERRUPT; }
		memset(x + d->nstrs, 0, (n - d->nstrs) * sizeof(char*));
		d->strs = x;
		d->nstrs = n;
	}
	free(d->strs[self]);
	d->strs[self] = strdup(s);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_clock(void* u, uint64_t res, uint64_t off, uint64_t len, uint64_t real) {
	mf_data* d = u;
	d->resolution = res; d->offset = off; d->length = len;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_stn(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent) {
	mf_add_def(u, 0, self, parent, name, 0);
	return ((mf_data*)u)->oom ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_lg(void* u, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent, OTF2_LocationGroupRef creator) {
	mf_add_def(u, 1, self, parent, name, 0);
	return ((mf_data*)u)->oom ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_loc(void* u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type, uint64_t nev, OTF2_LocationGroupRef group) {
	mf_add_def(u, 2, self, group, name, nev);
	return ((mf_data*)u)->oom ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canon, OTF2_StringRef desc,
	OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t b, uint32_t e) {
	mf_add_def(u, 3, self, 0, name, 0);
	return ((mf_data*)u)->oom ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_event(mf_data* d, OTF2_LocationRef loc, OTF2_TimeStamp t, OTF2_RegionRef region, int enter) {
	if (d->nevs == d->capevs) {
		d->oom = 1; // the Go side reads at most capevs events at once
		return OTF2_CALLBACK_INTERRUPT;
	}
	mf_ev* x = &d->evs[d->nevs++];
	x->loc = loc; x->t = t; x->region = region; x->enter = enter;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode mf_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList* a, OTF2_RegionRef region) {
	return mf_event(u, loc, t, region, 1);
}

static OTF2_CallbackCode mf_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void* u, OTF2_AttributeList* a, OTF2_RegionRef region) {
	return mf_event(u, loc, t, region, 0);
}

static OTF2_ErrorCode mf_read_defs(OTF2_Reader* r, mf_data* d) {
	OTF2_ErrorCode err = mf_OTF2_Reader_SetSerialCollectiveCallbacks(r);
	if (err != OTF2_SUCCESS) return err;
	OTF2_GlobalDefReader* gdr = mf_OTF2_Reader_GetGlobalDefReader(r);
	if (!gdr) return OTF2_ERROR_INVALID;
	OTF2_GlobalDefReaderCallbacks* cb = mf_OTF2_GlobalDefReaderCallbacks_New();
	mf_OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, mf_string);
	mf_OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, mf_clock);
	mf_OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, mf_stn);
	mf_OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, mf_lg);
	mf_OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, mf_loc);
	mf_OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, mf_region);
	err = mf_OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, cb, d);
	mf_OTF2_GlobalDefReaderCallbacks_Delete(cb);
	if (err != OTF2_SUCCESS) return err;
	uint64_t n;
	err = mf_OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n);
	mf_OTF2_Reader_CloseGlobalDefReader(r, gdr);
	return err;
}

// mf_open_events selects every location, reads the local definitions (for
// their mapping tables), keeps each location's event reader in d->evtr and
// returns the global event reader. On an error, *bad is the index of the
// location whose file failed, or -1, and *bad_evt tells whether the failed
// file is its event file (else its local definition file).
static OTF2_ErrorCode mf_open_events(OTF2_Reader* r, mf_data* d, OTF2_GlobalEvtReader** out, int64_t* bad, int* bad_evt) {
	OTF2_ErrorCode err;
	*bad = -1;
	*bad_evt = 0;
	for (uint64_t i = 0; i < d->ndefs[2]; i++) {
		if ((err = mf_OTF2_Reader_SelectLocation(r, d->defs[2][i].self)) != OTF2_SUCCESS) return err;
	}
	d->evtr = calloc(d->ndefs[2] ? d->ndefs[2] : 1, sizeof(OTF2_EvtReader*));
	if (!d->evtr) return OTF2_ERROR_MEM_ALLOC_FAILED;
	// Local definition files are optional (OTF2_Reader.h); an archive
	// without them has nothing to map.
	int have_defs = mf_OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
	if ((err = mf_OTF2_Reader_OpenEvtFiles(r)) != OTF2_SUCCESS) return err;
	for (uint64_t i = 0; i < d->ndefs[2]; i++) {
		if (have_defs) {
			// NULL when the location has no local definition file.
			OTF2_DefReader* dr = mf_OTF2_Reader_GetDefReader(r, d->defs[2][i].self);
			if (dr) {
				uint64_t n;
				err = mf_OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
				OTF2_ErrorCode cerr = mf_OTF2_Reader_CloseDefReader(r, dr);
				if (err == OTF2_SUCCESS) err = cerr;
				if (err != OTF2_SUCCESS) { *bad = i; return err; }
			}
		}
		d->evtr[i] = mf_OTF2_Reader_GetEvtReader(r, d->defs[2][i].self);
		if (!d->evtr[i]) { *bad = i; *bad_evt = 1; return OTF2_ERROR_INVALID; }
	}
	if (have_defs && (err = mf_OTF2_Reader_CloseDefFiles(r)) != OTF2_SUCCESS) return err;
	OTF2_GlobalEvtReader* ger = mf_OTF2_Reader_GetGlobalEvtReader(r);
	if (!ger) return OTF2_ERROR_INVALID;
	OTF2_GlobalEvtReaderCallbacks* cb = mf_OTF2_GlobalEvtReaderCallbacks_New();
	mf_OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, mf_enter);
	mf_OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, mf_leave);
	err = mf_OTF2_Reader_RegisterGlobalEvtCallbacks(r, ger, cb, d);
	mf_OTF2_GlobalEvtReaderCallbacks_Delete(cb);
	*out = ger;
	return err;
}

static void mf_free(mf_data* d) {
	for (uint64_t i = 0; i < d->nstrs; i++) free(d->strs[i]);
	free(d->strs);
	for (int k = 0; k < 4; k++) free(d->defs[k]);
	free(d->evs);
	free(d->evtr);
}

// mf_events_read is the number of events read from location i, in
// *n: OTF2's global reader drops a location whose event file cannot be
// read, logging the error but returning success.
static OTF2_ErrorCode mf_events_read(mf_data* d, uint64_t i, uint64_t* n) {
	return mf_OTF2_EvtReader_GetPos(d->evtr[i], n);
}

// mf_read_location reads the events of location loc alone, with a reader
// of its own, into *n: which location's file is damaged, when the global
// reader only says that one is.
static OTF2_ErrorCode mf_read_location(const char* path, uint64_t loc, uint64_t* n) {
	*n = 0;
	OTF2_Reader* r = mf_OTF2_Reader_Open(path);
	if (!r) return OTF2_ERROR_INVALID;
	OTF2_ErrorCode err = mf_OTF2_Reader_SetSerialCollectiveCallbacks(r);
	if (err == OTF2_SUCCESS) err = mf_OTF2_Reader_SelectLocation(r, loc);
	if (err == OTF2_SUCCESS) err = mf_OTF2_Reader_OpenEvtFiles(r);
	if (err == OTF2_SUCCESS) {
		OTF2_EvtReader* er = mf_OTF2_Reader_GetEvtReader(r, loc);
		err = er ? mf_OTF2_Reader_ReadAllLocalEvents(r, er, n) : OTF2_ERROR_INVALID;
	}
	OTF2_ErrorCode cerr = mf_OTF2_Reader_Close(r);
	return err != OTF2_SUCCESS ? err : cerr;
}

static mf_def* mf_def_at(mf_data* d, int kind, uint64_t i) { return &d->defs[kind][i]; }
static mf_ev* mf_ev_at(mf_data* d, uint64_t i) { return &d->evs[i]; }
static const char* mf_str(mf_data* d, uint64_t ref) { return ref < d->nstrs ? d->strs[ref] : NULL; }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"mpiflow/aggregate"
	"mpiflow/importer"
	"mpiflow/internal/otf2dl"
)

// Supported tells whether this build can handle OTF2 (it can: cgo build).
const Supported = true

// chunk is the number of events read from the library at once: memory
// for events in flight is bounded by it.
const chunk = 1 << 16

func otf2Err(what string, code C.OTF2_ErrorCode) error {
	if code == C.OTF2_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s (%s)", what, C.GoString(C.mf_OTF2_Error_GetName(code)), C.GoString(C.mf_OTF2_Error_GetDescription(code)))
}

// locationFile is the file of location loc with extension ext (.evt,
// .def) in the archive whose anchor file is path: ANCHOR/LOC.evt, as OTF2
// names them.
func locationFile(path string, loc uint64, ext string) string {
	return filepath.Join(strings.TrimSuffix(path, ".otf2"), strconv.FormatUint(loc, 10)+ext)
}

// Read imports the OTF2 archive whose anchor file (NAME.otf2) is at path.
func Read(path string) (*importer.Trace, error) {
	tr, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return tr, nil
}

func read(path string) (*importer.Trace, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.IsDir() {
		return nil, errors.New("is a directory; give the archive's .otf2 anchor file")
	}
	if err := otf2dl.Load(); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	r := C.mf_OTF2_Reader_Open(cpath)
	if r == nil {
		return nil, errors.New("otf2: cannot open the archive")
	}
	defer C.mf_OTF2_Reader_Close(r)
	d := (*C.mf_data)(C.calloc(1, C.size_t(unsafe.Sizeof(C.mf_data{}))))
	if d == nil {
		return nil, errors.New("out of memory")
	}
	defer C.free(unsafe.Pointer(d))
	defer C.mf_free(d)
	if err := otf2Err("otf2: read definitions (not an OTF2 archive?)", C.mf_read_defs(r, d)); err != nil {
		return nil, err
	}
	if d.oom != 0 {
		return nil, errors.New("otf2: out of memory reading definitions")
	}
	if d.resolution == 0 {
		return nil, errors.New("otf2: no clock properties (timer resolution 0)")
	}
	a := &archiveReader{path: path, cpath: cpath, r: r, d: d, nloc: uint64(d.ndefs[2])}
	tr := &importer.Trace{Name: strings.TrimSuffix(filepath.Base(path), ".otf2")}
	locRes := a.containers(tr)
	if len(tr.Res) == 0 {
		return nil, errors.New("otf2: the archive has no locations")
	}
	regionName := map[uint32]string{}
	for i := uint64(0); i < uint64(d.ndefs[3]); i++ {
		x := a.def(3, i)
		regionName[uint32(x.self)] = a.str(x.name)
	}
	evs := newEvents(tr, uint64(d.resolution), uint64(d.offset), regionName)
	if err := a.events(evs, locRes); err != nil {
		return nil, err
	}
	if err := a.shortLocation(); err != nil {
		return nil, err
	}
	if err := evs.finish(); err != nil {
		return nil, err
	}
	return tr, nil
}

// archiveReader is an open archive and its definitions, read by read.
type archiveReader struct {
	path  string
	cpath *C.char
	r     *C.OTF2_Reader
	d     *C.mf_data
	nloc  uint64
}

func (a *archiveReader) str(ref C.uint32_t) string {
	s := C.mf_str(a.d, C.uint64_t(ref))
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

func (a *archiveReader) def(kind int, i uint64) *C.mf_def {
	return C.mf_def_at(a.d, C.int(kind), C.uint64_t(i))
}

// containers adds the containers and resources of the archive to tr:
// system tree nodes, then location groups under them, then locations
// (resources) under their group, or in its place when the group has a
// single location. It returns the resource of each location.
func (a *archiveReader) containers(tr *importer.Trace) map[uint64]int {
	d, str, def := a.d, a.str, a.def
	stn := map[uint64]int{}
	nstn := uint64(d.ndefs[0])
	for i := uint64(0); i < nstn; i++ {
		x := def(0, i)
		stn[uint64(x.self)] = len(tr.Containers)
		tr.Containers = append(tr.Containers, importer.Container{Name: str(x.name), Parent: -1, Resource: -1})
	}
	for i := uint64(0); i < nstn; i++ {
		x := def(0, i)
		if p, ok := stn[uint64(x.parent)]; ok && p != stn[uint64(x.self)] {
			tr.Containers[stn[uint64(x.self)]].Parent = p
		}
	}
	nlg, nloc := uint64(d.ndefs[1]), a.nloc
	perGroup := map[uint64]int{}
	for i := uint64(0); i < nloc; i++ {
		perGroup[uint64(def(2, i).parent)]++
	}
	lg := map[uint64]int{}
	lgName := map[uint64]string{}
	for i := uint64(0); i < nlg; i++ {
		x := def(1, i)
		lgName[uint64(x.self)] = str(x.name)
		parent := -1
		if p, ok := stn[uint64(x.parent)]; ok {
			parent = p
		}
		if perGroup[uint64(x.self)] == 1 {
			lg[uint64(x.self)] = parent // the location takes the group's place
			continue
		}
		lg[uint64(x.self)] = len(tr.Containers)
		tr.Containers = append(tr.Containers, importer.Container{Name: str(x.name), Parent: parent, Resource: -1})
	}
	locRes := map[uint64]int{}
	for i := uint64(0); i < nloc; i++ {
		x := def(2, i)
		g := uint64(x.parent)
		parent, ok := lg[g]
		if !ok {
			parent = -1
		}
		name := str(x.name)
		if perGroup[g] == 1 && lgName[g] != "" {
			name = lgName[g]
		}
		locRes[uint64(x.self)] = len(tr.Res)
		tr.Containers = append(tr.Containers, importer.Container{Name: name, Parent: parent, Resource: len(tr.Res)})
		tr.Res = append(tr.Res, aggregate.Resource{Name: name})
	}
	return locRes
}

// events feeds the archive's events, chunk by chunk in global time order,
// to evs.
func (a *archiveReader) events(evs *events, locRes map[uint64]int) error {
	r, d := a.r, a.d
	var ger *C.OTF2_GlobalEvtReader
	var bad C.int64_t
	var badEvt C.int
	if err := otf2Err("otf2: open events", C.mf_open_events(r, d, &ger, &bad, &badEvt)); err != nil {
		if bad >= 0 {
			file := locationFile(a.path, uint64(a.def(2, uint64(bad)).self), ".def")
			if badEvt != 0 {
				file = locationFile(a.path, uint64(a.def(2, uint64(bad)).self), ".evt")
			}
			return fmt.Errorf("%s: %w", file, err)
		}
		return err
	}
	defer C.mf_OTF2_Reader_CloseGlobalEvtReader(r, ger)
	d.evs = (*C.mf_ev)(C.malloc(C.size_t(chunk * unsafe.Sizeof(C.mf_ev{}))))
	if d.evs == nil {
		return errors.New("out of memory")
	}
	d.capevs = chunk
	for {
		d.nevs = 0
		var n C.uint64_t
		code := C.mf_OTF2_Reader_ReadGlobalEvents(r, ger, chunk, &n)
		if code != C.OTF2_SUCCESS {
			return a.readError(otf2Err("otf2: read events", code))
		}
		for i := uint64(0); i < uint64(d.nevs); i++ {
			ev := C.mf_ev_at(d, C.uint64_t(i))
			res, ok := locRes[uint64(ev.loc)]
			if !ok {
				return fmt.Errorf("otf2: event of undefined location %d", uint64(ev.loc))
			}
			if err := evs.add(res, uint64(ev.t), uint32(ev.region), ev.enter != 0); err != nil {
				return err
			}
		}
		if n == 0 {
			return nil
		}
	}
}

// readError names the damaged location when reading stopped with err for
// every location, reading each alone.
func (a *archiveReader) readError(err error) error {
	for i := uint64(0); i < a.nloc; i++ {
		x := a.def(2, i)
		var n C.uint64_t
		lerr := otf2Err("otf2: read events", C.mf_read_location(a.cpath, x.self, &n))
		if lerr != nil || uint64(n) < uint64(x.nev) {
			if lerr == nil {
				lerr = err
			}
			return a.damaged(x, uint64(n), lerr)
		}
	}
	return err
}

// damaged is the error of location x, whose file gave n events and then
// err (nil: the end of the file).
func (a *archiveReader) damaged(x *C.mf_def, n uint64, err error) error {
	e := fmt.Errorf("%s: cut short or damaged: location %q has %d of the %d events its definition announces",
		locationFile(a.path, uint64(x.self), ".evt"), a.str(x.name), n, uint64(x.nev))
	if err != nil {
		e = fmt.Errorf("%w: %w", e, err)
	}
	return e
}

// shortLocation names the first location that gave fewer events than its
// definition announces (0: not announced); OTF2 may report its damaged
// file as the end of its events.
func (a *archiveReader) shortLocation() error {
	for i := uint64(0); i < a.nloc; i++ {
		x := a.def(2, i)
		var n C.uint64_t
		if err := otf2Err("otf2: events read", C.mf_events_read(a.d, C.uint64_t(i), &n)); err != nil {
			return fmt.Errorf("%s: %w", locationFile(a.path, uint64(x.self), ".evt"), err)
		}
		if uint64(n) < uint64(x.nev) {
			return a.damaged(x, uint64(n), nil)
		}
	}
	return nil
}
