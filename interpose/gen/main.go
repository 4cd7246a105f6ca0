// Command gen generates mpiflow's MPI wrappers from one spec table
// (gen/mpi.spec): the C wrappers of the preload library, the Go list of
// wrapped and excluded calls that the tests check against mpi.h, and
// WRAPPED.md. Run it with `go generate` in interpose/.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Func is one wrapped MPI function of the spec.
type Func struct {
	Name   string // without the MPI_ prefix
	Group  string
	Params []Param
	// Variadic tells that the C parameter list ends with "..." (not in
	// Params).
	Variadic bool
	Dir      map[string]string // directives
	// Since is the MPI version that introduced the function ("4.0"), from
	// its group's or its own since= directive; empty for MPI-3.1 and
	// older. Its wrappers (C and Fortran) are compiled only against an
	// mpi.h of that version or newer.
	Since string
}

// Param is one C parameter.
type Param struct {
	Decl string // as written
	Name string
}

// Excluded is one MPI function deliberately not wrapped.
type Excluded struct {
	Name, Reason string
}

// Spec is the parsed spec table.
type Spec struct {
	Funcs    []Func
	Excluded []Excluded
}

var knownDirectives = map[string]bool{"comm": true, "win": true, "file": true, "bytes": true, "peer": true, "status": true, "forget": true, "track": true, "req": true, "reqs": true, "since": true, "got": true, "recv": true, "recvd": true, "recvall": true}

var sinceRE = regexp.MustCompile(`^([1-9][0-9]*)\.([0-9]+)$`)

// Parse reads a spec table.
func Parse(r io.Reader) (*Spec, error) {
	s := &Spec{}
	sc := bufio.NewScanner(r)
	group, groupSince := "", ""
	seen := map[string]bool{}
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "## "):
			// "## title | since=4.0": every function of the group is MPI-4.0.
			title, attrs, _ := strings.Cut(line[3:], "|")
			group, groupSince = strings.TrimSpace(title), ""
			for _, d := range strings.Fields(attrs) {
				v, ok := strings.CutPrefix(d, "since=")
				if !ok || !sinceRE.MatchString(v) {
					return nil, fmt.Errorf("line %d: group %s: bad attribute %q (want since=MAJOR.MINOR)", ln, group, d)
				}
				groupSince = v
			}
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		name, rest, _ := strings.Cut(line, "|")
		name = strings.TrimSpace(name)
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(name, "!") {
			n := strings.TrimPrefix(name, "!")
			if seen[n] {
				return nil, fmt.Errorf("line %d: %s listed twice", ln, n)
			}
			seen[n] = true
			if rest == "" {
				return nil, fmt.Errorf("line %d: excluded %s needs a reason", ln, n)
			}
			s.Excluded = append(s.Excluded, Excluded{Name: n, Reason: rest})
			continue
		}
		open := strings.IndexByte(name, '(')
		if open < 0 || !strings.HasSuffix(name, ")") {
			return nil, fmt.Errorf("line %d: want NAME(params) | directives", ln)
		}
		f := Func{Name: name[:open], Group: group, Dir: map[string]string{}, Since: groupSince}
		if seen[f.Name] {
			return nil, fmt.Errorf("line %d: %s listed twice", ln, f.Name)
		}
		seen[f.Name] = true
		list := name[open+1 : len(name)-1]
		if l, ok := strings.CutSuffix(strings.TrimSpace(list), "..."); ok {
			list, f.Variadic = strings.TrimSuffix(strings.TrimSpace(l), ","), true
		}
		params, err := parseParams(list)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", ln, f.Name, err)
		}
		f.Params = params
		for _, d := range strings.Fields(rest) {
			k, v, ok := strings.Cut(d, "=")
			if !ok || !knownDirectives[k] {
				return nil, fmt.Errorf("line %d: %s: bad directive %q", ln, f.Name, d)
			}
			if k == "since" {
				if !sinceRE.MatchString(v) {
					return nil, fmt.Errorf("line %d: %s: bad directive %q (want since=MAJOR.MINOR)", ln, f.Name, d)
				}
				f.Since = v
				continue
			}
			f.Dir[k] = v
		}
		s.Funcs = append(s.Funcs, f)
	}
	return s, sc.Err()
}

var identRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(\[\s*[0-9]*\s*\])*\s*$`)

func parseParams(s string) ([]Param, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "void" {
		return nil, nil
	}
	var ps []Param
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		m := identRE.FindStringSubmatch(p)
		if m == nil || strings.TrimSpace(p[:len(p)-len(m[0])]) == "" {
			return nil, fmt.Errorf("no name in parameter %q", p)
		}
		ps = append(ps, Param{Decl: p, Name: m[1]})
	}
	return ps, nil
}

var peerRE = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*(->[A-Za-z_]+)?)`)

