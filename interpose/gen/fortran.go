package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// The Fortran entry points (mpi_send_, mpi_send__, mpi_send, MPI_SEND) of
// the functions whose parameters all have a known Fortran form. They are
// generated from the same spec: every argument arrives by reference,
// handles as MPI_Fint converted with the _f2c/_c2f functions, statuses as
// MPI_Fint arrays, and an ierr argument last. Each calls the same inline
// recording body as the C entry point with its own caller's return address
// as the call site, and calls the PMPI_ C function, so a Fortran call is
// recorded once whether the MPI's own Fortran layer calls PMPI_ (Open MPI)
// or MPI_ (MPICH).

// handleTypes maps a C handle type to the stem of its conversion functions.
var handleTypes = map[string]string{
	"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Group": "Group", "MPI_Win": "Win",
	"MPI_File": "File", "MPI_Info": "Info", "MPI_Errhandler": "Errhandler", "MPI_Message": "Message", "MPI_Request": "Request",
}

// inoutRE matches the functions whose handle pointer arguments are read
// as well as written (the others only return a new handle).
var inoutRE = regexp.MustCompile(`(?i)free|close|disconnect|^wait|^test|^start|^cancel|mrecv|^Request_get_status|^Type_commit`)

// farg is how one C parameter is passed from Fortran.
type farg struct {
	decl string // Fortran-side C declaration
	pre  string // statements before the call
	arg  string // C argument expression
	post string // statements after a successful call
	fin  string // statements after the call, always
	buf  bool   // a choice buffer
}

var fparamRE = regexp.MustCompile(`^(const\s+)?([A-Za-z_]+)\s*(\*?)\s*([A-Za-z_0-9]+)\s*(\[\])?$`)

// flavor is what differs between the Fortran bindings whose arguments are
// otherwise passed alike: mpif.h and `use mpi` (f77), and `use mpi_f08`
// (f08), which has its own sentinels under MPICH and, in MPICH built with
// TS 29113 support, passes choice buffers as array descriptors.
type flavor struct {
	buf    string // C type a choice buffer arrives as (pointed to)
	addr   string // function giving a buffer's C address (MPI_IN_PLACE ...)
	status string // function telling MPI_STATUS_IGNORE
	stats  string // function telling MPI_STATUSES_IGNORE
	wts    string // function mapping MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY
}

var (
	f77 = flavor{buf: "void", addr: "mf_fbuf", status: "mf_fstatus_ignore", stats: "mf_fstatuses_ignore", wts: "mf_fweights"}
	f08 = flavor{buf: "mf_f08buf", addr: "mf_f08_addr", status: "mf_f08status_ignore", stats: "mf_f08statuses_ignore", wts: "mf_f08weights"}
)

