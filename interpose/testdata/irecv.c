/* irecv: nonblocking receives that get less than they post, completed by
 * every completion call, for TestReceivedSizes. 4 ranks in a ring: each
 * rank posts receives of POST ints from its left neighbour, which sends
 * phase + k + its rank ints for the k-th message of a phase; each phase
 * has its own MPI_Irecv call site and completes with another call, most
 * with MPI_STATUS(ES)_IGNORE. The last phase posts a receive that no
 * message matches and cancels it (it receives nothing); then 12, and then
 * 100, receives are in flight at once and complete in another order (by
 * MPI_Waitany, then by one MPI_Waitall); a Waitall completes sends while
 * receives are in flight; a Waitall fails (MPI_ERR_IN_STATUS). Rank
 * 0 prints the number of ranks and errors (wrong counts, data or
 * statuses). */
#include <mpi.h>
#include <stdio.h>

#define POST 64
#define NMSG 3
#define NMID 12  /* receives in flight at once (phase 10) */
#define NBIG 100 /* and in phase 11 */

static int rank, size, left, right, errors;
static int buf[NMSG][POST];
static int big[NBIG][8];

static int len(int phase, int k, int from) { return phase + k + from; }

/* sendp sends the n messages of a phase to the right neighbour. */
static void sendp(int phase, int n)
{
	int out[POST];
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < POST; i++)
			out[i] = rank * 1000 + phase * 10 + k;
		MPI_Send(out, len(phase, k, rank), MPI_INT, right, phase * 10 + k, MPI_COMM_WORLD);
	}
}

/* check checks message k of a phase as received in buf[slot]. */
static void check(int phase, int k, int slot)
{
	for (int i = 0; i < len(phase, k, left); i++)
		if (buf[slot][i] != left * 1000 + phase * 10 + k)
			errors++;
}

