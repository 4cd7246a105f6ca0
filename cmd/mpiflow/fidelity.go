package main

import (
	"github.com/spf13/cobra"

	"mpiflow/aggregate"
	"mpiflow/fidelity"
	"mpiflow/flowgraph"
	"mpiflow/report"
)

func newFidelityCmd() *cobra.Command {
	var (
		nslices  int
		rankList string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "fidelity FILE",
		Short: "Measure how true the rebuilt trace is to the recorded full trace",
		Long: `fidelity compares, per rank (and thread), the event trace rebuilt from FILE
with the full trace recorded beside it (<FILE without .mpiflow>.rank<N>.mftrace,
written when the run was recorded with MPIFLOW_TRACE=1 or ` + "`mpiflow run --trace`" + `):

  order        the same call at every index and the same number of events
  start, end   |rebuilt - recorded| of the events' start and end times (ns
               since the rank's first event): p50, p90, p99 and max
  MPI share    per time slice (--slices over the job's time axis, as
               aggregate cuts it), the largest difference of the share of
               the slice spent in MPI, in percentage points
  call share   the same for the share of each call
  aggregate    whether ` + "`mpiflow aggregate`" + ` (its defaults) finds the same best
               partition on both traces at p = 0.1, 0.3, 0.5, 0.7, 0.9

With --rank, the shares and partitions are those of the selected ranks'
time span. The exit code is 0 whenever the comparison ran: the numbers are
the result.`,
		Example: `  mpiflow run --trace -- mpirun -np 4 ./halo 3000
  mpiflow fidelity halo.1234.mpiflow
  mpiflow fidelity halo.1234.mpiflow --rank 0-1 --slices 60 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkInt("slices", nslices, 1, aggregate.MaxSlices); err != nil {
				return err
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			ranks, err := parseRanks(rankList, f)
			if err != nil {
				return err
			}
			rep, err := fidelity.Compare(f, fidelity.Options{Slices: nslices, Ranks: ranks})
			if err != nil {
				return err
			}
			if asJSON {
				return report.WriteJSON(cmd.OutOrStdout(), rep)
			}
			out := report.TerminalText(cmd.OutOrStdout())
			report.IncompleteNote(out, &f.Header)
			return rep.WriteText(out)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&nslices, "slices", aggregate.DefaultSlices, "number of time slices of the share and aggregate comparisons")
	fl.StringVar(&rankList, "rank", "", "ranks to compare, e.g. 0-3,8 (default all)")
	fl.StringVar(&rankList, "ranks", "", "alias of --rank")
	fl.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}