func (f *Func) args() string {
	var n []string
	for _, p := range f.Params {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

func (f *Func) decl() string {
	if len(f.Params) == 0 {
		return "void"
	}
	var d []string
	for _, p := range f.Params {
		d = append(d, p.Decl)
	}
	return strings.Join(d, ", ")
}

// CHeader returns the header of the generated C file: the call names it
// defines, indexed by the call ids of the recorder's events.
func (s *Spec) CHeader() []byte {
	return []byte(`// Code generated by interpose/gen from gen/mpi.spec; DO NOT EDIT.

/* The MPI calls the wrappers record (wrappers_gen.c): their names, indexed
 * by the call ids of the recorder's events (mf_event.call). */
#ifndef MPIFLOW_WRAPPERS_GEN_H
#define MPIFLOW_WRAPPERS_GEN_H

extern const char *const mf_call_names[] __attribute__((visibility("hidden")));
extern const int mf_ncalls __attribute__((visibility("hidden")));

#endif
`)
}

// C returns the generated C file.
func (s *Spec) C() []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by interpose/gen from gen/mpi.spec; DO NOT EDIT.\n\n")
	b.WriteString("/* MPI wrappers: each calls the PMPI function, returns its result\n * unchanged and records the call (see record.h). */\n")
	b.WriteString("#include \"mf_mpi.h\"\n#include \"wrappers_gen.h\"\n\n")
	b.WriteString("/* The call names and numbers are the same whatever the mpi.h: wrappers of\n")
	b.WriteString(" * newer functions (MPI-4.0) are compiled only where mpi.h declares them. */\n")
	b.WriteString("const char *const mf_call_names[] = {\n")
	for _, f := range s.Funcs {
		fmt.Fprintf(&b, "\t\"MPI_%s\",\n", f.Name)
	}
	b.WriteString("};\n")
	fmt.Fprintf(&b, "const int mf_ncalls = %d;\n", len(s.Funcs))
	fmt.Fprintf(&b, "_Static_assert(%d <= INT16_MAX, \"call ids fit in mf_rec's rep_call\");\n", len(s.Funcs))
	var g versionGuard
	for i, f := range s.Funcs {
		g.set(&b, f.Since)
		b.WriteString("\n")
		switch f.Name {
		case "Init", "Init_thread":
			s.cInit(&b, i, &f)
		case "Finalize":
			s.cFinalize(&b, i, &f)
		case "Pcontrol":
			s.cPcontrol(&b, i, &f)
		default:
			s.cWrapper(&b, i, &f)
		}
	}
	g.end(&b)
	s.fortran(&b)
	s.fortran08(&b)
	return b.Bytes()
}

// versionCond is the preprocessor condition that mpi.h is of MPI version
// v (MAJOR.MINOR) or newer.
func versionCond(v string) string {
	m := sinceRE.FindStringSubmatch(v)
	if m[2] == "0" {
		return "MPI_VERSION >= " + m[1]
	}
	return fmt.Sprintf("MPI_VERSION > %s || (MPI_VERSION == %s && MPI_SUBVERSION >= %s)", m[1], m[1], m[2])
}

func (s *Spec) cWrapper(b *bytes.Buffer, id int, f *Func) {
	quick := f.quickHandle() != ""
	attr := "static inline __attribute__((always_inline))"
	if quick { // out of the C entry's way (cQuickEntry)
		attr = "static __attribute__((noinline))"
	}
	fmt.Fprintf(b, "%s int mf_%s(uint64_t mf_site%s)\n{\n", attr, f.Name, f.bodyDecl())
	fmt.Fprintf(b, "\tmf_rec *mf_r = mf_tls_rec;\n")
	fmt.Fprintf(b, "\tif (__builtin_expect(!mf_r, 0) && !(mf_r = mf_thread_rec()))\n\t\treturn PMPI_%s(%s);\n", f.Name, f.args())
	kind, bytesExpr := cBefore(b, f)
	if f.Name == "Abort" {
		cAbort(b, id, f)
		s.cEntry(b, f)
		return
	}
	cRecord(b, id, f, bytesExpr)
	cAfter(b, f, kind)
	if quick {
		fmt.Fprintf(b, "\tmf_r->rep_handle = %s;\n\treturn mf_rc;\n}\n", f.quickHandle())
		s.cQuickEntry(b, id, f)
		return
	}
	fmt.Fprintf(b, "\treturn mf_rc;\n}\n")
	if !f.Variadic { // whose entry is written by its special case
		s.cEntry(b, f)
	}
}

// cBefore writes what a wrapper does before the call: the status it
// needs, its communicator's (window's, file's) facts, the handle it may
// free, the requests it follows and their statuses, and the bytes. It
// returns the kind of the handle the call frees ("" for none) and the
// expression of the bytes posted.
func cBefore(b *bytes.Buffer, f *Func) (kind, bytesExpr string) {
	d := f.Dir
	if st := d["status"]; st != "" {
		fmt.Fprintf(b, "\tMPI_Status mf_st;\n\tif (%s == MPI_STATUS_IGNORE) {\n\t\tmf_st.MPI_SOURCE = MPI_PROC_NULL;\n\t\t%s = &mf_st;\n\t}\n", st, st)
	}
	switch {
	case d["comm"] != "":
		fmt.Fprintf(b, "\tmf_ginfo *mf_g = mf_comm(%s);\n", d["comm"])
	case d["win"] != "":
		fmt.Fprintf(b, "\tmf_ginfo *mf_g = mf_win(%s);\n", d["win"])
	case d["file"] != "":
		fmt.Fprintf(b, "\tmf_ginfo *mf_g = mf_file(%s);\n", d["file"])
	default:
		fmt.Fprintf(b, "\tmf_ginfo *mf_g = &mf_null_info;\n")
	}
	if fg := d["forget"]; fg != "" {
		k, e, _ := strings.Cut(fg, ":")
		kind = map[string]string{"comm": "MF_KIND_COMM", "win": "MF_KIND_WIN", "file": "MF_KIND_FILE"}[k]
		fmt.Fprintf(b, "\tuintptr_t mf_old = MF_H(%s);\n", e)
	}
	if e := d["req"]; e != "" {
		fmt.Fprintf(b, "\tuintptr_t mf_rh = MF_H(%s);\n\tmf_reqinfo mf_rg = mf_nreq ? mf_req_find(mf_rh) : MF_NOREQ;\n", e)
	}
	if e := d["reqs"]; e != "" {
		n, arr, _ := strings.Cut(e, ",")
		// The handles are copied before the call, which nulls those it
		// completes: for the requests followed (mf_nreq), and to find the
		// receives it completed, except under recvall=, which takes them
		// out of the table before the call (no copy, and no statuses of
		// ours for an array that holds none).
		save, need := "mf_nreq || mf_tls_recvs.n", "mf_saved && mf_tls_recvs.n"
		if d["recvall"] != "" {
			save, need = "mf_nreq", fmt.Sprintf("mf_recvs_take(&mf_tk, %s, %s)", n, arr)
			fmt.Fprintf(b, "\tmf_taken mf_tk;\n")
		}
		fmt.Fprintf(b, "\tuintptr_t mf_sbuf[MF_SAVE_N];\n\tuintptr_t *mf_saved = %s ? mf_reqs_save(%s, %s, mf_sbuf) : NULL;\n", save, n, arr)
		// The statuses of completed receives give their sizes.
		if st := f.statusesArray(); st != "" {
			fmt.Fprintf(b, "\tMPI_Status mf_stbuf[MF_SAVE_N], *mf_sts = NULL;\n")
			fmt.Fprintf(b, "\tif (%s && %s == MPI_STATUSES_IGNORE && (mf_sts = mf_statuses(%s, mf_stbuf)))\n\t\t%s = mf_sts;\n", need, st, n, st)
		}
	}
	bytesExpr = "0"
	if e := d["bytes"]; e != "" {
		bytesExpr = e
	}
	if d["got"] == "" {
		fmt.Fprintf(b, "\tint64_t mf_bytes = %s;\n", bytesExpr)
	}
	return kind, bytesExpr
}

// cAbort writes the recording of MPI_Abort, which does not return.
func cAbort(b *bytes.Buffer, id int, f *Func) {
	fmt.Fprintf(b, "\tint64_t mf_cin[MF_MAX_COUNTERS], mf_cout[MF_MAX_COUNTERS];\n")
	fmt.Fprintf(b, "\tif (mf_r->cfg.ncounters)\n\t\tmf_counters_read(mf_cin);\n")
	fmt.Fprintf(b, "\tint64_t mf_t0 = mf_now();\n")
	// PMPI_Abort does not return: the event is recorded (with no
	// duration) and the rank's partial file written before it.
	fmt.Fprintf(b, "\tint64_t mf_t1 = mf_t0;\n\tif (mf_r->cfg.ncounters)\n\t\tmf_counters_read(mf_cout);\n")
	fmt.Fprintf(b, "\tmf_record_call(mf_r, %d, -1, mf_g->id, mf_g->size, mf_site, mf_bytes, mf_t0, mf_t1, mf_cin, mf_cout);\n", id)
	fmt.Fprintf(b, "\tmf_partial_now(1);\n\treturn PMPI_%s(%s);\n}\n", f.Name, f.args())
}

// cRecord writes the call and its recording, as a repeat of the previous
// call or as a new event.
func cRecord(b *bytes.Buffer, id int, f *Func, bytesExpr string) {
	d := f.Dir
	// A repeat of the previous call takes a shorter path, maybe untimed,
	// and never reads counters (mf_record_ allows none). Each path has
	// its own call of the PMPI function and records in it: what the
	// path is need not be kept across the call (a register spilled and
	// tested again), and a repeat passes its values (no mf_event).
	peer := "-1"
	if e := d["peer"]; e != "" {
		peer = peerRE.ReplaceAllString(e, "mf_peer(mf_g, $1)")
	}
	got := ""
	if e := d["got"]; e != "" {
		// The posted size only when the call failed: counts and types
		// are passed by value, so it can be computed after the call.
		fmt.Fprintf(b, "\tint64_t mf_bytes;\n")
		got = fmt.Sprintf("\t\tmf_bytes = mf_rc == MPI_SUCCESS ? %s : %s;\n", e, bytesExpr)
	}
	fmt.Fprintf(b, "\tint mf_rc, mf_u = mf_repeat(mf_r, %d, mf_site);\n", id)
	fmt.Fprintf(b, "\tif (mf_u) {\n")
	fmt.Fprintf(b, "\t\tint64_t mf_t0 = mf_u == 2 ? 0 : mf_now();\n")
	fmt.Fprintf(b, "\t\tmf_rc = PMPI_%s(%s);\n", f.Name, f.args())
	fmt.Fprintf(b, "\t\tint64_t mf_t1 = mf_u == 2 ? 0 : mf_now();\n%s", got)
	fmt.Fprintf(b, "\t\tmf_record_rep(mf_r, mf_u, mf_t0, mf_t1, mf_bytes, %s, mf_g->size);\n", peer)
	fmt.Fprintf(b, "\t} else {\n")
	fmt.Fprintf(b, "\t\tint64_t mf_cin[MF_MAX_COUNTERS], mf_cout[MF_MAX_COUNTERS];\n")
	fmt.Fprintf(b, "\t\tif (mf_r->cfg.ncounters)\n\t\t\tmf_counters_read(mf_cin);\n")
	fmt.Fprintf(b, "\t\tint64_t mf_t0 = mf_now();\n")
	fmt.Fprintf(b, "\t\tmf_rc = PMPI_%s(%s);\n", f.Name, f.args())
	fmt.Fprintf(b, "\t\tint64_t mf_t1 = mf_now();\n")
	fmt.Fprintf(b, "\t\tif (mf_r->cfg.ncounters)\n\t\t\tmf_counters_read(mf_cout);\n%s", got)
	fmt.Fprintf(b, "\t\tmf_record_call(mf_r, %d, %s, mf_g->id, mf_g->size, mf_site, mf_bytes, mf_t0, mf_t1, mf_cin, mf_cout);\n\t}\n", id, peer)
}

// cAfter writes what a wrapper does after the call: the handle freed,
// the request followed, the receives tracked or completed.
func cAfter(b *bytes.Buffer, f *Func, kind string) {
	d := f.Dir
	if kind != "" {
		fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS)\n\t\tmf_forget(%s, mf_old);\n", kind)
	}
	if e := d["track"]; e != "" {
		req, from, ok := strings.Cut(e, ",")
		if ok { // its receive's partner is known now, not from the status
			fmt.Fprintf(b, "\tconst int32_t mf_from = %s;\n", peerRE.ReplaceAllString(from, "mf_peer(mf_g, $1)"))
			fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS && (mf_g->inter || !mf_g->identity || mf_from != -1))\n\t\tmf_req_track(MF_H(%s), mf_g, mf_from);\n", req)
		} else {
			fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS && (mf_g->inter || !mf_g->identity))\n\t\tmf_req_track(MF_H(%s), mf_g, -1);\n", req)
		}
	}
	if e := d["recv"]; e != "" {
		req, anyComm, ok := strings.Cut(e, ",")
		if !ok {
			anyComm = "NULL"
		}
		fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS)\n\t\tmf_recv_track(mf_r, MF_H(%s), mf_bytes, %s);\n", req, anyComm)
	} else if f.createsRequest() {
		// a handle that a receive completed by another thread had
		fmt.Fprintf(b, "\tif (mf_tls_recvs.n && mf_recv_shared && mf_rc == MPI_SUCCESS)\n\t\tmf_recv_forget(MF_H(*request));\n")
	}
	if e := d["req"]; e != "" {
		fmt.Fprintf(b, "\tif (mf_rg.g && (%s) == MPI_REQUEST_NULL)\n\t\tmf_req_done(mf_rh);\n", e)
		if st := d["recvd"]; st != "" {
			if st != "NULL" {
				st = "mf_rc == MPI_SUCCESS ? " + st + " : NULL"
			}
			fmt.Fprintf(b, "\tif (mf_tls_recvs.n && (%s) == MPI_REQUEST_NULL)\n\t\tmf_recv_done(mf_r, mf_rh, %s);\n", e, st)
		}
	}
	if e := d["reqs"]; e != "" {
		n, arr, _ := strings.Cut(e, ",")
		if st := d["recvall"]; st != "" {
			fmt.Fprintf(b, "\tif (mf_tk.n)\n\t\tmf_recvs_got(mf_r, &mf_tk, %s, %s, mf_rc);\n", arr, st)
		}
		fmt.Fprintf(b, "\tif (mf_saved) {\n")
		switch rd := strings.Split(d["recvd"], ","); {
		case d["recvd"] == "": // recvall=, above
		case len(rd) == 1: // Testall
			fmt.Fprintf(b, "\t\tmf_recvs_all(mf_r, %s, mf_saved, %s, mf_rc == MPI_SUCCESS ? %s : NULL);\n", n, arr, rd[0])
		case len(rd) == 2: // Waitany, Testany: a poll that completes nothing calls nothing
			fmt.Fprintf(b, "\t\tif (mf_tls_recvs.n && *%s >= 0)\n\t\t\tmf_recvs_done(mf_r, %s, mf_saved, %s, mf_rc == MPI_SUCCESS ? %s : NULL, %s, 1);\n", rd[1], n, arr, rd[0], rd[1])
		case len(rd) == 3: // Waitsome, Testsome
			fmt.Fprintf(b, "\t\tif (mf_tls_recvs.n && *%s > 0)\n\t\t\tmf_recvs_done(mf_r, %s, mf_saved, %s, mf_rc == MPI_SUCCESS ? %s : NULL, %s, *%s);\n", rd[2], n, arr, rd[0], rd[1], rd[2])
		}
		fmt.Fprintf(b, "\t\tif (mf_nreq)\n\t\t\tmf_reqs_done(%s, mf_saved, %s);\n\t\tMF_SAVE_FREE(mf_saved, mf_sbuf);\n\t}\n", n, arr)
		if f.statusesArray() != "" {
			fmt.Fprintf(b, "\tMF_SAVE_FREE(mf_sts, mf_stbuf);\n")
		}
	}
}

