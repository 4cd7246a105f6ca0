/*
 * fortran.h: what the Fortran entry points need beyond C's: the
 * sentinels of mpif.h and of the mpi_f08 module, gfortran's array
 * descriptors, and temporary C arrays (fortran.c). Built against one MPI's
 * mpi.h.
 */
#ifndef MPIFLOW_FORTRAN_H
#define MPIFLOW_FORTRAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "visibility.h"

/* ---- Fortran entry points ----
 * Fortran passes MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE as the addresses of variables in common blocks:
 * Open MPI's mpi_fortran_bottom_, mpi_fortran_in_place_,
 * mpi_fortran_status_ignore_, mpi_fortran_statuses_ignore_ (in libmpi);
 * MPICH's /MPIPRIV1/ (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE) and
 * /MPIPRIV2/ (MPI_STATUSES_IGNORE first), in libmpichfort. mf_fsent holds
 * their addresses, looked up once with dlsym (mf_fsent_init): a program
 * that is not Fortran has none of them. */
typedef struct {
	const void *bottom, *in_place, *status_ignore, *statuses_ignore;
	/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY: Open MPI's
	 * mpi_fortran_unweighted_, mpi_fortran_weights_empty_; MPICH's
	 * /MPIFCMB5/ and /MPIFCMB9/. */
	const void *unweighted, *weights_empty;
} mf_fsentset;
typedef struct {
	volatile int ready;
	/* f08: the same for `use mpi_f08`: Open MPI's module uses mpif.h's;
	 * MPICH's has MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE,
	 * MPIR_F08_MPI_STATUS_IGNORE_OBJ, MPIR_F08_MPI_STATUSES_IGNORE_OBJ and
	 * the module variables MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY of
	 * mpi_f08_link_constants. */
	mf_fsentset f77, f08;
} mf_fsentinels;
extern mf_fsentinels mf_fsent MF_HIDDEN;
MF_HIDDEN void mf_fsent_init(void);

/* mf_fsents is the sentinels of mpif.h (f08 0) or of mpi_f08 (1), looked
 * up at the first use. */
static inline const mf_fsentset *mf_fsents(int f08)
{
	if (__builtin_expect(!mf_fsent.ready, 0))
		mf_fsent_init();
	return f08 ? &mf_fsent.f08 : &mf_fsent.f77;
}

/* mf_fsent_buf maps the Fortran MPI_IN_PLACE and MPI_BOTTOM of s to C's. */
static inline void *mf_fsent_buf(const mf_fsentset *s, void *p)
{
	if (p && p == s->in_place)
		return MPI_IN_PLACE;
	if (p && p == s->bottom)
		return MPI_BOTTOM;
	return p;
}

#ifndef MPI_F_STATUS_SIZE
#define MF_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#else
#define MF_F_STATUS_SIZE MPI_F_STATUS_SIZE
#endif

static inline void *mf_fbuf(void *p) { return mf_fsent_buf(mf_fsents(0), p); }

static inline int mf_fstatus_ignore(const MPI_Fint *st)
{
	return (st && (const void *)st == mf_fsents(0)->status_ignore) || (MPI_F_STATUS_IGNORE && st == MPI_F_STATUS_IGNORE);
}

static inline int mf_fstatuses_ignore(const MPI_Fint *st)
{
	return (st && (const void *)st == mf_fsents(0)->statuses_ignore) ||
	       (MPI_F_STATUSES_IGNORE && st == MPI_F_STATUSES_IGNORE);
}

/* mf_weights maps the Fortran MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY of s
 * to the C constants. */
static inline int *mf_weights(MPI_Fint *w, const mf_fsentset *s)
{
	if (w && (const void *)w == s->unweighted)
		return MPI_UNWEIGHTED;
	if (w && (const void *)w == s->weights_empty)
		return MPI_WEIGHTS_EMPTY;
	return (int *)w;
}

static inline int *mf_fweights(MPI_Fint *w) { return mf_weights(w, mf_fsents(0)); }
static inline int *mf_f08weights(MPI_Fint *w) { return mf_weights(w, mf_fsents(1)); }

