/*
 * fortran.c: what the Fortran entry points need beyond mf_mpi.h: the
 * addresses of the Fortran MPI_BOTTOM, MPI_IN_PLACE and status sentinels
 * of mpif.h and of the mpi_f08 module (mf_fsent), the MPI's own f08
 * procedures (mf_f08_next), and temporary C arrays of statuses and
 * requests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "mf_mpi.h"

mf_fsentinels mf_fsent;

void mf_fsent_init(void)
{
	mf_fsentinels f = {.ready = 1};
#if defined(OPEN_MPI)
	f.bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
	f.in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
	f.status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
	f.statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
	f.unweighted = dlsym(RTLD_DEFAULT, "mpi_fortran_unweighted_");
	f.weights_empty = dlsym(RTLD_DEFAULT, "mpi_fortran_weights_empty_");
	/* The mpi_f08 module declares its sentinels in the same common
	 * blocks. */
	f.f08_bottom = f.bottom;
	f.f08_in_place = f.in_place;
	f.f08_status_ignore = f.status_ignore;
	f.f08_statuses_ignore = f.statuses_ignore;
	f.f08_unweighted = f.unweighted;
	f.f08_weights_empty = f.weights_empty;
#else
	/* MPICH: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
	 * and /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE (mpif.h). */
	const MPI_Fint *p1 = dlsym(RTLD_DEFAULT, "mpipriv1_");
	const MPI_Fint *p2 = dlsym(RTLD_DEFAULT, "mpipriv2_");
	if (p1) {
		f.bottom = p1;
		f.in_place = p1 + 1;
		f.status_ignore = p1 + 2;
	}
	f.statuses_ignore = p2;
	/* COMMON /MPIFCMB5/ MPI_UNWEIGHTED, /MPIFCMB9/ MPI_WEIGHTS_EMPTY. */
	f.unweighted = dlsym(RTLD_DEFAULT, "mpifcmb5_");
	f.weights_empty = dlsym(RTLD_DEFAULT, "mpifcmb9_");
	/* The mpi_f08 module's, in libmpich and libmpichfort (a program that
	 * uses them has its own copy, which dlsym finds first). */
	f.f08_bottom = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_BOTTOM");
	f.f08_in_place = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE");
	f.f08_status_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
	f.f08_statuses_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
	f.f08_unweighted = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_unweighted");
	f.f08_weights_empty = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_weights_empty");
#endif
	mf_fsent.bottom = f.bottom;
	mf_fsent.in_place = f.in_place;
	mf_fsent.status_ignore = f.status_ignore;
	mf_fsent.statuses_ignore = f.statuses_ignore;
	mf_fsent.f08_bottom = f.f08_bottom;
	mf_fsent.f08_in_place = f.f08_in_place;
	mf_fsent.f08_status_ignore = f.f08_status_ignore;
	mf_fsent.f08_statuses_ignore = f.f08_statuses_ignore;
	mf_fsent.unweighted = f.unweighted;
	mf_fsent.weights_empty = f.weights_empty;
	mf_fsent.f08_unweighted = f.f08_unweighted;
	mf_fsent.f08_weights_empty = f.f08_weights_empty;
	__atomic_store_n(&mf_fsent.ready, 1, __ATOMIC_RELEASE);
}

int mf_f08_next(void **fn, const char *name, MPI_Fint *ierror)
{
	void *f = __atomic_load_n(fn, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(fn, f, __ATOMIC_RELEASE);
	}
	if (f)
		return 0;
	if (ierror)
		*ierror = MPI_ERR_INTERN;
	return -1;
}

MPI_Status *mf_fstatuses(int n)
{
	MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
	return s ? s : MPI_STATUSES_IGNORE;
}

MPI_Request *mf_freqs(int n) { return malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1)); }

void mf_ffree(void *p) { free(p); }