// statusesArray is the statuses array of a completion call on an array
// of requests (recvall=S, recvd=S or recvd=S,X,O), which gets statuses of
// ours in place of MPI_STATUSES_IGNORE; "" for one with a single status
// (recvd=S,I) or none.
func (f *Func) statusesArray() string {
	if st := f.Dir["recvall"]; st != "" {
		return st
	}
	if rd := strings.Split(f.Dir["recvd"], ","); len(rd) != 2 {
		return rd[0]
	}
	return ""
}

// quickHandle is, for a call whose untimed repeats the C entry records
// itself (cQuickEntry), the handle that its size comes from (MF_H of its
// communicator, window or file, or 0); "" for the others. Those are the
// calls all of whose record is known from their arguments, bytes and
// handle, without a partner (which an untimed repeat adds to its node at
// once) and with bytes that need no facts of the communicator, and that
// need nothing done after them: no status, request or handle to follow.
func (f *Func) quickHandle() string {
	d := f.Dir
	if f.Variadic {
		return ""
	}
	for _, k := range []string{"status", "got", "forget", "track", "recv", "recvd", "recvall", "req", "reqs", "peer"} {
		if d[k] != "" {
			return ""
		}
	}
	// a size that needs the communicator's facts would need its lookup
	if f.Name == "Abort" || f.createsRequest() || strings.Contains(d["bytes"], "mf_g") {
		return ""
	}
	for _, k := range []string{"comm", "win", "file"} {
		if e := d[k]; e != "" {
			return "MF_H(" + e + ")"
		}
	}
	return "0"
}

