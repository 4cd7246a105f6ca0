/*
 * regions.c: the table of MPI_Pcontrol's regions (regions.h).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "regions.h"

static mf_region table[MF_MAX_REGIONS];
static int ntable; /* entries below it are complete (release/acquire) */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* read_name copies the string at p into out, or leaves out empty. The
 * name is a variadic argument that a call without one (mpiP's
 * MPI_Pcontrol(0)) does not pass, so p may hold anything: reading it with
 * process_vm_readv from the own process fails where a plain read would
 * fault. The read is split at the page boundary, as the call transfers
 * whole pieces only. A name is printable and ends within MF_REGION_NAME
 * bytes (longer ones are cut there). */
static void read_name(const char *p, char out[MF_REGION_NAME])
{
	out[0] = 0;
	if (!p)
		return;
	char buf[MF_REGION_NAME];
	const uintptr_t a = (uintptr_t)p;
	const uintptr_t page = 4096;
	size_t first = page - (a & (page - 1));
	if (first > sizeof buf)
		first = sizeof buf;
	struct iovec local = {buf, sizeof buf};
	struct iovec remote[2] = {{(void *)p, first}, {(void *)(a + first), sizeof buf - first}};
	ssize_t n = process_vm_readv(getpid(), &local, 1, remote, first < sizeof buf ? 2 : 1, 0);
	if (n <= 0)
		return;
	size_t k = 0;
	for (; k < (size_t)n && buf[k]; k++)
		if ((unsigned char)buf[k] < 0x20 || buf[k] == 0x7f)
			return;
	if (k == 0)
		return;
	if (k == (size_t)n) /* no end within what was read: cut */
		k = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
	memcpy(out, buf, k);
	out[k] = 0;
}

static int find(int from, int to, uint64_t caller, int level, const char *name)
{
	for (int i = from; i < to; i++)
		if (table[i].caller == caller && table[i].level == level && strcmp(table[i].name, name) == 0)
			return i;
	return -1;
}

uint64_t mf_region_site(uint64_t caller, int level, const char *p)
{
	char name[MF_REGION_NAME] = "";
	if (level == 1 || level == -1) /* the others take no name (mpiP's levels) */
		read_name(p, name);
	int n = __atomic_load_n(&ntable, __ATOMIC_ACQUIRE);
	int i = find(0, n, caller, level, name);
	if (i >= 0)
		return MF_REGION_SITE | (uint64_t)i;
	pthread_mutex_lock(&mu);
	i = find(n, ntable, caller, level, name);
	if (i < 0 && ntable < MF_MAX_REGIONS) {
		i = ntable;
		table[i].caller = caller;
		table[i].level = level;
		memcpy(table[i].name, name, sizeof name);
		__atomic_store_n(&ntable, i + 1, __ATOMIC_RELEASE);
	} else if (i < 0 && ntable == MF_MAX_REGIONS) {
		static int warned;
		if (!warned)
			fprintf(stderr, "mpiflow: more than %d different MPI_Pcontrol calls; further ones are recorded without "
			                "their region\n", MF_MAX_REGIONS);
		warned = 1;
	}
	pthread_mutex_unlock(&mu);
	return i < 0 ? caller : MF_REGION_SITE | (uint64_t)i;
}

const mf_region *mf_regions(int *n)
{
	*n = __atomic_load_n(&ntable, __ATOMIC_ACQUIRE);
	return table;
}
