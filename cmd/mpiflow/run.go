package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/launch"
	"mpiflow/report"
)

// runOptions are the flags of mpiflow run.
type runOptions struct {
	launch launch.Options
	asJSON bool
	// noReport skips the HTML report written beside each profile.
	noReport bool
}

// runResult is what mpiflow run --json prints.
type runResult struct {
	launch.Result
	// Reports are the HTML reports written beside Files.
	Reports []string `json:"reports,omitempty"`
}

// reportPath is where mpiflow run and mpiflow report put the report of
// the profile at path: beside it, .mpiflow replaced with .html.
func reportPath(path string) string {
	return strings.TrimSuffix(path, ".mpiflow") + ".html"
}

// writeReports writes the report of each profile beside it and returns
// the reports written. A report that fails is a warning: the job and its
// profile are fine, and mpiflow report can try again.
func writeReports(ctx context.Context, files []string, stderr io.Writer) []string {
	var out []string
	if len(files) > 0 {
		_ = checkDot("dot", false, stderr) // only warns without --dot
	}
	for _, f := range files {
		dst := reportPath(f)
		if err := writeReport(ctx, dst, f, 0, report.Options{}); err != nil {
			fmt.Fprintf(stderr, "mpiflow: no report for %s: %v\n", f, err)
			continue
		}
		out = append(out, dst)
	}
	return out
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- LAUNCHER ARGS...",
		Short: "Run an MPI job with the recording library preloaded on every rank",
		Long: `run starts an MPI job with mpiflow's interposition library preloaded on
every rank and prints where the job's profile was written. The preload and
every MPIFLOW_* setting of the environment (with the flags on top) go to all
ranks, remote ones too: for Open MPI's mpirun it adds -x NAME for each, for
MPICH's mpiexec -genv NAME VALUE; any other command (a singleton run, srun)
gets them through the environment. The --dir directory is created when
missing. The job's exit code is kept. At the end it writes the HTML report
of each profile beside it (FILE.html; --no-report skips it).

When ranks stop before MPI_Finalize (exit, MPI_Abort, a fatal signal), each
writes its own partial file; run merges them into one job file marked
incomplete and removes them. So it does when the job file cannot be written
(a full file system): then each rank keeps its data in a partial file in
the output directory, else in $TMPDIR. Ranks killed with SIGKILL (MPICH's hydra does
that to the other ranks when one fails) leave no data.`,
		Example: `  mpiflow run -- mpirun -np 4 ./app args
  mpiflow run --dir profiles --trace -- mpiexec -n 8 ./solver input.dat
  mpiflow run --json -- mpirun -np 2 ./ring`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.launch.Stdin, o.launch.Stdout, o.launch.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			lres, err := launch.Run(args, o.launch)
			if err != nil {
				return err
			}
			res := &runResult{Result: *lres}
			if !o.noReport {
				res.Reports = writeReports(cmd.Context(), res.Files, cmd.ErrOrStderr())
			}
			if o.asJSON {
				if err := report.WriteJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else if len(res.Files) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: no profile was written (did the job reach MPI_Finalize? see the messages above)")
			} else {
				switch {
				case res.Incomplete:
					fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: the job did not finish normally: ranks that stopped early wrote partial data, merged below (incomplete run)")
				case res.Merged:
					fmt.Fprintln(cmd.ErrOrStderr(), "mpiflow: the job file could not be written at MPI_Finalize; the ranks' own files were merged below (complete run)")
				}
				for _, f := range res.Files {
					fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: profile: %s\n", f)
				}
				for _, f := range res.Reports {
					fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: report:  %s\n", f)
				}
			}
			if res.ExitCode != 0 {
				// Keep the job's exit code for scripts and batch systems.
				os.Exit(res.ExitCode)
			}
			return nil
		},
	}
	f := cmd.Flags()
	// Everything from the launcher on belongs to the job, even without "--".
	f.SetInterspersed(false)
	f.StringVar(&o.launch.Dir, "dir", "", "directory for the profile, created when missing (default $MPIFLOW_DIR or the working directory)")
	f.StringVar(&o.launch.Key, "key", "", "node key fields, e.g. call,site,bytes,partner,comm (default call,site)")
	f.BoolVar(&o.launch.Trace, "trace", false, "also write a full trace of every event (MPIFLOW_TRACE=1)")
	f.BoolVar(&o.launch.Exact, "exact", false, "time every call, also in fast polling loops (MPIFLOW_EXACT=1)")
	f.BoolVar(&o.launch.Quiet, "quiet", false, "no banner from the library (MPIFLOW_QUIET=1)")
	f.StringVar(&o.launch.MPI, "mpi", "auto", "MPI flavor: auto, openmpi or mpich")
	f.BoolVar(&o.asJSON, "json", false, "print the exit code and profile paths as JSON")
	f.BoolVar(&o.noReport, "no-report", false, "do not write the HTML report beside the profile")
	return cmd
}
