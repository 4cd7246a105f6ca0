/*
 * regions.h: the regions of MPI_Pcontrol. IPM's convention is
 * MPI_Pcontrol(1, "name") to enter a region and MPI_Pcontrol(-1, "name")
 * to leave it. Each distinct (caller, level, name) of a process gets a
 * pseudo call site, MF_REGION_SITE | its index in the table, so that the
 * recorder keeps its calls in a node of their own; the Go part and the
 * partial files put the caller back as the site's address with the level
 * and name (flowgraph.CallSite.Region, Level).
 */
#ifndef MPIFLOW_REGIONS_H
#define MPIFLOW_REGIONS_H

#include <stdint.h>

/* No code address has the top bit set on the systems we run on. */
#define MF_REGION_SITE (1ULL << 63)
#define MF_REGION_NAME 64  /* bytes of a name with its NUL: longer ones are cut */
#define MF_MAX_REGIONS 4096

typedef struct mf_region {
	uint64_t caller; /* return address of the MPI_Pcontrol call */
	int32_t level;
	char name[MF_REGION_NAME]; /* "" when the call passed none that could be read */
} mf_region;

/* mf_region_site returns the pseudo call site of MPI_Pcontrol(level,
 * name) called from caller; name is whatever the variadic argument holds
 * and is read, for levels 1 and -1 only, where it is readable memory
 * holding a printable string. A call without a name (mpiP's
 * MPI_Pcontrol(1)) may so get one from a stale register. Beyond
 * MF_MAX_REGIONS it returns caller (warned once). Thread-safe. */
uint64_t mf_region_site(uint64_t caller, int level, const char *name) __attribute__((visibility("hidden")));

/* mf_regions returns the table and stores its length in *n; safe in a
 * signal handler. */
const mf_region *mf_regions(int *n) __attribute__((visibility("hidden")));

/* mf_region_of returns the region of a pseudo call site in a table of n,
 * or NULL for any other site. */
static inline const mf_region *mf_region_of(const mf_region *t, int n, uint64_t site)
{
	if (!t || !(site & MF_REGION_SITE) || (site & ~MF_REGION_SITE) >= (uint64_t)n)
		return NULL;
	return &t[site & ~MF_REGION_SITE];
}

#endif
