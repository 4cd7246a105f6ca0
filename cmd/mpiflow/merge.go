package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"mpiflow/flowgraph"
	"mpiflow/internal/atomicfile"
	"mpiflow/report"
)

func newMergeCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "merge OUT PARTIAL...",
		Short: "Merge the partial per-rank files of a run into one job file",
		Long: `When ranks never reach MPI_Finalize (abort, crash, exit without finalize),
each writes its own partial file; so does every rank when the job file
cannot be written at MPI_Finalize (a full file system). merge combines them
into one job file, marked incomplete when ranks are missing or stopped
early.`,
		Example: `  mpiflow merge job.mpiflow job.rank*.partial.mpiflow`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := atomicfile.NotInput(args[0], args[1:]...); err != nil {
				return err
			}
			if _, err := os.Stat(args[0]); err == nil && !force {
				return fmt.Errorf("%s exists: merge does not replace it without --force", args[0])
			}
			if err := flowgraph.Merge(args[0], args[1:]); err != nil {
				return err
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d block(s) of %d rank(s)\n", args[0], len(f.Index), f.Header.NumRanks)
			report.IncompleteNote(cmd.OutOrStdout(), &f.Header)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace OUT if it exists")
	return cmd
}
