/* branches: which MPI call comes next depends on data. Every iteration i
 * (argv[1], default 30) picks a collective from x = (3i + i/5) % 5, the same
 * on every rank: 0 or 1 Bcast, 2 Allreduce, 3 Barrier, 4 Sendrecv with
 * rank^1. Even ranks also call MPI_Comm_rank when i % 3 == 0: a
 * rank-dependent branch. The tests rebuild the expected sequence from
 * these rules. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 30;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long acc = rank, v = 0;
	for (int i = 0; i < n; i++) {
		int x = (i * 3 + i / 5) % 5;
		if (rank % 2 == 0 && i % 3 == 0) {
			int r;
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
			acc += r;
		}
		switch (x) {
		case 0:
		case 1:
			v = acc + i;
			MPI_Bcast(&v, 1, MPI_LONG, i % size, MPI_COMM_WORLD);
			acc += v % 7;
			break;
		case 2:
			MPI_Allreduce(&acc, &v, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
			acc = v % 1000;
			break;
		case 3:
			MPI_Barrier(MPI_COMM_WORLD);
			break;
		case 4: {
			long in = 0;
			int peer = (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
			MPI_Sendrecv(&acc, 1, MPI_LONG, peer, 1, &in, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			acc += in % 5;
			break;
		}
		}
	}
	long total = 0;
	MPI_Reduce(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("branches: %d iterations, total %ld\n", n, total);
	MPI_Finalize();
	return 0;
}
