package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"mpiflow/analysis"
	"mpiflow/internal/units"
)

// PrintScaling writes the runs of a scaling study and the tables of its
// loops and calls by time lost, top rows each (0: all; JSON has all).
func PrintScaling(w io.Writer, s *analysis.Scaling, f Format, top int) error {
	if f == FormatJSON {
		return WriteJSON(w, s)
	}
	return printScaling(TerminalText(w), s, top)
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
		fmt.Fprintf(tw, "# %d\t%s\t%s\t%.2f\t%.2f\t%s%s\n", r.Ranks, units.NS(r.Wallclock), units.Seconds(r.TimePerRank/1e9), r.MPIPct, r.Efficiency, OneLine(r.Path), note)
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
			fmt.Fprintln(tw, strings.Join(append(row, OneLine(it.Name)), "\t"))
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
