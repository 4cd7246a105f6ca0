package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/internal/units"
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
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			return printScaling(terminalText(cmd.OutOrStdout()), s, top)
		},
	}
	cmd.Flags().BoolVar(&weak, "weak", false, "weak scaling: the work grows with the ranks (default strong: the same work)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	cmd.Flags().IntVar(&top, "top", 15, "rows of each table, by time lost (0: all)")
	return cmd
}

// printScaling prints the runs and the tables of loops and calls of s.
func printScaling(w io.Writer, s *analysis.Scaling, top int) error {
	kind := "strong"
	if s.Weak {
		kind = "weak"
	}
	line := strings.Repeat("#", 78)
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, "# %s scaling over %d runs; efficiency against the run of %d rank(s)\n", kind, len(s.Runs), s.Runs[0].Ranks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "# ranks\twallclock(s)\ttime/rank(s)\t%mpi\tefficiency\tfile")
	for _, r := range s.Runs {
		note := ""
		if r.Incomplete {
			note = " (incomplete run)"
		}
		fmt.Fprintf(tw, "# %d\t%s\t%s\t%.2f\t%.2f\t%s%s\n", r.Ranks, units.NS(r.Wallclock), units.Seconds(r.TimePerRank/1e9), r.MPIPct, r.Efficiency, oneLine(r.Path), note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, line)
	for _, part := range []struct {
		title string
		items []analysis.ScalingItem
	}{{"loop", s.Loops}, {"MPI call", s.Calls}} {
		items := part.items
		if top > 0 && len(items) > top {
			items = items[:top]
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := []string{"lost(s)"}
		for _, r := range s.Runs {
			head = append(head, fmt.Sprintf("t/rank @%d (eff)", r.Ranks))
		}
		fmt.Fprintln(tw, strings.Join(append(head, part.title), "\t"))
		for _, it := range items {
			row := []string{units.Seconds(it.Lost / 1e9)}
			for _, p := range it.Points {
				if !p.Present {
					row = append(row, "-")
					continue
				}
				eff := "-" // the reference has no such item
				if it.HasReference() {
					eff = fmt.Sprintf("%.2f", p.Efficiency)
				}
				row = append(row, fmt.Sprintf("%s (%s)", units.Seconds(p.TimePerRank/1e9), eff))
			}
			fmt.Fprintln(tw, strings.Join(append(row, oneLine(it.Name)), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(items) < len(part.items) {
			fmt.Fprintf(w, "# %d more: --top 0 or --json for all\n", len(part.items)-len(items))
		}
	}
	return nil
}
