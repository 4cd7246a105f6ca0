/*
 * sendrecv.c: send-receives that post a larger receive than arrives (30
 * doubles sent, 165 posted), from a known source and from MPI_ANY_SOURCE,
 * on MPI_COMM_WORLD and on a communicator whose ranks are the world's
 * reversed, for TestSendrecvSizes: MPI_Sendrecv under every MPI,
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0) + MPI_Wait where
 * mpi.h has them. Each case is a function of its own, so that the test
 * finds its nodes by the function of their call site; the status given to
 * the Wait holds a stale source (the own rank). Every rank sends to the
 * right and receives from the left. Prints "sendrecv: N ranks, E errors".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define SENT 30
#define POSTED 165
static int errors;
static double out[POSTED], in[POSTED];

/* check counts the errors of a receive of SENT doubles from rank left of
 * comm, with status st. */
static void check(MPI_Comm comm, int left, const MPI_Status *st)
{
	int n = -1, lrank;
	MPI_Comm_rank(comm, &lrank);
	MPI_Get_count(st, MPI_DOUBLE, &n);
	errors += n != SENT || st->MPI_SOURCE != left;
	int wl;
	MPI_Group g, w;
	MPI_Comm_group(comm, &g);
	MPI_Comm_group(MPI_COMM_WORLD, &w);
	MPI_Group_translate_ranks(g, 1, &left, w, &wl);
	MPI_Group_free(&g);
	MPI_Group_free(&w);
	for (int i = 0; i < SENT; i++)
		errors += in[i] != wl * 1000 + i;
}

static void __attribute__((noinline)) sendrecv_known(MPI_Comm comm, int right, int left)
{
	MPI_Status st;
	MPI_Sendrecv(out, SENT, MPI_DOUBLE, right, 1, in, POSTED, MPI_DOUBLE, left, 1, comm, &st);
	check(comm, left, &st);
}

static void __attribute__((noinline)) sendrecv_any(MPI_Comm comm, int right, int left)
{
	MPI_Status st;
	MPI_Sendrecv(out, SENT, MPI_DOUBLE, right, 2, in, POSTED, MPI_DOUBLE, MPI_ANY_SOURCE, 2, comm, &st);
	check(comm, left, &st);
}

#if MPI_VERSION >= 4
/* stale leaves the own world rank as the status's source, as a status
 * reused from an earlier call might. */
static void stale(MPI_Status *st)
{
	memset(st, 0, sizeof *st);
	MPI_Comm_rank(MPI_COMM_WORLD, &st->MPI_SOURCE);
}

static void __attribute__((noinline)) isendrecv_known(MPI_Comm comm, int right, int left)
{
	MPI_Request r;
	MPI_Status st;
	MPI_Isendrecv(out, SENT, MPI_DOUBLE, right, 3, in, POSTED, MPI_DOUBLE, left, 3, comm, &r);
	stale(&st);
	MPI_Wait(&r, &st);
}

static void __attribute__((noinline)) isendrecv_any(MPI_Comm comm, int right, int left)
{
	MPI_Request r;
	MPI_Status st;
	MPI_Isendrecv(out, SENT, MPI_DOUBLE, right, 4, in, POSTED, MPI_DOUBLE, MPI_ANY_SOURCE, 4, comm, &r);
	stale(&st);
	MPI_Wait(&r, &st);
}

static void __attribute__((noinline)) isendrecv_replace_any(MPI_Comm comm, int right, int left)
{
	MPI_Request r;
	MPI_Status st;
	memcpy(in, out, sizeof in);
	MPI_Isendrecv_replace(in, SENT, MPI_DOUBLE, right, 5, MPI_ANY_SOURCE, 5, comm, &r);
	stale(&st);
	MPI_Wait(&r, &st);
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < POSTED; i++)
		out[i] = rank * 1000 + i;
	MPI_Comm rev;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
	MPI_Comm comms[2] = {MPI_COMM_WORLD, rev};
	for (int c = 0; c < 2; c++) {
		int r, right, left;
		MPI_Comm_rank(comms[c], &r);
		right = (r + 1) % size;
		left = (r + size - 1) % size;
		sendrecv_known(comms[c], right, left);
		sendrecv_any(comms[c], right, left);
#if MPI_VERSION >= 4
		/* the statuses of MPICH 4.0.2's MPI_Isendrecv are not set: not checked */
		isendrecv_known(comms[c], right, left);
		isendrecv_any(comms[c], right, left);
		isendrecv_replace_any(comms[c], right, left);
		for (int i = 0; i < SENT; i++) {
			int wl = c ? (rank + 1) % size : (rank + size - 1) % size;
			errors += in[i] != wl * 1000 + i;
		}
#endif
	}
	MPI_Comm_free(&rev);
	int all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sendrecv: %d ranks, %d errors\n", size, all);
	MPI_Finalize();
	return all != 0;
}
