package main

import (
	"bytes"
	"fmt"
	"strings"
)

// The Fortran 2008 entry points (`use mpi_f08`) of the functions that have
// mpif.h ones. The module's procedures are external subroutines named
// MPI_Send_f08 and so on (gfortran: mpi_send_f08_); MPICH built with
// TS 29113 support names those with a choice buffer MPI_Send_f08ts and
// passes the buffer as an array descriptor. Everything else arrives as
// from mpif.h: TYPE(MPI_Comm) and the other handle types hold one INTEGER,
// so a handle is an MPI_Fint by reference; TYPE(MPI_Status) has the layout
// of the mpif.h status in both MPIs, so statuses convert with
// PMPI_Status_c2f. The differences: ierror is OPTIONAL (NULL when absent),
// and MPICH's module has its own MPI_BOTTOM, MPI_IN_PLACE and status
// sentinels (csrc/fortran.c).
//
// Like the mpif.h entry points, each decodes its arguments, calls the
// inline recording body with its caller's return address as the call site
// and calls the PMPI_ C function: the real f08 procedure is not called, so
// a call is recorded once whether that one would call PMPI_ (Open MPI, and
// MPICH's procedures without a buffer) or the C MPI_ wrapper (MPICH's
// buffer procedures), and the C entry points pay nothing for it. The one
// exception is a descriptor of a non-contiguous array section, which only
// the MPI can turn into a datatype: that call goes to the real procedure
// (dlsym RTLD_NEXT), and MPICH's records it through the C MPI_ wrapper,
// with the call site inside libmpichfort (see README.md).

// f08Name is the C expression of the f08 entry point's name of f:
// MF_F08B(stem) for procedures with a choice buffer (mf_mpi.h picks the
// MPI's suffix), MF_F08L(stem) for their large-count forms (f.Name ends
// in _c; MPICH: stem_f08ts_large_), stem_f08_ for the others. macro is
// the macro used ("" for none).
func f08Name(f *Func, as []farg) (name, macro, stem string, buffers []string) {
	base, large := strings.CutSuffix(f.Name, "_c")
	stem = "mpi_" + strings.ToLower(base)
	for _, a := range as {
		if a.buf {
			buffers = append(buffers, strings.TrimPrefix(a.decl, f08.buf+" *"))
		}
	}
	switch {
	case large && len(buffers) > 0 && !strings.HasPrefix(f.Name, "File_"):
		macro = "MF_F08L"
	case large:
		// No such procedure that the generator knows (MPICH 4.0's
		// module has no large-count MPI-IO).
		return "", "", "", nil
	case len(buffers) > 0:
		macro = "MF_F08B"
	default:
		return stem + "_f08_", "", stem, nil
	}
	return macro + "(" + stem + ")", macro, stem, buffers
}

func (s *Spec) fortran08(b *bytes.Buffer) {
	b.WriteString("\n/* ---- Fortran 2008 entry points (`use mpi_f08`) ---- */\n")
	fs, args := s.fortranFuncs(f08)
	var g versionGuard
	defer g.end(b)
	for k, f := range fs {
		as := args[k]
		name, macro, stem, bufs := f08Name(f, as)
		if name == "" {
			continue
		}
		g.set(b, f.Since)
		var decl, call, pass []string
		for _, a := range as {
			if a.decl != "" {
				decl = append(decl, a.decl)
				pass = append(pass, a.decl[strings.LastIndexAny(a.decl, " *")+1:])
			}
			call = append(call, a.arg)
		}
		decl = append(decl, "MPI_Fint *mf_ierror")
		pass = append(pass, "mf_ierror")
		if macro == "MF_F08L" { // only where the MPI has them
			fmt.Fprintf(b, "\n#ifdef MF_F08L")
		}
		fmt.Fprintf(b, "\nMF_EXPORT void %s(%s)\n{\n", name, strings.Join(decl, ", "))
		fmt.Fprintf(b, "\tuint64_t mf_site = (uint64_t)(uintptr_t)__builtin_return_address(0);\n")
		if len(bufs) > 0 {
			var conds []string
			for _, n := range bufs {
				conds = append(conds, "!mf_f08_contig("+n+")")
			}
			fmt.Fprintf(b, "\tif (__builtin_expect(%s, 0)) {\n", strings.Join(conds, " || "))
			fmt.Fprintf(b, "\t\t/* A section only the MPI can describe: its own procedure. */\n")
			fmt.Fprintf(b, "\t\tstatic void (*mf_real)(%s);\n", strings.Join(decl, ", "))
			fmt.Fprintf(b, "\t\tif (!mf_f08_next((void **)&mf_real, %s_STR(%s), mf_ierror))\n", macro, stem)
			fmt.Fprintf(b, "\t\t\tmf_real(%s);\n\t\treturn;\n\t}\n", strings.Join(pass, ", "))
		}
		// ierror is optional: a local stands in for an absent one, so the
		// conversions below write through ierr as in the mpif.h entries.
		b.WriteString("\tMPI_Fint mf_ierr_absent, *ierr = mf_ierror ? mf_ierror : &mf_ierr_absent;\n")
		fortranCall(b, f, as, call)
		if macro == "MF_F08L" {
			b.WriteString("#endif\n")
		}
	}
}
