/* regions: IPM's regions, MPI_Pcontrol(1, "name") to enter one and
 * MPI_Pcontrol(-1, "name") to leave it: nested ("halo" inside "solve"),
 * names built in one buffer ("phase 0", "phase 1" from one call site), a
 * name longer than mpiflow keeps, and mpiP's MPI_Pcontrol(0) without a
 * name. Prints one sum on rank 0. */
#include <mpi.h>
#include <stdio.h>

static void busy(double s)
{
	double t = MPI_Wtime();
	while (MPI_Wtime() - t < s)
		;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Pcontrol(0);
	double sum = 0;
	for (int step = 0; step < 10; step++) {
		MPI_Pcontrol(1, "solve");
		MPI_Pcontrol(1, "halo");
		double x = rank + step, y = 0;
		MPI_Sendrecv(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE, (rank + size - 1) % size, 0,
		             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Pcontrol(-1, "halo");
		busy(0.002);
		MPI_Allreduce(&y, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += x;
		MPI_Pcontrol(-1, "solve");
	}
	char name[32];
	for (int phase = 0; phase < 2; phase++) {
		snprintf(name, sizeof name, "phase %d", phase);
		MPI_Pcontrol(1, name);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Pcontrol(-1, name);
	}
	const char *longname = "a region whose name is longer than the sixty-three bytes that mpiflow keeps";
	MPI_Pcontrol(1, longname);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(-1, longname);
	if (rank == 0)
		printf("sum %g\n", sum);
	MPI_Finalize();
	return 0;
}