// fortranArg returns the Fortran form of parameter p of f in binding fl,
// or false when the parameter has none that the generator knows.
func fortranArg(fl flavor, f *Func, i int, p Param) (farg, bool) {
	m := fparamRE.FindStringSubmatch(strings.TrimSpace(p.Decl))
	if m == nil {
		return farg{}, false
	}
	typ, ptr, name, arr := m[2], m[3] != "", m[4], m[5] != ""
	c := "mf_c_" + name
	switch {
	case typ == "void" && ptr && !arr:
		// Fortran passes an address (baseptr) and an attribute's value
		// (attribute_val) as integers, where C has a pointer to them.
		if name == "baseptr" || name == "attribute_val" {
			return farg{}, false
		}
		return farg{decl: fl.buf + " *" + name, arg: fl.addr + "(" + name + ")", buf: true}, true
	case typ == "int" && !ptr && !arr:
		return farg{decl: "MPI_Fint *" + name, arg: "(int)*" + name}, true
	case typ == "int" && arr && strings.HasSuffix(name, "weights"):
		// Dist_graph_create(_adjacent): MPI_UNWEIGHTED and
		// MPI_WEIGHTS_EMPTY are variables in Fortran, pointer constants
		// in C; passed as they are, the graph would be weighted.
		return farg{decl: "MPI_Fint *" + name, arg: fl.wts + "(" + name + ")"}, true
	case typ == "int" && arr:
		return farg{decl: "MPI_Fint *" + name, arg: "(int *)" + name}, true
	case typ == "int" && ptr:
		a := farg{decl: "MPI_Fint *" + name, arg: "(int *)" + name}
		if name == "index" {
			a.post = fmt.Sprintf("\tif (*%s >= 0)\n\t\t(*%s)++;\n", name, name)
		}
		return a, true
	case (typ == "MPI_Aint" || typ == "MPI_Offset" || typ == "MPI_Count") && !ptr && !arr:
		return farg{decl: typ + " *" + name, arg: "*" + name}, true
	case typ == "MPI_Aint" && arr:
		return farg{decl: "MPI_Aint *" + name, arg: name}, true
	case typ == "MPI_Status" && ptr:
		return farg{decl: "MPI_Fint *" + name,
			pre:  fmt.Sprintf("\tMPI_Status %s_s, *%s = %s(%s) ? MPI_STATUS_IGNORE : &%s_s;\n", c, c, fl.status, name, c),
			arg:  c,
			post: fmt.Sprintf("\tif (%s != MPI_STATUS_IGNORE)\n\t\tPMPI_Status_c2f(%s, %s);\n", c, c, name)}, true
	case typ == "MPI_Status" && arr:
		n := countParam(f, i)
		if n == "" {
			return farg{}, false
		}
		return farg{decl: "MPI_Fint *" + name,
			pre:  fmt.Sprintf("\tMPI_Status *%s = %s(%s) ? MPI_STATUSES_IGNORE : mf_fstatuses(*%s);\n", c, fl.stats, name, n),
			arg:  c,
			post: fmt.Sprintf("\tif (%s != MPI_STATUSES_IGNORE) {\n\t\tfor (int mf_i = 0; mf_i < *%s; mf_i++)\n\t\t\tPMPI_Status_c2f(&%s[mf_i], %s + mf_i * MF_F_STATUS_SIZE);\n\t}\n", c, n, c, name),
			fin:  fmt.Sprintf("\tif (%s != MPI_STATUSES_IGNORE)\n\t\tmf_ffree(%s);\n", c, c)}, true
	}
	stem, ok := handleTypes[typ]
	if !ok {
		return farg{}, false
	}
	switch {
	case !ptr && !arr:
		return farg{decl: "MPI_Fint *" + name, arg: fmt.Sprintf("PMPI_%s_f2c(*%s)", stem, name)}, true
	case ptr && !arr:
		a := farg{decl: "MPI_Fint *" + name, arg: "&" + c,
			post: fmt.Sprintf("\t*%s = PMPI_%s_c2f(%s);\n", name, stem, c)}
		if inoutRE.MatchString(f.Name) {
			a.pre = fmt.Sprintf("\t%s %s = PMPI_%s_f2c(*%s);\n", typ, c, stem, name)
		} else {
			a.pre = fmt.Sprintf("\t%s %s;\n", typ, c)
		}
		return a, true
	case arr && typ == "MPI_Request":
		n := countParam(f, i)
		if n == "" {
			return farg{}, false
		}
		return farg{decl: "MPI_Fint *" + name,
			pre: fmt.Sprintf("\tMPI_Request *%s = mf_freqs(*%s);\n\tif (!%s) {\n\t\t*ierr = MPI_ERR_NO_MEM;\n\t\treturn;\n\t}\n\tfor (int mf_i = 0; mf_i < *%s; mf_i++)\n\t\t%s[mf_i] = PMPI_Request_f2c(%s[mf_i]);\n",
				c, n, c, n, c, name),
			arg: c,
			fin: fmt.Sprintf("\tfor (int mf_i = 0; mf_i < *%s; mf_i++)\n\t\t%s[mf_i] = PMPI_Request_c2f(%s[mf_i]);\n\tmf_ffree(%s);\n", n, name, c, c)}, true
	}
	return farg{}, false
}

// countParam is the name of the count parameter that sizes array i: the
// first parameter named count or incount.
func countParam(f *Func, i int) string {
	for _, p := range f.Params[:i] {
		if p.Name == "count" || p.Name == "incount" {
			return p.Name
		}
	}
	return ""
}

