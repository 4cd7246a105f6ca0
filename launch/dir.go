package launch

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// outputDir returns the absolute path of the profile directory: the
// --dir flag, else $MPIFLOW_DIR, else the working directory, with the
// placeholders of MPIFLOW_DIR expanded (expandDir). It creates the
// directory when missing.
func outputDir(flag, env string) (string, error) {
	dir := flag
	if dir == "" {
		dir = env
	}
	if dir == "" {
		dir = "."
	}
	dir = expandDir(dir, time.Now(), os.Getenv)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("create the output directory: %w", err)
	}
	return abs, nil
}

// expandDir expands the placeholders of an MPIFLOW_DIR as the preload
// library does at MPI_Init (interpose/csrc/core.c): %u the user's name, %j
// the scheduler's job id (SLURM_JOB_ID with SLURM_STEP_ID, PBS_JOBID,
// LSB_JOBID, FLUX_JOB_ID, COBALT_JOBID; outside a scheduler, where the
// library takes the launcher's id, "run<pid>" of this command), %Y, %m
// and %d the date (local time), %% a percent sign; any other % stays. The
// job then gets the expanded directory, so library and command agree.
func expandDir(t string, now time.Time, env func(string) string) string {
	if !strings.Contains(t, "%") {
		return t
	}
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	job := fmt.Sprintf("run%d", os.Getpid())
	for _, k := range []string{"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"} {
		if v := env(k); v != "" {
			if s := env("SLURM_STEP_ID"); k == "SLURM_JOB_ID" && s != "" {
				v += "." + s
			}
			job = v
			break
		}
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '%' || i+1 == len(t) {
			b.WriteByte(t[i])
			continue
		}
		switch t[i+1] {
		case 'u':
			b.WriteString(name)
		case 'j':
			b.WriteString(job)
		case 'Y':
			b.WriteString(now.Format("2006"))
		case 'm':
			b.WriteString(now.Format("01"))
		case 'd':
			b.WriteString(now.Format("02"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			continue
		}
		i++
	}
	return b.String()
}