// cQuickEntry writes the C entry point of a call with a quickHandle: an
// untimed repeat on the handle and with the bytes of its run's last event
// (mf_rep_quick) is counted and ends in a tail call of the PMPI function;
// any other event goes to the recording body (a tail call too where the
// arguments fit in registers). The first path needs no frame, which the
// body builds (registers saved, arguments kept across the call).
func (s *Spec) cQuickEntry(b *bytes.Buffer, id int, f *Func) {
	sep := ""
	if len(f.Params) > 0 {
		sep = ", "
	}
	fmt.Fprintf(b, "\nMF_EXPORT int MPI_%s(%s)\n{\n", f.Name, f.decl())
	fmt.Fprintf(b, "\tconst uint64_t mf_site = (uint64_t)(uintptr_t)__builtin_return_address(0);\n\tmf_rec *mf_r = mf_tls_rec;\n")
	fmt.Fprintf(b, "\tif (mf_r && mf_rep_quick(mf_r, %d, mf_site, %s)) {\n", id, f.quickHandle())
	if e := f.Dir["bytes"]; e != "" {
		// datatype sizes that need no call, or none (mf_tsize_known)
		e = strings.ReplaceAll(e, "MF_CB(", "MF_CBK(&mf_miss, ")
		e = strings.ReplaceAll(e, "mf_tsize(", "mf_tsize_k(&mf_miss, ")
		fmt.Fprintf(b, "\t\tint mf_miss = 0;\n\t\tconst int64_t mf_bytes = %s;\n", e)
		fmt.Fprintf(b, "\t\tif (!mf_miss && mf_rep_count(mf_r, mf_bytes))\n")
	} else {
		fmt.Fprintf(b, "\t\tif (mf_rep_count(mf_r, 0))\n")
	}
	fmt.Fprintf(b, "\t\t\treturn PMPI_%s(%s);\n\t}\n", f.Name, f.args())
	fmt.Fprintf(b, "\treturn mf_%s(mf_site%s%s);\n}\n", f.Name, sep, f.args())
}