// fortranFuncs returns the functions that get Fortran entry points and
// their arguments in binding fl (the same functions in every binding).
func (s *Spec) fortranFuncs(fl flavor) ([]*Func, [][]farg) {
	var fs []*Func
	var args [][]farg
	for i := range s.Funcs {
		f := &s.Funcs[i]
		if f.Since != "" && fl == f77 && strings.HasSuffix(f.Name, "_c") {
			continue // large counts exist only in mpi_f08
		}
		var as []farg
		ok := true
		switch f.Name {
		case "Buffer_detach":
			ok = false // the buffer argument is an address returned, not a buffer
		case "Pcontrol":
			ok = false // Fortran's MPI_PCONTROL takes no region name
		case "Init":
			as = []farg{{arg: "NULL"}, {arg: "NULL"}}
		case "Init_thread":
			as = []farg{{arg: "NULL"}, {arg: "NULL"}, {decl: "MPI_Fint *required", arg: "(int)*required"}, {decl: "MPI_Fint *provided", arg: "(int *)provided"}}
		default:
			for j, p := range f.Params {
				a, good := fortranArg(fl, f, j, p)
				if !good {
					ok = false
					break
				}
				as = append(as, a)
			}
		}
		if !ok {
			continue
		}
		// Waitsome/Testsome return 1-based indices, outcount of them.
		if f.Name == "Waitsome" || f.Name == "Testsome" {
			as[3].post = "\tif (*outcount != MPI_UNDEFINED)\n\t\tfor (int mf_i = 0; mf_i < *outcount; mf_i++)\n\t\t\tarray_of_indices[mf_i]++;\n"
		}
		fs = append(fs, f)
		args = append(args, as)
	}
	return fs, args
}

// FortranNames returns the MPI functions that have Fortran entry points.
func (s *Spec) FortranNames() []string {
	fs, _ := s.fortranFuncs(f77)
	var n []string
	for _, f := range fs {
		n = append(n, "MPI_"+f.Name)
	}
	return n
}

func (s *Spec) fortran(b *bytes.Buffer) {
	b.WriteString("\n/* ---- Fortran entry points (mpif.h and `use mpi`) ---- */\n")
	fs, args := s.fortranFuncs(f77)
	var g versionGuard
	defer g.end(b)
	for k, f := range fs {
		g.set(b, f.Since)
		as := args[k]
		var decl, call []string
		for _, a := range as {
			if a.decl != "" {
				decl = append(decl, a.decl)
			}
			call = append(call, a.arg)
		}
		decl = append(decl, "MPI_Fint *ierr")
		lower := "mpi_" + strings.ToLower(f.Name)
		fmt.Fprintf(b, "\nMF_EXPORT void %s_(%s)\n{\n", lower, strings.Join(decl, ", "))
		fmt.Fprintf(b, "\tuint64_t mf_site = (uint64_t)(uintptr_t)__builtin_return_address(0);\n")
		fortranCall(b, f, as, call)
		for _, alias := range []string{lower + "__", lower, strings.ToUpper(lower)} {
			fmt.Fprintf(b, "MF_EXPORT void %s(%s) __attribute__((alias(\"%s_\")));\n", alias, strings.Join(decl, ", "), lower)
		}
	}
}

// versionGuard writes the #if around the entry points of functions newer
// than MPI-3.1 (compiled only against an mpi.h that declares them: MPICH
// 4's, whose Fortran bindings would otherwise call the C MPI_ function
// from inside libmpichfort, or in mpi_f08 call PMPI_ and go unrecorded).
type versionGuard struct{ since string }

// set opens the guard of since (closing the one open) if it changes.
func (g *versionGuard) set(b *bytes.Buffer, since string) {
	if since == g.since {
		return
	}
	g.end(b)
	if since != "" {
		fmt.Fprintf(b, "\n#if %s\n", versionCond(since))
	}
	g.since = since
}

// end closes the open guard.
func (g *versionGuard) end(b *bytes.Buffer) {
	if g.since != "" {
		fmt.Fprintf(b, "\n#endif /* MPI %s */\n", g.since)
	}
	g.since = ""
}

// fortranCall writes the end of a Fortran entry point, from the
// conversions before the recording body's call (arguments call) to the
// store of its result in *ierr.
func fortranCall(b *bytes.Buffer, f *Func, as []farg, call []string) {
	for _, a := range as {
		b.WriteString(a.pre)
	}
	sep := ""
	if len(call) > 0 {
		sep = ", "
	}
	fmt.Fprintf(b, "\tint mf_rc = mf_%s(mf_site%s%s);\n", f.Name, sep, strings.Join(call, ", "))
	var post strings.Builder
	for _, a := range as {
		post.WriteString(a.post)
	}
	if post.Len() > 0 {
		fmt.Fprintf(b, "\tif (mf_rc == MPI_SUCCESS) {\n%s\t}\n", indent(post.String()))
	}
	for _, a := range as {
		b.WriteString(a.fin)
	}
	b.WriteString("\t*ierr = mf_rc;\n}\n")
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "\t" + l
		}
	}
	return strings.Join(lines, "")
}
