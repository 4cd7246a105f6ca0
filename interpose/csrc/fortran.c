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

#include "fortran.h"
#include "mf_mpi.h"

mf_fsentinels mf_fsent;

void mf_fsent_init(void)
{
	mf_fsentinels f = {.ready = 1};
#if defined(OPEN_MPI)
	f.f77.bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
	f.f77.in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
	f.f77.status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
	f.f77.statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
	f.f77.unweighted = dlsym(RTLD_DEFAULT, "mpi_fortran_unweighted_");
	f.f77.weights_empty = dlsym(RTLD_DEFAULT, "mpi_fortran_weights_empty_");
	/* The mpi_f08 module declares its sentinels in the same common
	 * blocks. */
	f.f08 = f.f77;
#else
	/* MPICH: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
	 * and /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE (mpif.h). */
	const MPI_Fint *p1 = dlsym(RTLD_DEFAULT, "mpipriv1_");
	const MPI_Fint *p2 = dlsym(RTLD_DEFAULT, "mpipriv2_");
	if (p1) {
		f.f77.bottom = p1;
		f.f77.in_place = p1 + 1;
		f.f77.status_ignore = p1 + 2;
	}
	f.f77.statuses_ignore = p2;
	/* COMMON /MPIFCMB5/ MPI_UNWEIGHTED, /MPIFCMB9/ MPI_WEIGHTS_EMPTY. */
	f.f77.unweighted = dlsym(RTLD_DEFAULT, "mpifcmb5_");
	f.f77.weights_empty = dlsym(RTLD_DEFAULT, "mpifcmb9_");
	/* The mpi_f08 module's, in libmpich and libmpichfort (a program that
	 * uses them has its own copy, which dlsym finds first). */
	f.f08.bottom = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_BOTTOM");
	f.f08.in_place = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE");
	f.f08.status_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
	f.f08.statuses_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
	f.f08.unweighted = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_unweighted");
	f.f08.weights_empty = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_weights_empty");
#endif
	mf_fsent.f77 = f.f77;
	mf_fsent.f08 = f.f08;
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
