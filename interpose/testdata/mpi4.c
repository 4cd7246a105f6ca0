/*
 * mpi4.c: MPI-4.0 communication calls, for TestMPI4Calls (4 ranks, MPICH 4).
 * Each step runs ITERS times:
 *   MPI_Isendrecv + MPI_Wait        8 doubles to the right, 8 from the left
 *   MPI_Allreduce_init (once), MPI_Start + MPI_Wait, MPI_Request_free
 *                                   4 ints
 *   MPI_Send_c / MPI_Recv_c         5 doubles with rank ^ 1
 *   MPI_Alltoallv_c                 i + 1 ints to rank i (MPI_Count counts)
 *   MPI_Psend_init / MPI_Precv_init (once), MPI_Start, MPI_Pready (0, 1),
 *   MPI_Pready_range (2..2), MPI_Pready_list ({3}) / MPI_Parrived, MPI_Wait,
 *   MPI_Request_free                4 partitions of 2 ints, rank ^ 1
 * Rank 0 prints one line; the exit code is 0 when every value arrived.
 * Built against an MPI-3 mpi.h it does nothing and exits with 77.
 */
#include <mpi.h>
#include <stdio.h>

#define ITERS 3

#if MPI_VERSION >= 4
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size, pair = rank ^ 1;
	int errors = 0;

	for (int it = 0; it < ITERS; it++) {
		double out[8], in[8];
		for (int i = 0; i < 8; i++)
			out[i] = rank * 100 + it * 10 + i;
		MPI_Request req;
		MPI_Status st;
		MPI_Isendrecv(out, 8, MPI_DOUBLE, right, 1, in, 8, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, &st);
		for (int i = 0; i < 8; i++)
			errors += in[i] != left * 100 + it * 10 + i;
	}

	int sum_in[4], sum_out[4];
	MPI_Request ar;
	MPI_Allreduce_init(sum_in, sum_out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar);
	for (int it = 0; it < ITERS; it++) {
		for (int i = 0; i < 4; i++)
			sum_in[i] = rank + it + i;
		MPI_Start(&ar);
		MPI_Wait(&ar, MPI_STATUS_IGNORE);
		for (int i = 0; i < 4; i++)
			errors += sum_out[i] != size * (size - 1) / 2 + size * (it + i);
	}
	MPI_Request_free(&ar);

	for (int it = 0; it < ITERS; it++) {
		double buf[5];
		MPI_Count n = 5;
		if (rank % 2 == 0) {
			for (int i = 0; i < 5; i++)
				buf[i] = rank + it + i;
			MPI_Send_c(buf, n, MPI_DOUBLE, pair, 2, MPI_COMM_WORLD);
			MPI_Recv_c(buf, n, MPI_DOUBLE, pair, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv_c(buf, n, MPI_DOUBLE, pair, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send_c(buf, n, MPI_DOUBLE, pair, 2, MPI_COMM_WORLD);
		}
		for (int i = 0; i < 5; i++)
			errors += buf[i] != (rank & ~1) + it + i;
	}

	for (int it = 0; it < ITERS; it++) {
		/* Rank r sends i + 1 ints to rank i and receives r + 1 from each. */
		int sbuf[64], rbuf[64];
		MPI_Count scounts[16], rcounts[16];
		MPI_Aint sdispls[16], rdispls[16];
		MPI_Aint so = 0, ro = 0;
		for (int i = 0; i < size && i < 16; i++) {
			scounts[i] = i + 1;
			sdispls[i] = so;
			for (int k = 0; k < i + 1; k++)
				sbuf[so + k] = rank * 1000 + i * 10 + k + it;
			so += i + 1;
			rcounts[i] = rank + 1;
			rdispls[i] = ro;
			ro += rank + 1;
		}
		MPI_Alltoallv_c(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
		for (int i = 0; i < size && i < 16; i++)
			for (int k = 0; k < rank + 1; k++)
				errors += rbuf[rdispls[i] + k] != i * 1000 + rank * 10 + k + it;
	}

	int pbuf[8];
	MPI_Request preq;
	if (rank % 2 == 0)
		MPI_Psend_init(pbuf, 4, 2, MPI_INT, pair, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
	else
		MPI_Precv_init(pbuf, 4, 2, MPI_INT, pair, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
	for (int it = 0; it < ITERS; it++) {
		if (rank % 2 == 0) {
			for (int i = 0; i < 8; i++)
				pbuf[i] = rank * 100 + it * 10 + i;
			MPI_Start(&preq);
			MPI_Pready(0, preq);
			MPI_Pready(1, preq);
			MPI_Pready_range(2, 2, preq);
			int last[1] = {3};
			MPI_Pready_list(1, last, preq);
			MPI_Wait(&preq, MPI_STATUS_IGNORE);
		} else {
			for (int i = 0; i < 8; i++)
				pbuf[i] = -1;
			MPI_Start(&preq);
			int flag = 0;
			while (!flag)
				MPI_Parrived(preq, 3, &flag);
			MPI_Wait(&preq, MPI_STATUS_IGNORE);
			for (int i = 0; i < 8; i++)
				errors += pbuf[i] != pair * 100 + it * 10 + i;
		}
	}
	MPI_Request_free(&preq);

	int total = 0;
	MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi4: %d ranks, %d iterations, %d errors\n", size, ITERS, total);
	MPI_Finalize();
	return errors != 0;
}
#else
int main(void)
{
	printf("mpi4: needs an MPI-4.0 mpi.h (MPI_VERSION %d)\n", MPI_VERSION);
	return 77;
}
#endif
