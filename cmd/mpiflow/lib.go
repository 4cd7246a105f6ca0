package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"mpiflow/launch"
	"mpiflow/report"
)

func newLibCmd() *cobra.Command {
	var mpi string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lib",
		Short: "Print the path of the interposition library to preload",
		Long: `lib prints the absolute path of the LD_PRELOAD library that records MPI
calls, for the MPI of the mpirun on PATH (or --mpi). It is found next to
the mpiflow executable (bin/mpiflow -> lib/) or through $MPIFLOW_LIB.`,
		Example: `  mpirun -np 4 -x LD_PRELOAD=$(mpiflow lib) ./app
  mpiflow lib --mpi openmpi --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flavor, p, err := launch.PickLib(mpi)
			if err != nil {
				return err
			}
			if asJSON {
				return report.WriteJSON(cmd.OutOrStdout(), map[string]string{"path": p, "mpi": flavor})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), p)
			return err
		},
	}
	cmd.Flags().StringVar(&mpi, "mpi", "auto", "MPI flavor: auto, openmpi or mpich")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
