/* pmpiinit: a program that initializes MPI with PMPI_Init, as one does
 * whose MPI_Init never reaches the preload library (a binding that looks
 * it up in the MPI library itself), for TestInitBypassedWarns: nothing is
 * recorded, and rank 0 must say so. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size;
	if (PMPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 2;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	/* Through the library's wrapper, which records nothing unstarted. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("pmpiinit: %d ranks\n", size);
	return PMPI_Finalize() == MPI_SUCCESS ? 0 : 3;
}
