package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"mpiflow/export"
	"mpiflow/flowgraph"
)

func newTraceCmd() *cobra.Command {
	var rankList, format, out string
	cmd := &cobra.Command{
		Use:   "trace FILE",
		Short: "Write the reconstructed event trace",
		Long: `trace rebuilds the exact ordered sequence of MPI calls of each selected rank
from its event flow graph, with timestamps restored from the time anchors,
and writes it in the chosen format.`,
		Example: `  mpiflow trace halo.1234.mpiflow --rank 0 --format csv
  mpiflow trace halo.1234.mpiflow --rank 0-3 -o trace.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ranks, err := parseRanks(rankList)
			if err != nil {
				return err
			}
			if format != "csv" {
				return fmt.Errorf("unknown format %q (known: csv)", format)
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			incompleteNote(cmd.ErrOrStderr(), &f.Header)
			return writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) error {
				prog := newProgress("writing ranks", len(f.Index))
				defer prog.done()
				wrote := false
				for i, e := range f.Index {
					prog.step(i + 1)
					if ranks != nil && !ranks[e.Rank] {
						continue
					}
					r, err := f.ReadRank(i)
					if err != nil {
						return err
					}
					if err := export.CSV(w, r, !wrote); err != nil {
						return fmt.Errorf("%s: %w", args[0], err)
					}
					wrote = true
				}
				if !wrote {
					return fmt.Errorf("%s: no rank matches --rank %s", args[0], rankList)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to write, e.g. 0-3,8 (default all)")
	cmd.Flags().StringVar(&rankList, "ranks", "", "alias of --rank")
	cmd.Flags().StringVar(&format, "format", "csv", "output format: csv")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default standard output)")
	return cmd
}

// writeOutput runs write on stdout, or on a temporary file renamed to path
// when write succeeds, so a failed command never leaves a partial file.
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	tmp, err := os.CreateTemp(dirOf(path), ".mpiflow-out-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), path); err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
