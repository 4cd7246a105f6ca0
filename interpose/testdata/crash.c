#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *mode = argc > 1 ? argv[1] : "exit";
	for (int i = 0; i < 5; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	/* argv[2]: seconds to go on with barriers before stopping */
	double t0 = MPI_Wtime(), wait = argc > 2 ? atof(argv[2]) : 0;
	int go = wait > 0;
	while (go) {
		usleep(10000);
		go = MPI_Wtime() - t0 < wait;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	if (!strcmp(mode, "exit"))
		exit(5);
	if (!strcmp(mode, "abort")) {
		if (rank == 1)
			MPI_Abort(MPI_COMM_WORLD, 7);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (!strcmp(mode, "segv")) {
		if (rank == 2) {
			volatile int *p = NULL;
			*p = 1;
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (!strcmp(mode, "term")) {
		if (rank == 0)
			raise(SIGTERM);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
