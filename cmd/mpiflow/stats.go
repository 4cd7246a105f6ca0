package main

import (
	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/report"
)

func newStatsCmd() *cobra.Command {
	var rankList string
	var asJSON, sites, matrix bool
	cmd := &cobra.Command{
		Use:   "stats FILE",
		Short: "Print the job banner and a table of MPI calls by time",
		Long: `stats prints an IPM-style banner (command, ranks, hosts, wallclock, %MPI,
bytes) and a table of MPI calls sorted by total time over the selected ranks.
With --sites it adds the table of call sites (call and site, as the report
names them), also by total time: count, time, bytes and the ranks that call
each one. With --matrix it adds the point-to-point traffic from rank to rank
(as the report's communication matrix counts it, at the sender): the whole
matrix up to 16 ranks, the busiest pairs beyond.`,
		Example: `  mpiflow stats halo.1234.mpiflow
  mpiflow stats --rank 0-3 --json halo.1234.mpiflow
  mpiflow stats --sites halo.1234.mpiflow
  mpiflow stats --matrix --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Call sites are named as the report names them: resolved.
			job, err := load(args[0], rankList, analysis.Options{NoLoops: true, NoResolve: !sites, NoSiteTable: !sites, NoSequences: true, NoGraphs: true})
			if err != nil {
				return err
			}
			return report.PrintStats(cmd.OutOrStdout(), job, outputFormat(asJSON), report.StatsParts{Sites: sites, Matrix: matrix})
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to include, e.g. 0-3,8 (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().BoolVar(&sites, "sites", false, "add the table of call sites (resolving them in the objects' debug information)")
	cmd.Flags().BoolVar(&matrix, "matrix", false, "add the point-to-point traffic from rank to rank")
	return cmd
}
