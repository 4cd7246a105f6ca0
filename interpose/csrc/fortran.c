/*
 * fortran.c: what the Fortran entry points need beyond mf_mpi.h: the
 * addresses of the Fortran MPI_BOTTOM, MPI_IN_PLACE and status sentinels
 * (mf_fsent), and temporary C arrays of statuses and requests.
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
#endif
	mf_fsent.bottom = f.bottom;
	mf_fsent.in_place = f.in_place;
	mf_fsent.status_ignore = f.status_ignore;
	mf_fsent.statuses_ignore = f.statuses_ignore;
	__atomic_store_n(&mf_fsent.ready, 1, __ATOMIC_RELEASE);
}

MPI_Status *mf_fstatuses(int n)
{
	MPI_Status *s = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
	return s ? s : MPI_STATUSES_IGNORE;
}

MPI_Request *mf_freqs(int n) { return malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1)); }

void mf_ffree(void *p) { free(p); }
