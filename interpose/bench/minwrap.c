/* minwrap: the minimal PMPI wrapper the overhead benchmark compares with:
 * two clock_gettime stamps per call, summed so they are not optimized
 * away, and nothing else. */
#include <mpi.h>
#include <stdint.h>
#include <time.h>

static int64_t total;

static inline int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define WRAP(call)                      \
	int64_t t0 = now();             \
	int rc = call;                  \
	total += now() - t0;            \
	return rc;

int MPI_Comm_rank(MPI_Comm comm, int *rank) { WRAP(PMPI_Comm_rank(comm, rank)) }
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) { WRAP(PMPI_Send(buf, count, dt, dest, tag, comm)) }
int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) { WRAP(PMPI_Recv(buf, count, dt, src, tag, comm, st)) }
int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *rq) { WRAP(PMPI_Isend(buf, count, dt, dest, tag, comm, rq)) }
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *rq) { WRAP(PMPI_Irecv(buf, count, dt, src, tag, comm, rq)) }
int MPI_Waitall(int n, MPI_Request rq[], MPI_Status st[]) { WRAP(PMPI_Waitall(n, rq, st)) }
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) { WRAP(PMPI_Allreduce(s, r, count, dt, op, comm)) }
int MPI_Test(MPI_Request *rq, int *flag, MPI_Status *st) { WRAP(PMPI_Test(rq, flag, st)) }
int MPI_Testany(int n, MPI_Request rq[], int *index, int *flag, MPI_Status *st) { WRAP(PMPI_Testany(n, rq, index, flag, st)) }
