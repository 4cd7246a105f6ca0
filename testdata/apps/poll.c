/* poll: a polling loop with a periodic branch, the shape of a progress
 * engine. Each rank posts a receive from its left neighbour that is only
 * satisfied at the end, then for argv[1] passes (default 10000) calls
 * MPI_Test on it every pass and MPI_Testany on two such requests every
 * third pass. With an optional argv[2] = "irregular", the loop instead
 * polls a request that succeeds after a pseudo-random 1..8 tries (its
 * message is sent by the rank itself), the pattern of real progress loops
 * whose repeat counts vary. With argv[2] = "spin", each of argv[1] rounds
 * sends to the right neighbour after a compute phase whose length varies
 * with the rank and the round, and polls the receive from the left with
 * MPI_Test (a little compute between tries) until it completes: long runs
 * of one repeated call, whose durations change from run to run. The
 * sequence numbers of the periodic loop must cost the same whatever the
 * number of passes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	int irregular = argc > 2 && strcmp(argv[2], "irregular") == 0;
	int spin = argc > 2 && strcmp(argv[2], "spin") == 0;
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	int buf[2] = {0, 0}, out[2] = {rank, rank};
	MPI_Request req[2];
	long done = 0;
	volatile double sink = 0;
	if (spin) {
		for (long i = 0; i < n; i++) {
			MPI_Request rr, sr;
			int flag = 0;
			MPI_Irecv(&buf[0], 1, MPI_INT, left, 2, MPI_COMM_WORLD, &rr);
			long work = 2000 * (1 + (i * 7 + rank * 3) % 11) * (1 + rank);
			for (long k = 0; k < work; k++)
				sink += 1e-9 * (double)k;
			MPI_Isend(&out[0], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &sr);
			while (!flag) {
				MPI_Test(&rr, &flag, MPI_STATUS_IGNORE);
				for (int k = 0; k < 20 + (int)(i % 5) * 20; k++)
					sink += 1e-9;
			}
			done++;
			MPI_Wait(&sr, MPI_STATUS_IGNORE);
		}
	} else if (!irregular) {
		MPI_Irecv(&buf[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&buf[1], 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req[1]);
		for (long i = 0; i < n; i++) {
			int flag, idx;
			MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
			done += flag;
			if (i % 3 == 2) {
				MPI_Testany(2, req, &idx, &flag, MPI_STATUS_IGNORE);
				done += flag;
			}
		}
		MPI_Send(&out[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD);
		MPI_Send(&out[1], 1, MPI_INT, right, 1, MPI_COMM_WORLD);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	} else {
		unsigned x = 12345u + (unsigned)rank;
		for (long i = 0; i < n;) {
			MPI_Request r;
			int v = 0, flag = 0;
			MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
			x = x * 1103515245u + 12345u;
			int tries = 1 + (int)((x >> 16) % 8);
			for (int k = 1; k <= tries && i < n; k++, i++) {
				if (k == tries) {
					MPI_Wait(&r, MPI_STATUS_IGNORE);
					flag = 1;
				} else {
					MPI_Request dummy = MPI_REQUEST_NULL;
					MPI_Test(&dummy, &flag, MPI_STATUS_IGNORE);
				}
			}
			if (!flag)
				MPI_Wait(&r, MPI_STATUS_IGNORE);
			done++;
		}
	}
	long total = 0;
	MPI_Reduce(&done, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("poll: %ld passes, %ld completions seen\n", n, total);
	MPI_Finalize();
	return 0;
}
