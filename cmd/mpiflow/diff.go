package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/report"
)

func newDiffCmd() *cobra.Command {
	var asJSON bool
	var top int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs: what changed, aligned by groups of ranks, loops and call sites",
		Long: `diff compares two runs of a program (after a code change, with another MPI,
on another machine, at another rank count) aligned by program structure:
the groups of ranks of similar structure (matched by their representative's
structure, else by the loops they share, else in order), the loops of each
pair of groups (by the call sites of their header and of the headers of the
loops around them) and the calls at each call site. For each it gives the
time (and per iteration for loops), iterations, calls, bytes and MPI share in
A and in B, the difference and the ratio B/A, and whether it is matched, new
(only in B) or gone (only in A): the changes first, then the noise, each by
descending absolute change of time.

When the runs have different numbers of ranks, the numbers are means per
rank (of the group for loops, of the job for calls), so that runs at 2 and 4
ranks compare. A change is marked as noise when the mean time per rank that
has the item changed by no more than its noise (the noise column), the
largest of: the item's spread over the ranks (its largest minus its least
time on one rank, in either run); its variation within each run (its time
per iteration, or per call, in 30 parts of the run, the parts' spread from
the 5th to the 95th percentile relative to their mean, on 4 ranks evenly
spread, times its time: two runs differ by about as much as the parts of
one), when it makes as many calls in both runs (more calls are more work,
not noise); and a hundredth of a rank's time. MPI_Init and MPI_Finalize
take the launcher's time, not the program's: they are 'start-up' and
'shut-down', last.

The banner compares command, ranks, hosts, MPI library, wallclock and MPI
share, and says when a run is partial. --top limits the table, not --json.`,
		Example: `  mpiflow diff halo.1234.mpiflow halo.5678.mpiflow
  mpiflow diff --top 0 before.mpiflow after.mpiflow
  mpiflow diff --json run-2.mpiflow run-4.mpiflow`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkInt("top", top, 0, -1); err != nil {
				return err
			}
			var jobs [2]*analysis.Job
			for i, path := range args {
				// Call sites are named as the report names them: resolved.
				job, err := load(path, "", analysis.Options{NoSequences: true, Variation: true})
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						err = fmt.Errorf("%s: %w", path, err)
					}
					return err
				}
				jobs[i] = job
			}
			d := analysis.Diff(jobs[0], jobs[1])
			return report.PrintDiff(cmd.OutOrStdout(), d, outputFormat(asJSON), top)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole comparison as JSON instead of tables")
	cmd.Flags().IntVar(&top, "top", 20, "rows of the table, by absolute change of time (0: all)")
	return cmd
}