// createsRequest tells whether f returns a new request in *request (the
// nonblocking and persistent calls), rather than working on one.
func (f *Func) createsRequest() bool {
	if f.Dir["req"] != "" || f.Name == "Cancel" || f.Name == "Start" {
		return false
	}
	for _, p := range f.Params {
		if p.Name == "request" && strings.Contains(p.Decl, "MPI_Request") && strings.Contains(p.Decl, "*") {
			return true
		}
	}
	return false
}

// bodyDecl is the parameter list of a recording body after its site.
func (f *Func) bodyDecl() string {
	if len(f.Params) == 0 {
		return ""
	}
	return ", " + f.decl()
}

// cEntry writes the C entry point, which records with its caller's
// return address as the call site.
func (s *Spec) cEntry(b *bytes.Buffer, f *Func) {
	sep := ""
	if len(f.Params) > 0 {
		sep = ", "
	}
	fmt.Fprintf(b, "\nMF_EXPORT int MPI_%s(%s)\n{\n\treturn mf_%s((uint64_t)(uintptr_t)__builtin_return_address(0)%s%s);\n}\n", f.Name, f.decl(), f.Name, sep, f.args())
}

func (s *Spec) cInit(b *bytes.Buffer, id int, f *Func) {
	provided := "MPI_THREAD_SINGLE"
	if f.Name == "Init_thread" {
		provided = "*provided"
	}
	fmt.Fprintf(b, "static inline __attribute__((always_inline)) int mf_%s(uint64_t mf_site%s)\n{\n", f.Name, f.bodyDecl())
	fmt.Fprintf(b, "\tint64_t mf_real = mf_now_real();\n\tint64_t mf_t0 = mf_now();\n")
	fmt.Fprintf(b, "\tint mf_rc = PMPI_%s(%s);\n", f.Name, f.args())
	fmt.Fprintf(b, "\tint64_t mf_t1 = mf_now();\n")
	fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS)\n\t\tmf_start(mf_t0, mf_real, %s);\n", provided)
	fmt.Fprintf(b, "\tmf_rec *mf_r = mf_tls_rec;\n\tif (mf_r) {\n")
	fmt.Fprintf(b, "\t\t/* No edge leads to the first event: only its exit counts matter. */\n")
	fmt.Fprintf(b, "\t\tint64_t mf_c[MF_MAX_COUNTERS];\n\t\tif (mf_r->cfg.ncounters)\n\t\t\tmf_counters_read(mf_c);\n")
	fmt.Fprintf(b, "\t\tmf_record_call(mf_r, %d, -1, 0, mf_world_info.size, mf_site, 0, mf_t0, mf_t1, mf_c, mf_c);\n\t}\n\treturn mf_rc;\n}\n", id)
	s.cEntry(b, f)
}

