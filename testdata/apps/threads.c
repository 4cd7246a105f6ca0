/* threads: MPI_THREAD_MULTIPLE with 4 threads per rank. Thread t of rank r
 * exchanges N messages (argv[1], default 20) with thread t of rank r^1
 * (even ranks Send then Recv, odd ranks Recv then Send) on its own
 * duplicate of MPI_COMM_WORLD, made by the main thread, which also does an
 * Allreduce at the end. Needs an even number of ranks. Exits with 77 when
 * the MPI does not provide MPI_THREAD_MULTIPLE. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4

static int rank, n;
static MPI_Comm comms[NT];
static long sums[NT];

static void *worker(void *arg)
{
	int t = (int)(long)arg, peer = rank ^ 1;
	long v = rank * 100 + t, in = 0;
	for (int i = 0; i < n; i++) {
		if (rank % 2 == 0) {
			MPI_Send(&v, 1, MPI_LONG, peer, t, comms[t]);
			MPI_Recv(&in, 1, MPI_LONG, peer, t, comms[t], MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&in, 1, MPI_LONG, peer, t, comms[t], MPI_STATUS_IGNORE);
			MPI_Send(&v, 1, MPI_LONG, peer, t, comms[t]);
		}
		sums[t] += in;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, size;
	n = argc > 1 ? atoi(argv[1]) : 20;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("threads: MPI_THREAD_MULTIPLE not provided\n");
		MPI_Finalize();
		return 77;
	}
	for (int t = 0; t < NT; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	pthread_t th[NT];
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, worker, (void *)(long)t);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	long mine = 0, total = 0;
	for (int t = 0; t < NT; t++) {
		mine += sums[t];
		MPI_Comm_free(&comms[t]);
	}
	MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("threads: %d ranks x %d threads, %d messages each, total %ld\n", size, NT, n, total);
	MPI_Finalize();
	return 0;
}
