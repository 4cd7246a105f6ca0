/*
 * mpiio.c: MPI-IO for TestMPIIO. argv[1] is a directory; every rank opens
 * DIR/mpiio.dat together and writes one block of B ints into each of six
 * regions of n blocks (n ranks), one way each:
 *   0  MPI_File_write_at          explicit offset, independent
 *   1  MPI_File_write_at_all      explicit offset, collective
 *   2  MPI_File_seek + MPI_File_write       individual file pointer
 *   3  MPI_File_iwrite_at + MPI_Wait        nonblocking
 *   4  MPI_File_seek_shared + MPI_File_write_ordered   shared pointer,
 *                                           collective, in rank order
 *   5  MPI_File_write_shared      shared pointer, independent, any order
 * then, after MPI_File_sync, MPI_Barrier, MPI_File_sync, reads its right
 * neighbour's blocks back the same ways (MPI_File_read_at_all, _read_at,
 * _seek + _read, _iread_at + MPI_Wait, _seek_shared + _read_ordered for
 * its own block of region 4) and rank 0 reads region 5 whole
 * (MPI_File_read_at) to find every rank's block there once. Each int is
 * writer * 1000000 + region * 10000 + i. Prints "mpiio: N ranks, E
 * errors" on rank 0 and exits 1 when E > 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 256 /* ints a block */

static int errors;

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING];
		int n = 0;
		MPI_Error_string(rc, s, &n);
		fprintf(stderr, "mpiio: %s: %s\n", what, s);
		errors++;
	}
}

static void fill(int *b, int writer, int region)
{
	for (int i = 0; i < B; i++)
		b[i] = writer * 1000000 + region * 10000 + i;
}

static void expect(const int *b, int writer, int region, const char *what)
{
	for (int i = 0; i < B; i++)
		if (b[i] != writer * 1000000 + region * 10000 + i) {
			fprintf(stderr, "mpiio: %s: int %d is %d, want writer %d region %d\n", what, i, b[i], writer, region);
			errors++;
			return;
		}
}

int main(int argc, char **argv)
{
	int rank, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiio DIR\n");
		MPI_Finalize();
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/mpiio.dat", argv[1]);
	const MPI_Offset blk = B * sizeof(int), region = (MPI_Offset)n * blk;
	int right = (rank + 1) % n, buf[B], in[B];
	MPI_File fh;
	MPI_Request req;
	check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");

	fill(buf, rank, 0);
	check(MPI_File_write_at(fh, 0 * region + rank * blk, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write_at");
	fill(buf, rank, 1);
	check(MPI_File_write_at_all(fh, 1 * region + rank * blk, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write_at_all");
	fill(buf, rank, 2);
	check(MPI_File_seek(fh, 2 * region + rank * blk, MPI_SEEK_SET), "seek");
	check(MPI_File_write(fh, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write");
	fill(buf, rank, 3);
	check(MPI_File_iwrite_at(fh, 3 * region + rank * blk, buf, B, MPI_INT, &req), "iwrite_at");
	check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait iwrite_at");
	fill(buf, rank, 4);
	check(MPI_File_seek_shared(fh, 4 * region, MPI_SEEK_SET), "seek_shared");
	check(MPI_File_write_ordered(fh, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write_ordered");
	fill(buf, rank, 5);
	check(MPI_File_write_shared(fh, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write_shared");

	check(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	check(MPI_File_sync(fh), "sync");

	check(MPI_File_read_at_all(fh, 0 * region + right * blk, in, B, MPI_INT, MPI_STATUS_IGNORE), "read_at_all");
	expect(in, right, 0, "read_at_all");
	check(MPI_File_read_at(fh, 1 * region + right * blk, in, B, MPI_INT, MPI_STATUS_IGNORE), "read_at");
	expect(in, right, 1, "read_at");
	check(MPI_File_seek(fh, 2 * region + right * blk, MPI_SEEK_SET), "seek");
	check(MPI_File_read(fh, in, B, MPI_INT, MPI_STATUS_IGNORE), "read");
	expect(in, right, 2, "read");
	check(MPI_File_iread_at(fh, 3 * region + right * blk, in, B, MPI_INT, &req), "iread_at");
	check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait iread_at");
	expect(in, right, 3, "iread_at");
	check(MPI_File_seek_shared(fh, 4 * region, MPI_SEEK_SET), "seek_shared");
	check(MPI_File_read_ordered(fh, in, B, MPI_INT, MPI_STATUS_IGNORE), "read_ordered");
	expect(in, rank, 4, "read_ordered");
	if (rank == 0) {
		int *all = malloc((size_t)region), *seen = calloc((size_t)n, sizeof(int));
		check(MPI_File_read_at(fh, 5 * region, all, n * B, MPI_INT, MPI_STATUS_IGNORE), "read_at region 5");
		for (int k = 0; k < n; k++) {
			int w = all[k * B] / 1000000;
			if (w < 0 || w >= n || seen[w]++) {
				fprintf(stderr, "mpiio: region 5 block %d: writer %d twice or unknown\n", k, w);
				errors++;
				continue;
			}
			expect(all + k * B, w, 5, "write_shared");
		}
		free(all);
		free(seen);
	}
	check(MPI_File_close(&fh), "close");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		check(MPI_File_delete(path, MPI_INFO_NULL), "delete");

	int total = 0;
	MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpiio: %d ranks, %d errors\n", n, total);
	MPI_Finalize();
	return total > 0;
}
