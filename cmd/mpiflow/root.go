package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"mpiflow/flowgraph"
	"mpiflow/internal/atomicfile"

	"github.com/spf13/cobra"
)

// version is set by the linker (-ldflags "-X main.version=...").
var version = "dev"

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mpiflow",
		Short: "Record and analyze event flow graphs of MPI jobs",
		Long: `mpiflow records, per MPI rank, an event flow graph: nodes are MPI calls,
edges are the compute phases between them. It rebuilds the exact event
sequence from it and reports where time goes.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var workers int
	root.PersistentFlags().IntVar(&workers, "workers", 0,
		"ranks analysed at once, each with its working set in memory (0: one per CPU)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkInt("workers", workers, 0, -1); err != nil {
			return err
		}
		if cmd.Name() != "run" { // run forwards these signals to its job
			removeTempsOnSignal()
		}
		if workers > 0 {
			// Every parallel stage runs at most GOMAXPROCS workers.
			runtime.GOMAXPROCS(workers)
		}
		return nil
	}
	root.AddCommand(
		newVersionCmd(),
		newStatsCmd(),
		newTraceCmd(),
		newMergeCmd(),
		newAggregateCmd(),
		newRunCmd(),
		newLibCmd(),
		newLoopsCmd(),
		newDiffCmd(),
		newScalingCmd(),
		newReportCmd(),
		newGraphCmd(),
		newFidelityCmd(),
		newExportCmd(),
		newDBCmd(),
	)
	return root
}

// removeTempsOnSignal makes SIGINT, SIGTERM and SIGHUP remove the
// temporary files of the outputs being written before they end the
// process (with the signal's usual status).
func removeTempsOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		atomicfile.RemovePending()
		signal.Reset()
		syscall.Kill(os.Getpid(), s.(syscall.Signal))
	}()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the mpiflow version and file format version",
		Example: "  mpiflow version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "mpiflow %s (file format %d)\n", version, flowgraph.FormatVersion)
			return err
		},
	}
}
