/*
 * tight.c: fast repeats' probe of the thread's processor (mf_tight_probe).
 */
#include "tight.h"

void mf_tight_probe(mf_rec *r, int64_t now)
{
	const int64_t cpu = r->cpu_now(r), wall = now - r->cpu_wall;
	if (cpu < 0) { /* cannot tell: all timed */
		r->cpu_clean = 0;
		r->cpu_wall = INT64_MAX;
		return;
	}
	/* A long wait since the last probe (no fast repeats meanwhile, the
	 * thread maybe asleep in a blocking call) says nothing about them. */
	if (r->cpu_wall > 0 && wall <= MF_TIGHT_CLEAN * (int64_t)MF_TIGHT_PROBE_NS) {
		const int64_t lost = wall - (cpu - r->cpu_time);
		if (lost * MF_TIGHT_LOST > wall) {
			if (r->cpu_lost > 0 && now - r->cpu_lost < MF_TIGHT_CALM_NS)
				r->cpu_clean = 0;
			else if (r->cpu_clean > MF_TIGHT_CLEAN - MF_TIGHT_RECOVER)
				r->cpu_clean = MF_TIGHT_CLEAN - MF_TIGHT_RECOVER;
			r->cpu_lost = now;
		} else if (r->cpu_clean < MF_TIGHT_CLEAN)
			r->cpu_clean++;
	}
	r->cpu_wall = now;
	r->cpu_time = cpu;
}