func (s *Spec) cFinalize(b *bytes.Buffer, id int, f *Func) {
	fmt.Fprintf(b, "static inline __attribute__((always_inline)) int mf_%s(uint64_t mf_site%s)\n{\n", f.Name, f.bodyDecl())
	fmt.Fprintf(b, "\tmf_rec *mf_r = mf_tls_rec;\n\tif (mf_r) {\n")
	fmt.Fprintf(b, "\t\t/* The event ends where writing the profile starts. */\n")
	fmt.Fprintf(b, "\t\tint64_t mf_c[MF_MAX_COUNTERS];\n\t\tif (mf_r->cfg.ncounters)\n\t\t\tmf_counters_read(mf_c);\n")
	fmt.Fprintf(b, "\t\tint64_t mf_t0 = mf_now();\n")
	fmt.Fprintf(b, "\t\tint64_t mf_t1 = mf_now();\n")
	fmt.Fprintf(b, "\t\tmf_record_call(mf_r, %d, -1, 0, mf_world_info.size, mf_site, 0, mf_t0, mf_t1, mf_c, mf_c);\n\t\tmf_finish();\n\t}\n", id)
	fmt.Fprintf(b, "\treturn PMPI_%s(%s);\n}\n", f.Name, f.args())
	s.cEntry(b, f)
}

// cPcontrol writes MPI_Pcontrol: recorded as any call, at the pseudo call
// site of its caller, level and name (regions.h), so that each region's
// entry and exit are nodes of their own. The name is not passed on: MPI
// libraries ignore MPI_Pcontrol's arguments.
func (s *Spec) cPcontrol(b *bytes.Buffer, id int, f *Func) {
	if len(f.Params) != 1 || !f.Variadic {
		panic("MPI_Pcontrol(const int level, ...) expected")
	}
	s.cWrapper(b, id, f)
	fmt.Fprintf(b, "\nMF_EXPORT int MPI_%s(%s, ...)\n{\n", f.Name, f.decl())
	fmt.Fprintf(b, "\tva_list mf_ap;\n\tva_start(mf_ap, %[1]s);\n\tconst char *mf_name = va_arg(mf_ap, const char *);\n\tva_end(mf_ap);\n", f.Params[0].Name)
	fmt.Fprintf(b, "\treturn mf_%s(mf_region_site((uint64_t)(uintptr_t)__builtin_return_address(0), %s, mf_name), %s);\n}\n", f.Name, f.Params[0].Name, f.args())
}

// wrapText fills s into lines of at most 80 columns, ending with a newline.
func wrapText(s string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		switch {
		case n == 0:
		case n+1+len(w) > 80:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	b.WriteString("\n")
	return b.String()
}

// Go returns the generated Go file listing wrapped and excluded calls.
func (s *Spec) Go() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by interpose/gen from gen/mpi.spec; DO NOT EDIT.\n\npackage main\n\n")
	b.WriteString("// wrappedCalls lists the MPI functions that have a recording wrapper,\n// in call-number order.\nfunc wrappedCalls() []string {\n\treturn []string{\n")
	for _, f := range s.Funcs {
		fmt.Fprintf(&b, "\t\t%q,\n", "MPI_"+f.Name)
	}
	b.WriteString("\t}\n}\n\n// wrappedSince gives the MPI version of the wrapped functions newer than\n// MPI-3.1: their wrappers are compiled only against an mpi.h of that\n// version or newer.\nfunc wrappedSince() map[string]string {\n\treturn map[string]string{\n")
	for _, f := range s.Funcs {
		if f.Since != "" {
			fmt.Fprintf(&b, "\t\t%q: %q,\n", "MPI_"+f.Name, f.Since)
		}
	}
	b.WriteString("\t}\n}\n\n// excludedCalls lists the MPI functions deliberately not wrapped, with\n// the reason.\nfunc excludedCalls() map[string]string {\n\treturn map[string]string{\n")
	for _, e := range s.Excluded {
		fmt.Fprintf(&b, "\t\t%q: %q,\n", "MPI_"+e.Name, e.Reason)
	}
	b.WriteString("\t}\n}\n")
	return format.Source(b.Bytes())
}

