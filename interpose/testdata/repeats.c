/* repeats: collectives repeated back to back at one call site, as a
 * solver's convergence check or a benchmark's loop does, long enough that
 * the recorder times only some of them and the wrappers count the others
 * before the call (interpose/README.md, "Fast repeats"), while what they
 * record changes within the run: every 4096 passes the loop switches
 * between MPI_COMM_WORLD and a communicator of half the ranks, every 8192
 * between 1 and 2 doubles. Then MPI_Comm_rank back to back on either.
 * Usage: repeats [PASSES] (default 100000); run with an even number of
 * ranks. Prints the number of ranks and a checksum, the same with and
 * without a profiler. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const long n = argc > 1 ? atol(argv[1]) : 100000;
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	double x[2] = {1, rank}, y[2];
	long sum = 0;
	for (long i = 0; i < n; i++) {
		MPI_Comm c = (i >> 12) & 1 ? half : MPI_COMM_WORLD;
		MPI_Allreduce(x, y, 1 + (int)((i >> 13) & 1), MPI_DOUBLE, MPI_SUM, c);
		sum += (long)y[0];
	}
	for (long i = 0; i < n; i++) {
		int r;
		MPI_Comm_rank((i >> 12) & 1 ? half : MPI_COMM_WORLD, &r);
		sum += r;
	}
	long total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("repeats: %d ranks, %ld\n", size, total);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