int main(int argc, char **argv)
{
	MPI_Request rq[NMSG];
	MPI_Status st[NMSG];
	int flag, idx, n, done, got;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const int two = size / 2; /* 2, and loops over it stay loops (one call site) */
	left = (rank + size - 1) % size;
	right = (rank + 1) % size;

	/* 1: Wait, status ignored */
	MPI_Irecv(buf[0], POST, MPI_INT, left, 10, MPI_COMM_WORLD, &rq[0]);
	sendp(1, 1);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	check(1, 0, 0);

	/* 2: two receives at one site, Waitall, statuses ignored */
	for (int k = 0; k < two; k++)
		MPI_Irecv(buf[k], POST, MPI_INT, left, 20 + k, MPI_COMM_WORLD, &rq[k]);
	sendp(2, two);
	MPI_Waitall(two, rq, MPI_STATUSES_IGNORE);
	check(2, 0, 0);
	check(2, 1, 1);

	/* 3: Test until done, status ignored */
	MPI_Irecv(buf[0], POST, MPI_INT, left, 30, MPI_COMM_WORLD, &rq[0]);
	sendp(3, 1);
	do
		MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
	while (!flag);
	check(3, 0, 0);

	/* 4: three receives, Testany until all done, status ignored */
	for (int k = 0; k < NMSG; k++)
		MPI_Irecv(buf[k], POST, MPI_INT, left, 40 + k, MPI_COMM_WORLD, &rq[k]);
	sendp(4, NMSG);
	for (done = 0; done < NMSG;) {
		MPI_Testany(NMSG, rq, &idx, &flag, MPI_STATUS_IGNORE);
		if (flag && idx != MPI_UNDEFINED) {
			check(4, idx, idx);
			done++;
		}
	}

	/* 5: Waitsome until all done, statuses ignored */
	for (int k = 0; k < NMSG; k++)
		MPI_Irecv(buf[k], POST, MPI_INT, left, 50 + k, MPI_COMM_WORLD, &rq[k]);
	sendp(5, NMSG);
	int ix[NMSG];
	for (done = 0; done < NMSG; done += n) {
		MPI_Waitsome(NMSG, rq, &n, ix, MPI_STATUSES_IGNORE);
		for (int j = 0; j < n; j++)
			check(5, ix[j], ix[j]);
	}

	/* 6: Testall until done, with statuses */
	for (int k = 0; k < two; k++)
		MPI_Irecv(buf[k], POST, MPI_INT, left, 60 + k, MPI_COMM_WORLD, &rq[k]);
	sendp(6, two);
	do
		MPI_Testall(two, rq, &flag, st);
	while (!flag);
	for (int k = 0; k < two; k++) {
		MPI_Get_count(&st[k], MPI_INT, &got);
		errors += got != len(6, k, left);
		check(6, k, k);
	}

	/* 7: Waitany, with a status */
	MPI_Irecv(buf[0], POST, MPI_INT, left, 70, MPI_COMM_WORLD, &rq[0]);
	rq[1] = MPI_REQUEST_NULL;
	sendp(7, 1);
	MPI_Waitany(2, rq, &idx, &st[0]);
	MPI_Get_count(&st[0], MPI_INT, &got);
	errors += idx != 0 || got != len(7, 0, left) || st[0].MPI_SOURCE != left;
	check(7, 0, 0);

	/* 8: matched probe, Imrecv, Wait */
	sendp(8, 1);
	MPI_Message msg;
	MPI_Mprobe(left, 80, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
	MPI_Imrecv(buf[0], POST, MPI_INT, &msg, &rq[0]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	check(8, 0, 0);

	/* 9: a receive that nothing matches, cancelled */
	MPI_Irecv(buf[0], POST, MPI_INT, left, 99, MPI_COMM_WORLD, &rq[0]);
	MPI_Cancel(&rq[0]);
	MPI_Wait(&rq[0], &st[0]);
	MPI_Test_cancelled(&st[0], &flag);
	errors += !flag;

	/* 10: NMID receives in flight, sent in another order, Waitany */
	MPI_Request mid[NMID];
	for (int k = 0; k < NMID; k++)
		MPI_Irecv(big[k], 8, MPI_INT, left, 200 + k, MPI_COMM_WORLD, &mid[k]);
	for (int j = 0; j < NMID; j++) {
		int k = (j * 5 + 3) % NMID, out[8] = {k, k, k};
		MPI_Send(out, 1 + k % 3, MPI_INT, right, 200 + k, MPI_COMM_WORLD);
	}
	for (int j = 0; j < NMID; j++) {
		MPI_Waitany(NMID, mid, &idx, MPI_STATUS_IGNORE);
		errors += idx < 0 || big[idx][idx % 3] != idx;
	}

	/* 11: NBIG receives in flight, sent in another order, Waitany */
	MPI_Request many[NBIG];
	for (int k = 0; k < NBIG; k++)
		MPI_Irecv(big[k], 8, MPI_INT, left, 100 + k, MPI_COMM_WORLD, &many[k]);
	for (int j = 0; j < NBIG; j++) {
		int k = j * 7 % NBIG, out[8] = {k, k, k, k, k};
		MPI_Send(out, 1 + k % 5, MPI_INT, right, 100 + k, MPI_COMM_WORLD);
	}
	for (int j = 0; j < NBIG; j++) {
		MPI_Waitany(NBIG, many, &idx, MPI_STATUS_IGNORE);
		errors += idx < 0 || big[idx][idx % 5] != idx;
	}

	/* 12: NBIG receives in flight, sent in another order, one Waitall */
	for (int k = 0; k < NBIG; k++)
		MPI_Irecv(big[k], 8, MPI_INT, left, 300 + k, MPI_COMM_WORLD, &many[k]);
	for (int j = 0; j < NBIG; j++) {
		int k = j * 3 % NBIG, out[8] = {k, k, k, k};
		MPI_Send(out, 1 + k % 4, MPI_INT, right, 300 + k, MPI_COMM_WORLD);
	}
	MPI_Waitall(NBIG, many, MPI_STATUSES_IGNORE);
	for (int k = 0; k < NBIG; k++)
		errors += big[k][k % 4] != k;

	/* 13: the sends completed by a Waitall of their own while the
	 * receives are in flight, then the receives by another */
	static int out13[NMSG][POST];
	MPI_Request srq[NMSG];
	for (int k = 0; k < two; k++)
		MPI_Irecv(buf[k], POST, MPI_INT, left, 130 + k, MPI_COMM_WORLD, &rq[k]);
	for (int k = 0; k < two; k++) {
		for (int i = 0; i < len(13, k, rank); i++)
			out13[k][i] = rank * 1000 + 13 * 10 + k;
		MPI_Isend(out13[k], len(13, k, rank), MPI_INT, right, 130 + k, MPI_COMM_WORLD, &srq[k]);
	}
	MPI_Waitall(two, srq, MPI_STATUSES_IGNORE);
	MPI_Waitall(two, rq, MPI_STATUSES_IGNORE);
	check(13, 0, 0);
	check(13, 1, 1);

	/* 14: a Waitall that fails: the first receive is too short for its
	 * message (MPI_ERR_TRUNCATE in its status, MPI_ERR_IN_STATUS
	 * returned). Open MPI completes the second and leaves the failed
	 * request to free; MPICH frees the failed one and leaves the second
	 * in flight (MPI_ERR_PENDING), to complete by another call. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int k = 0; k < two; k++)
		MPI_Irecv(buf[k], k ? POST : 2, MPI_INT, left, 140 + k, MPI_COMM_WORLD, &rq[k]);
	sendp(14, two);
	int rc = MPI_Waitall(two, rq, st), cls = MPI_SUCCESS;
	MPI_Error_class(st[0].MPI_ERROR, &cls);
	errors += rc != MPI_ERR_IN_STATUS || cls != MPI_ERR_TRUNCATE;
	if (st[1].MPI_ERROR == MPI_ERR_PENDING)
		MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	else
		errors += st[1].MPI_ERROR != MPI_SUCCESS;
	check(14, 1, 1);
	if (rq[0] != MPI_REQUEST_NULL)
		MPI_Request_free(&rq[0]);

	int all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("irecv: %d ranks, %d errors\n", size, all);
	MPI_Finalize();
	return all != 0;
}
