/* irecvthreads: receives that another thread completes, for
 * TestReceivedSizesThreads. MPI_THREAD_MULTIPLE, ranks in pairs (r, r^1).
 * In each of ROUNDS rounds the main thread posts a receive of POST ints
 * from its partner, which sends 2; the waiter thread completes it with
 * MPI_Wait; then the main thread sends 1 int with MPI_Isend, receives the
 * partner's and completes its send with MPI_Wait. The next round's
 * receive gets the handle of the last one back (both MPIs). Rank 0 prints
 * the number of ranks and errors (wrong data). Exits with 77 when the MPI
 * does not provide MPI_THREAD_MULTIPLE. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define POST 64
#define ROUNDS 50

static MPI_Request rq;
static pthread_barrier_t posted, done;

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_barrier_wait(&posted);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, rank, size, errors = 0, buf[POST], two[2], one, in;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("irecvthreads: MPI_THREAD_MULTIPLE not provided\n");
		MPI_Finalize();
		return 77;
	}
	const int peer = rank ^ 1;
	pthread_barrier_init(&posted, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		MPI_Irecv(buf, POST, MPI_INT, peer, i, MPI_COMM_WORLD, &rq);
		two[0] = two[1] = rank * 1000 + i;
		MPI_Send(two, 2, MPI_INT, peer, i, MPI_COMM_WORLD);
		pthread_barrier_wait(&posted);
		pthread_barrier_wait(&done);
		errors += buf[0] != peer * 1000 + i || buf[1] != peer * 1000 + i;
		MPI_Request s;
		one = rank;
		MPI_Isend(&one, 1, MPI_INT, peer, ROUNDS + i, MPI_COMM_WORLD, &s);
		MPI_Recv(&in, 1, MPI_INT, peer, ROUNDS + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&s, MPI_STATUS_IGNORE);
		errors += in != peer;
	}
	pthread_join(th, NULL);
	int all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("irecvthreads: %d ranks, %d errors\n", size, all);
	MPI_Finalize();
	return all != 0;
}
