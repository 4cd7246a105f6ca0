/* irregular: an arrival-driven program, the shape that profilers find
 * hardest to record small and true. For argv[1] iterations (default 3000):
 * each rank sends a message to a peer that changes every iteration (a
 * permutation drawn from a seed all ranks share), then computes in chunks
 * while it polls for the message it will receive with MPI_Test, the number
 * of tries following the arrival (compute per rank and iteration is drawn
 * from a long-tailed distribution, so the tries are too); a message that
 * took more than 8 tries is answered by an MPI_Iprobe branch. Every 500th
 * iteration is a sparse phase: a 1 MiB MPI_Allreduce and MPI_Bcast after a
 * long compute, a thousand times fewer events per second than the polls.
 * Rank 0 prints a checksum that does not depend on the timing. */
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
	long iters = argc > 1 ? atol(argv[1]) : 3000;
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *perm = malloc(sizeof(int) * (size_t)size);
	const int big = 1 << 17; /* doubles: 1 MiB */
	double *vec = malloc(sizeof(double) * (size_t)big), *red = malloc(sizeof(double) * (size_t)big);
	for (int k = 0; k < big; k++)
		vec[k] = rank + k;
	unsigned long long shared = 2024, mine = 77 + (unsigned long long)rank;
	long sum = 0, probes = 0;
	for (long i = 0; i < iters; i++) {
		for (int k = 0; k < size; k++)
			perm[k] = k;
		for (int k = size - 1; k > 0; k--) {
			int j = (int)(next(&shared) % (unsigned long long)(k + 1)), t = perm[k];
			perm[k] = perm[j];
			perm[j] = t;
		}
		int to = perm[rank], from = 0;
		for (int k = 0; k < size; k++)
			if (perm[k] == rank)
				from = k;
		long out = i * size + rank, in = -1;
		MPI_Request rr, sr;
		MPI_Irecv(&in, 1, MPI_LONG, from, 0, MPI_COMM_WORLD, &rr);
		/* compute before sending: Pareto, alpha 1.5, from 20k loop steps */
		double u = (double)(next(&mine) % 1000000) / 1e6;
		compute((long)fmin(20000 / pow(1 - u, 1 / 1.5), 4e6));
		MPI_Isend(&out, 1, MPI_LONG, to, 0, MPI_COMM_WORLD, &sr);
		int flag = 0, tries = 0;
		while (!flag) {
			MPI_Test(&rr, &flag, MPI_STATUS_IGNORE);
			tries++;
			if (!flag)
				compute(50);
		}
		if (tries > 8) {
			int pending;
			MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &pending, MPI_STATUS_IGNORE);
			probes++;
		}
		MPI_Wait(&sr, MPI_STATUS_IGNORE);
		sum += in;
		if (i % 500 == 499) {
			compute(20000000);
			MPI_Allreduce(vec, red, big, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			MPI_Bcast(red, big, MPI_DOUBLE, 0, MPI_COMM_WORLD);
			sum += (long)red[1] - (long)red[0];
		}
	}
	long total = 0;
	MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("irregular: %ld iterations, checksum %ld\n", iters, total);
	free(perm);
	free(vec);
	free(red);
	MPI_Finalize();
	return 0;
}