// Markdown returns WRAPPED.md.
func (s *Spec) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Code generated by interpose/gen from gen/mpi.spec; DO NOT EDIT. -->\n")
	b.WriteString("## What mpiflow records\n\n")
	newer := s.mdIntro(&b)
	s.mdCalls(&b)
	s.mdFortran(&b, len(newer) > 0)
	s.mdExcluded(&b)
	return b.Bytes()
}

// mdIntro writes what the wrappers record and which need a newer mpi.h,
// and returns the MPI versions newer than 3.1 that the spec has.
func (s *Spec) mdIntro(b *bytes.Buffer) []string {
	var newer []string
	versions := map[string]int{}
	older := len(s.Funcs)
	for _, f := range s.Funcs {
		if f.Since != "" {
			if versions[f.Since] == 0 {
				newer = append(newer, f.Since)
			}
			versions[f.Since]++
			older--
		}
	}
	api := "the MPI-3.1 C API"
	if len(newer) > 0 {
		api = fmt.Sprintf("the MPI C API (%d of MPI-3.1", older)
		for _, v := range newer {
			api += fmt.Sprintf(", %d added by MPI-%s", versions[v], v)
		}
		api += ")"
	}
	b.WriteString(wrapText(fmt.Sprintf("The preload library wraps %d functions of %s: everything an "+
		"application can call to communicate, synchronize or do I/O. Each wrapper calls "+
		"the PMPI function, returns its result unchanged and records the call, its call "+
		"site, start and end time, the bytes (count x type size; summed over peers for "+
		"vector collectives), the partner as a world rank and the communicator size. "+
		"`MPI_IN_PLACE`, `MPI_PROC_NULL`, `MPI_ANY_SOURCE`, `MPI_STATUS_IGNORE` and "+
		"intercommunicators are handled. For Wait, Test, Waitany, Testany and "+
		"Request_get_status the partner is the status's source, translated to a world "+
		"rank through the request's communicator (receives posted on communicators whose "+
		"ranks are not world ranks are tracked until they complete); Waitall, Waitsome, "+
		"Testall and Testsome record no partner. Blocking receives (Recv, Mrecv and the "+
		"receive half of Sendrecv) record the size received, from the status "+
		"(MPI_Get_count); nonblocking ones the posted size (count x type size), as "+
		"the message has not arrived when they return.", len(s.Funcs), api)))
	b.WriteString("\n")
	for _, v := range newer {
		b.WriteString(wrapText(fmt.Sprintf("The functions of the groups marked MPI-%s are wrapped only when the "+
			"library is built against an `mpi.h` of MPI-%s or newer (`MPI_VERSION`, `MPI_SUBVERSION`; "+
			"MPICH 4's is MPI-4.0); against an older one (Open MPI 4.1's is MPI-3.1) the library "+
			"has no such wrappers. Call names and numbers are the same in every build.", v, v)))
		b.WriteString("\n")
	}
	if len(newer) > 0 {
		b.WriteString(wrapText("Persistent collectives (`MPI_Allreduce_init` ...) record the bytes of one " +
			"start, like their nonblocking forms; Psend_init and Precv_init the bytes of all " +
			"partitions (partitions x count x type size) and the partner; Pready, " +
			"Pready_range, Pready_list and Parrived no bytes and no partner (the partition " +
			"belongs to a request). Large-count (`_c`) calls record the same as their int forms."))
		b.WriteString("\n")
	}
	b.WriteString("The list is generated from `interpose/gen/mpi.spec`, and a test checks it against\n")
	b.WriteString("the `mpi.h` in use, so no function is missed silently.\n")
	return newer
}

// mdCalls writes a table per group of the bytes and partner each call
// records.
func (s *Spec) mdCalls(b *bytes.Buffer) {
	group := ""
	for _, f := range s.Funcs {
		if f.Group != group {
			group = f.Group
			title := group
			if f.Since != "" && !strings.Contains(title, "MPI-"+f.Since) {
				title += " (MPI-" + f.Since + ")"
			}
			fmt.Fprintf(b, "\n### %s\n\n| Function | Bytes | Partner |\n|---|---|---|\n", title)
		}
		by, pe := f.Dir["bytes"], f.Dir["peer"]
		if g := f.Dir["got"]; g != "" {
			by = g
		}
		if by == "" {
			by = "-"
		} else {
			by = "`" + by + "`"
		}
		if pe == "" {
			pe = "-"
		} else {
			pe = "`" + strings.ReplaceAll(pe, "|", "\\|") + "`"
		}
		fmt.Fprintf(b, "| MPI_%s | %s | %s |\n", f.Name, by, pe)
	}
}

