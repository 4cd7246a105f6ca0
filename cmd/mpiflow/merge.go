package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"mpiflow/flowgraph"
)

func newMergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT PARTIAL...",
		Short: "Merge the partial per-rank files of a run into one job file",
		Long: `When ranks never reach MPI_Finalize (abort, crash, exit without finalize),
each writes its own partial file. merge combines them into one job file,
marked incomplete when ranks are missing or stopped early.`,
		Example: `  mpiflow merge job.mpiflow job.rank*.partial.mpiflow`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flowgraph.Merge(args[0], args[1:]); err != nil {
				return err
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d block(s) of %d rank(s)\n", args[0], len(f.Index), f.Header.NumRanks)
			incompleteNote(cmd.OutOrStdout(), &f.Header)
			return nil
		},
	}
}
