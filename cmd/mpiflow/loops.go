package main

import (
	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/report"
)

func newLoopsCmd() *cobra.Command {
	var rankList string
	var asJSON bool
	var similarity float64
	cmd := &cobra.Command{
		Use:   "loops FILE",
		Short: "Find the loops of each rank and print the loop trees",
		Long: `loops finds the loops in the event flow graph of every rank (including
irreducible loops and calls repeated back to back), collapses each loop into
one loop node, and groups ranks of similar structure (the groups of the
report): a rank joins a group when at most 1 - --similarity of its time,
calls and bytes is on calls or transitions (keyed by call site) that the
group's representative does not have, and the representative's on ones the
rank does not have; --similarity 1 groups only ranks of the same structure
on every level. The representative is the member closest to the others.
For each group it prints the loop tree of the representative, then the loops
only other members have, with iterations and the share of the rank's time
spent in each loop averaged over the members that have it, its minimum and
maximum, and which ranks have it when not all do. Loops are numbered by
first execution ("Loop N").

The summary table (like Table 1 of the event flow graph paper) gives the
average number of nodes of the uncollapsed graph and of the collapsed top
level, the reduction, and the share of time spent in loops.`,
		Example: `  mpiflow loops halo.1234.mpiflow
  mpiflow loops --rank 0-3 halo.1234.mpiflow
  mpiflow loops --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSimilarity(similarity); err != nil {
				return err
			}
			job, err := load(args[0], rankList, analysis.Options{NoSequences: true, NoGraphs: true, NoSiteTable: true, Similarity: similarity})
			if err != nil {
				return err
			}
			return report.PrintLoops(cmd.OutOrStdout(), cmd.ErrOrStderr(), job, outputFormat(asJSON))
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to include, e.g. 0-3,8 (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	similarityFlag(cmd, &similarity)
	return cmd
}