/* ---- Fortran 2008 entry points (`use mpi_f08`) ----
 * TYPE(MPI_Status) has the mpif.h status's layout in both MPIs (Open MPI:
 * 6 MPI_Fint, MPICH: 5, MPI_F08_status in its mpi.h), so statuses are
 * handled as for mpif.h, with the module's sentinels. Choice buffers: Open
 * MPI 4.1's module passes their address (mpi_send_f08_); MPICH built with
 * TS 29113 support declares them TYPE(*), DIMENSION(..) in procedures
 * named mpi_send_f08ts_, which are not BIND(C): gfortran passes its own
 * array descriptor (GCC 8 and later, libgfortran.so.5: the compiler
 * MPICH's module was built with, which every program using the module is
 * compiled with). MF_F08B names an entry point with a buffer. */
#if defined(MPICH_NUMVERSION)
#define MF_F08B(stem) stem##_f08ts_
#define MF_F08B_STR(stem) #stem "_f08ts_"
/* MF_F08L names the large-count form (MPI-4.0) of one with a buffer. */
#define MF_F08L(stem) stem##_f08ts_large_
#define MF_F08L_STR(stem) #stem "_f08ts_large_"

typedef struct {
	ptrdiff_t stride; /* in units of span */
	ptrdiff_t lower_bound, upper_bound;
} mf_gfc_dim;

/* gfortran's descriptor of an assumed-rank dummy argument. */
typedef struct {
	void *base_addr; /* the first element of the section */
	size_t offset;
	size_t elem_len;
	int version; /* 0 */
	signed char rank, type;
	short attribute;
	ptrdiff_t span; /* bytes per unit of stride */
	mf_gfc_dim dim[15];
} mf_gfc_desc;
typedef mf_gfc_desc mf_f08buf;

static inline void *mf_f08_addr(const mf_gfc_desc *d) { return mf_fsent_buf(mf_fsents(1), d->base_addr); }

/* mf_f08_contig says whether the elements d describes are contiguous from
 * its base address (a scalar, a whole array, a contiguous section; an empty
 * or assumed-size one, whose data, if any, starts there). A descriptor it
 * does not know counts as non-contiguous: the MPI's procedure takes it. */
static inline int mf_f08_contig(const mf_gfc_desc *d)
{
	if (d->rank == 0)
		return 1;
	if (d->rank < 0 || d->rank > 15 || d->version != 0)
		return 0;
	const ptrdiff_t span = d->span > 0 ? d->span : (ptrdiff_t)d->elem_len;
	ptrdiff_t want = (ptrdiff_t)d->elem_len;
	for (int i = 0; i < d->rank; i++) {
		const ptrdiff_t ext = d->dim[i].upper_bound - d->dim[i].lower_bound + 1;
		if (ext <= 0)
			return 1;
		if (ext > 1 && d->dim[i].stride * span != want)
			return 0;
		want *= ext;
	}
	return 1;
}
#else
#define MF_F08B(stem) stem##_f08_
#define MF_F08B_STR(stem) #stem "_f08_"
typedef void mf_f08buf;
static inline void *mf_f08_addr(void *p) { return mf_fsent_buf(mf_fsents(1), p); }
static inline int mf_f08_contig(const void *p) { return 1; }
#endif

static inline int mf_f08status_ignore(const MPI_Fint *st)
{
	return st && (const void *)st == mf_fsents(1)->status_ignore;
}

static inline int mf_f08statuses_ignore(const MPI_Fint *st)
{
	return st && (const void *)st == mf_fsents(1)->statuses_ignore;
}

/* mf_f08_next stores in *fn the MPI's own f08 procedure name (the next
 * definition after this library), and returns 0; or, when there is none,
 * sets *ierror (when present) to MPI_ERR_INTERN and returns -1. */
MF_HIDDEN int mf_f08_next(void **fn, const char *name, MPI_Fint *ierror);

/* Temporary C arrays of statuses and requests for Fortran calls (never
 * NULL for n <= 0; mf_fstatuses gives MPI_STATUSES_IGNORE when out of
 * memory). */
MF_HIDDEN MPI_Status *mf_fstatuses(int n);
MF_HIDDEN MPI_Request *mf_freqs(int n);
MF_HIDDEN void mf_ffree(void *p);

#endif
