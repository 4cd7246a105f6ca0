package main

import (
	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/report"
)

func newScalingCmd() *cobra.Command {
	var asJSON, weak bool
	var top int
	cmd := &cobra.Command{
		Use:   "scaling FILE FILE...",
		Short: "How each loop and MPI call scales over runs at several rank counts",
		Long: `scaling compares runs of one program at several rank counts: per loop
(aligned across runs by the call sites of its header and of the loops around
it, as diff aligns them) and per MPI call, the time per rank in each run and
the parallel efficiency against the run of fewest ranks, and the items ranked
by the time they lose in the largest run against ideal scaling: where the
time that does not scale goes. The banner gives each run's time per rank, MPI
share and efficiency, so the growth of communication shows.

Strong scaling (the default) is the same work on more ranks: ideal is the
time per rank falling as 1/ranks, efficiency = (t_ref x ranks_ref) / (t x
ranks). --weak is work growing with the ranks: ideal is the same time per
rank, efficiency = t_ref / t.`,
		Example: `  mpiflow scaling halo-2.mpiflow halo-4.mpiflow halo-8.mpiflow
  mpiflow scaling --weak --json run-*.mpiflow`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkInt("top", top, 0, -1); err != nil {
				return err
			}
			var jobs []*analysis.Job
			for _, path := range args {
				job, err := load(path, "", analysis.Options{NoSequences: true, NoSiteTable: true})
				if err != nil {
					return err
				}
				jobs = append(jobs, job)
			}
			s := analysis.NewScaling(jobs, weak)
			return report.PrintScaling(cmd.OutOrStdout(), s, outputFormat(asJSON), top)
		},
	}
	cmd.Flags().BoolVar(&weak, "weak", false, "weak scaling: the work grows with the ranks (default strong: the same work)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().IntVar(&top, "top", 15, "rows of each table, by time lost (0: all)")
	return cmd
}
