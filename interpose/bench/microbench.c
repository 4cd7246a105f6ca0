/* microbench: time per MPI call for the overhead benchmark (make
 * bench-overhead). Run with 2 ranks; rank 0 prints "<test> <ns per call>"
 * for each test, the best of several repetitions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 5

static double best(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int rank, size, r;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "microbench: run with 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	int peer = 1 - rank;
	double t_rank = 1e30, t_pp = 1e30, t_nb = 1e30, t_ar = 1e30;
	char buf[8] = {0}, rbuf[8];
	double x = 1, y;
	for (int rep = 0; rep < REPS; rep++) {
		/* MPI_Comm_rank: 1 call per iteration */
		MPI_Barrier(MPI_COMM_WORLD);
		double t = MPI_Wtime();
		for (int i = 0; i < n; i++)
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
		t_rank = best(t_rank, (MPI_Wtime() - t) / n);

		/* 0-byte ping-pong: 2 calls per iteration on each rank */
		int m = n / 10;
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (int i = 0; i < m; i++) {
			if (rank == 0) {
				MPI_Send(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			}
		}
		t_pp = best(t_pp, (MPI_Wtime() - t) / (2.0 * m));

		/* Isend/Irecv/Waitall: 3 calls per iteration */
		MPI_Request rq[2];
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (int i = 0; i < m; i++) {
			MPI_Irecv(rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(buf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
		t_nb = best(t_nb, (MPI_Wtime() - t) / (3.0 * m));

		/* 8-byte Allreduce: 1 call per iteration */
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (int i = 0; i < m; i++)
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t_ar = best(t_ar, (MPI_Wtime() - t) / m);
	}
	if (rank == 0) {
		printf("comm_rank %.1f\n", t_rank * 1e9);
		printf("pingpong %.1f\n", t_pp * 1e9);
		printf("isend_irecv_waitall %.1f\n", t_nb * 1e9);
		printf("allreduce %.1f\n", t_ar * 1e9);
	}
	MPI_Finalize();
	return 0;
}