// mdFortran writes which calls have Fortran entry points; newer: the spec
// has calls newer than MPI-3.1.
func (s *Spec) mdFortran(b *bytes.Buffer, newer bool) {
	fs, _ := s.fortranFuncs(f77)
	inF := map[string]bool{}
	n31 := 0
	for _, f := range fs {
		inF[f.Name] = true
		if f.Since == "" {
			n31++
		}
	}
	var noF, newF []string
	for _, f := range s.Funcs {
		switch {
		case !inF[f.Name] && f.Since == "":
			noF = append(noF, "MPI_"+f.Name)
		case inF[f.Name] && f.Since != "":
			newF = append(newF, "MPI_"+f.Name)
		}
	}
	var large []string
	f8, a8 := s.fortranFuncs(f08)
	for k, f := range f8 {
		if name, _, _, _ := f08Name(f, a8[k]); name != "" && strings.HasSuffix(f.Name, "_c") {
			large = append(large, "MPI_"+f.Name)
		}
	}
	fmt.Fprintf(b, "\n### Fortran\n\n%d of these also have Fortran entry points (`mpi_send_`, `mpi_send__`,\n", n31)
	b.WriteString("`mpi_send`, `MPI_SEND`) for programs using `mpif.h` or `use mpi`; they record\n")
	b.WriteString("the call once, with the Fortran caller as the call site. Without one (string,\n")
	b.WriteString("datatype-array or address arguments): ")
	b.WriteString(strings.Join(noF, ", "))
	b.WriteString(". A Fortran call of these goes to the MPI's own binding: MPICH's calls the\n")
	b.WriteString("C `MPI_` function, which is recorded (call site inside libmpichfort); Open\n")
	b.WriteString("MPI's calls `PMPI_` and is not recorded.\n\n")
	b.WriteString(wrapText(fmt.Sprintf("The same %d have `use mpi_f08` entry points: `mpi_send_f08_` "+
		"(Open MPI; MPICH for those without a choice buffer) and `mpi_send_f08ts_` (MPICH, whose "+
		"module passes choice buffers as array descriptors). They record the call once, with "+
		"the Fortran caller as the call site, except that under MPICH a choice buffer that is "+
		"a non-contiguous array section goes to MPICH's own procedure, which records it through "+
		"the C wrapper (call site inside libmpichfort; see README.md). A `use mpi_f08` call "+
		"of the functions without an entry point goes to the MPI's own procedure: MPICH's "+
		"with a choice buffer (the `w` collectives) call the C `MPI_` function and are "+
		"recorded, with the call site inside libmpichfort; MPICH's others call `PMPI_`, "+
		"and Open MPI's go through `ompi_*_f` to `PMPI_`: not recorded.", n31)))
	if newer {
		b.WriteString("\n")
		b.WriteString(wrapText(fmt.Sprintf("Of the functions newer than MPI-3.1, %d have both kinds "+
			"of entry point, and %d of the large-count ones have `use mpi_f08` entry points "+
			"(`mpi_send_f08ts_large_`), compiled, like their C wrappers, only against an `mpi.h` "+
			"that declares them (MPICH 4's), and recording the same way: %s; large count: %s. "+
			"The others (string arguments, arrays of `MPI_Count`) go to MPICH's binding, which "+
			"calls the C `MPI_` function (recorded, with the call site inside libmpichfort) or, "+
			"in `mpi_f08` without a choice buffer, `PMPI_` (not recorded).",
			len(newF), len(large), strings.Join(newF, ", "), strings.Join(large, ", "))))
	}
}

// mdExcluded writes the functions not wrapped, by reason.
func (s *Spec) mdExcluded(b *bytes.Buffer) {
	b.WriteString("\n### Not wrapped\n\nThese record nothing useful (local calls) or are not MPI communication:\n\n")
	reasons := map[string][]string{}
	var order []string
	for _, e := range s.Excluded {
		if _, ok := reasons[e.Reason]; !ok {
			order = append(order, e.Reason)
		}
		reasons[e.Reason] = append(reasons[e.Reason], "MPI_"+e.Name)
	}
	for _, r := range order {
		n := reasons[r]
		sort.Strings(n)
		fmt.Fprintf(b, "- %s: %s\n", r, strings.Join(n, ", "))
	}
}

func main() {
	spec := flag.String("spec", "gen/mpi.spec", "spec table")
	cOut := flag.String("c", "csrc/wrappers_gen.c", "C output, and its header (.h for .c)")
	goOut := flag.String("go", "wrapped_gen.go", "Go output")
	mdOut := flag.String("md", "WRAPPED.md", "Markdown output")
	taxonomy := taxonomyFlag() // -taxonomy FILE: package mpicall's table alone (taxonomy.go)
	flag.Parse()
	taxonomy(*spec)
	if err := run(*spec, *cOut, *goOut, *mdOut); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(spec, cOut, goOut, mdOut string) error {
	f, err := os.Open(spec)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	g, err := s.Go()
	if err != nil {
		return fmt.Errorf("format Go output: %w", err)
	}
	for _, o := range []struct {
		path string
		b    []byte
	}{{cOut, s.C()}, {strings.TrimSuffix(cOut, ".c") + ".h", s.CHeader()}, {goOut, g}, {mdOut, s.Markdown()}} {
		if err := os.WriteFile(o.path, o.b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
