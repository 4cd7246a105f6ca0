/*
 * enospc.c: a preloaded stand-in for a full file system, for the tests of
 * what mpiflow does when it cannot write its files. Every write to a file
 * whose path starts with $ENOSPC_DIR (and contains $ENOSPC_MATCH, when
 * set, but not $ENOSPC_EXCEPT) fails with ENOSPC, in MPI processes only (not in the mpiflow CLI
 * that merges their files), after the first $ENOSPC_SKIP such writes of
 * the process; everything else is written as usual.
 *
 *   cc -shared -fPIC -o libenospc.so enospc.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* full says whether writes to fd are to fail. */
static int full(int fd)
{
	const char *dir = getenv("ENOSPC_DIR"), *match = getenv("ENOSPC_MATCH");
	if (fd < 3 || !dir || !*dir)
		return 0;
	static int mpi = -1;
	if (mpi < 0)
		mpi = dlsym(RTLD_DEFAULT, "PMPI_Init") != NULL;
	if (!mpi)
		return 0;
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	if (strncmp(path, dir, strlen(dir)) != 0)
		return 0;
	const char *except = getenv("ENOSPC_EXCEPT");
	if ((match && *match && !strstr(path, match)) || (except && *except && strstr(path, except)))
		return 0;
	static int skipped;
	const char *skip = getenv("ENOSPC_SKIP");
	return !(skip && skipped++ < atoi(skip));
}

#define REAL(ret, name, ...)                                                    \
	static ret (*real)(__VA_ARGS__);                                        \
	if (!real)                                                              \
		real = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, name);

ssize_t write(int fd, const void *b, size_t n)
{
	REAL(ssize_t, "write", int, const void *, size_t)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, b, n);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	REAL(ssize_t, "pwrite", int, const void *, size_t, off_t)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, b, n, off);
}

ssize_t pwrite64(int fd, const void *b, size_t n, off_t off)
{
	REAL(ssize_t, "pwrite64", int, const void *, size_t, off_t)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, b, n, off);
}

ssize_t writev(int fd, const struct iovec *v, int n)
{
	REAL(ssize_t, "writev", int, const struct iovec *, int)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, v, n);
}

ssize_t pwritev(int fd, const struct iovec *v, int n, off_t off)
{
	REAL(ssize_t, "pwritev", int, const struct iovec *, int, off_t)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, v, n, off);
}

ssize_t pwritev64(int fd, const struct iovec *v, int n, off_t off)
{
	REAL(ssize_t, "pwritev64", int, const struct iovec *, int, off_t)
	if (full(fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, v, n, off);
}
