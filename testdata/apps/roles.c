/* roles: ranks of two roles that differ by rare branches, the shape whose
 * ranks a profiler should show as two groups. For argv[1] iterations
 * (default 2000), even ranks produce: compute (drawn from a long-tailed
 * distribution), send a work item to the next rank and wait for its reply.
 * Odd ranks consume: post a receive, poll it with MPI_Test between chunks
 * of compute, answer with MPI_Send; a wait of more than 8 tries is
 * followed by an MPI_Iprobe (a branch that only long waits take, decided
 * by arrival times). On ranks 2, 3, 6 and 7 a rare branch runs once every
 * 997 iterations (an MPI_Iprobe at a call site of its own), as where a
 * rank's place in a grid decides. Every 100th iteration all ranks join an
 * MPI_Allreduce. Rank 0 prints a checksum that does not depend on the
 * timing. Run with an even number of ranks. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long next(unsigned long long *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 11;
}

static volatile double sink;

static void compute(long n)
{
	double s = 0;
	for (long k = 0; k < n; k++)
		s += 1e-9 * (double)k;
	sink += s;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 2000;
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size % 2 != 0) {
		if (rank == 0)
			fprintf(stderr, "roles: run with an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	unsigned long long mine = 11 + (unsigned long long)rank;
	long sum = 0, probes = 0;
	int rare = (rank / 2) % 2 == 1;
	for (long i = 0; i < iters; i++) {
		long item = i * size + rank, got = -1;
		if (rank % 2 == 0) {
			/* compute: Pareto, alpha 1.5, from 2k loop steps */
			double u = (double)(next(&mine) % 1000000) / 1e6;
			compute((long)fmin(2000 / pow(1 - u, 1 / 1.5), 4e5));
			MPI_Send(&item, 1, MPI_LONG, rank + 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&got, 1, MPI_LONG, rank + 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Request rr;
			MPI_Irecv(&got, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, &rr);
			int flag = 0, tries = 0;
			while (!flag) {
				MPI_Test(&rr, &flag, MPI_STATUS_IGNORE);
				tries++;
				if (!flag)
					compute(200);
			}
			if (tries > 8) {
				int pending;
				MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
				probes++;
			}
			long reply = got + 1;
			MPI_Send(&reply, 1, MPI_LONG, rank - 1, 1, MPI_COMM_WORLD);
		}
		sum += got;
		if (rare && i % 997 == 500) {
			int pending;
			MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
		}
		if (i % 100 == 99) {
			long s = sum, t = 0;
			MPI_Allreduce(&s, &t, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
			sum = t % 1000003;
		}
	}
	long total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("roles: %ld iterations, checksum %ld\n", iters, total);
	MPI_Finalize();
	return 0;
}
