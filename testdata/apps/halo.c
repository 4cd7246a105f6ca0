/* halo: a 2D halo exchange like a CG/Jacobi solver. The ranks form a
 * px x py grid (MPI_Dims_create, not periodic); every iteration (argv[1],
 * default 100) posts an Irecv per neighbor, Sends per neighbor, Waits per
 * neighbor, computes a Jacobi sweep and Allreduces the residual.
 * With 4 ranks (2x2) every rank has 2 neighbors. Exit code 3 tells the
 * tests that argv[2] ("fail") asked for a non-zero exit. argv[3], when
 * given, is a slowed rank: it does its sweep SLOW times per iteration and
 * the others wait for it (the imbalance mpiflow diff has to find). */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 32     /* local grid is N x N */
#define SLOW 20 /* sweeps per iteration of the slowed rank */

static double u[N + 2][N + 2], v[N + 2][N + 2];

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100, slowed = argc > 3 ? atoi(argv[3]) : -1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int dims[2] = {0, 0};
	MPI_Dims_create(size, 2, dims);
	int px = dims[0], py = dims[1], x = rank % px, y = rank / px;
	int nb[4], nn = 0;
	if (x > 0)
		nb[nn++] = rank - 1;
	if (x < px - 1)
		nb[nn++] = rank + 1;
	if (y > 0)
		nb[nn++] = rank - px;
	if (y < py - 1)
		nb[nn++] = rank + px;
	for (int i = 0; i < N + 2; i++)
		for (int j = 0; j < N + 2; j++)
			u[i][j] = (double)((i * 7 + j * 3 + rank) % 11);
	double sendb[4][N], recvb[4][N], res = 0;
	MPI_Request req[4];
	for (int it = 0; it < iters; it++) {
		for (int k = 0; k < nn; k++)
			MPI_Irecv(recvb[k], N, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD, &req[k]);
		for (int k = 0; k < nn; k++) {
			for (int j = 0; j < N; j++)
				sendb[k][j] = u[1 + j][1 + k];
			MPI_Send(sendb[k], N, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD);
		}
		for (int k = 0; k < nn; k++)
			MPI_Wait(&req[k], MPI_STATUS_IGNORE);
		for (int k = 0; k < nn; k++)
			for (int j = 0; j < N; j++)
				u[1 + j][0] += 1e-3 * recvb[k][j];
		double local = 0;
		for (int rep = 0; rep < (rank == slowed ? SLOW : 1); rep++) {
			local = 0;
			for (int i = 1; i <= N; i++)
				for (int j = 1; j <= N; j++) {
					v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
					local += fabs(v[i][j] - u[i][j]);
				}
		}
		memcpy(u, v, sizeof u);
		MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("halo: %dx%d ranks, %d iterations, residual %.6e\n", px, py, iters, res);
	MPI_Finalize();
	return argc > 2 && !strcmp(argv[2], "fail") ? 3 : 0;
}
