/* ring: a token travels around all ranks N times (argv[1], default 10).
 * Per rank: Init, Comm_rank, Comm_size, N x (Send, Recv) on rank 0 or
 * N x (Recv, Send) elsewhere, Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 10;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	long token = 0;
	for (int i = 0; i < n; i++) {
		if (rank == 0) {
			token++;
			MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token++;
			MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("ring: %d ranks, %d rounds, token %ld\n", size, n, token);
	MPI_Finalize();
	return 0;
}
