/* unusual: calls with unusual arguments, for 4 ranks (an even number):
 * MPI_IN_PLACE, MPI_PROC_NULL, MPI_STATUS_IGNORE, MPI_ANY_SOURCE, a derived
 * datatype (one of 4 GiB), persistent requests, a nonblocking collective, a
 * sub-communicator and an intercommunicator. Rank 0 prints the results. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 5

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	/* MPI_IN_PLACE */
	int v[4] = {rank, rank + 1, rank + 2, rank + 3};
	MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

	/* MPI_PROC_NULL and MPI_STATUS_IGNORE */
	double d = 1.5;
	MPI_Send(&d, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
	MPI_Recv(&d, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* one element of 4 GiB, whose MPI_Type_size is MPI_UNDEFINED (no data
	 * moves to MPI_PROC_NULL) */
	MPI_Datatype big;
	MPI_Type_contiguous(1 << 29, MPI_DOUBLE, &big);
	MPI_Type_commit(&big);
	MPI_Send(&d, 1, big, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
	MPI_Type_free(&big);

	/* A derived datatype (4 doubles, stride 2) and MPI_ANY_SOURCE */
	double a[8], b[8];
	for (int i = 0; i < 8; i++)
		a[i] = rank * 10 + i, b[i] = 0;
	MPI_Datatype vec;
	MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	MPI_Request rq;
	MPI_Irecv(b, 1, vec, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rq);
	MPI_Send(a, 1, vec, right, 1, MPI_COMM_WORLD);
	MPI_Status st;
	MPI_Wait(&rq, &st);
	MPI_Type_free(&vec);

	/* Persistent requests */
	int sbuf = rank, rbuf = -1, sum = 0;
	MPI_Request pr[2];
	MPI_Recv_init(&rbuf, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &pr[0]);
	MPI_Send_init(&sbuf, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &pr[1]);
	for (int i = 0; i < ROUNDS; i++) {
		MPI_Startall(2, pr);
		MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
		sum += rbuf;
		sbuf++;
	}
	MPI_Request_free(&pr[0]);
	MPI_Request_free(&pr[1]);

	/* A nonblocking collective */
	long lv = rank, lsum = 0;
	MPI_Request cr;
	MPI_Iallreduce(&lv, &lsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &cr);
	MPI_Wait(&cr, MPI_STATUS_IGNORE);

	/* A sub-communicator: even and odd ranks; root 0 of each is world
	 * rank 0 or 1. */
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	int hv = rank;
	MPI_Bcast(&hv, 1, MPI_INT, 0, half);
	int hsize, hrank;
	MPI_Comm_size(half, &hsize);
	MPI_Comm_rank(half, &hrank);

	/* A receive on the sub-communicator: Wait gets the source as a rank
	 * of half, which is not the world rank. */
	int hin[3] = {0, 0, 0}, hout[3] = {rank, rank, rank};
	MPI_Irecv(hin, 3, MPI_INT, MPI_ANY_SOURCE, 5, half, &rq);
	MPI_Send(hout, 3, MPI_INT, (hrank + 1) % hsize, 5, half);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);

	/* Gatherv with MPI_IN_PLACE at the root */
	int g[64], counts[64], displs[64];
	for (int i = 0; i < hsize; i++)
		counts[i] = 1, displs[i] = i, g[i] = -1;
	g[hrank] = rank;
	if (hrank == 0)
		MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, counts, displs, MPI_INT, 0, half);
	else
		MPI_Gatherv(&g[hrank], 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, half);

	/* An intercommunicator between the halves: local rank k talks to
	 * remote rank k. */
	MPI_Comm inter;
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 3, &inter);
	int iv = rank, got = -1;
	if (rank % 2 == 0) {
		MPI_Send(&iv, 1, MPI_INT, hrank, 4, inter);
		MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, MPI_STATUS_IGNORE);
		MPI_Send(&iv, 1, MPI_INT, hrank, 4, inter);
	}
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);

	long total = 0, mine = v[0] + (long)b[2] + sum + lsum + hv + got + hin[2];
	MPI_Reduce(&mine, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("unusual: v0 %d b2 %.0f sum %d lsum %ld total %ld source %d\n", v[0], b[2], sum, lsum, total, st.MPI_SOURCE);
	MPI_Finalize();
	return 0;
}
