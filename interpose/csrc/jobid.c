/*
 * jobid.c: the job's id from the scheduler's or launcher's environment.
 */
#include <stdio.h>
#include <stdlib.h>

#include "jobid.h"

int mf_job_id(char *out, size_t n)
{
	const char *keys[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID",
			      "OMPI_MCA_ess_base_jobid", "PMI_JOBID"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v = getenv(keys[i]);
		if (!v || !*v)
			continue;
		const char *step = getenv("SLURM_STEP_ID");
		if (i == 0 && step && *step)
			snprintf(out, n, "%s.%s", v, step);
		else
			snprintf(out, n, "%s", v);
		for (char *c = out; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
				*c = '_';
		return 1;
	}
	return 0;
}
