package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"mpiflow/analysis"
	"mpiflow/internal/units"
)

// PrintDiff writes the comparison of two jobs: a banner comparing them,
// the matched groups and the top items by absolute change of time (top
// 0: all; JSON has all).
func PrintDiff(w io.Writer, d *analysis.JobDiff, f Format, top int) error {
	return present(w, f, d, func(w io.Writer) error { return printDiff(w, d, top) })
}

// printDiff prints the banner comparing the jobs, the matched groups and
// the top items of d.
func printDiff(w io.Writer, d *analysis.JobDiff, top int) error {
	a, b, c := &d.A, &d.B, &d.Change
	line := strings.Repeat("#", 78)
	fmt.Fprintln(w, line)
	var banner strings.Builder
	tw := tabwriter.NewWriter(&banner, 0, 0, 2, ' ', 0)
	row := func(name, va, vb, change string) {
		fmt.Fprintf(tw, "# %s\t%s\t%s\t%s\n", name, OneLine(va), OneLine(vb), change)
	}
	same := func(eq bool) string {
		if eq {
			return "same"
		}
		return "changed"
	}
	row("", "A", "B", "")
	row("file", a.Path, b.Path, "")
	row("command", strings.Join(a.Command, " "), strings.Join(b.Command, " "), same(c.SameCommand))
	ranks := func(j *analysis.DiffJob) string { return fmt.Sprintf("%d on %d host(s)", j.Ranks, len(j.Hosts)) }
	rankChange := same(c.SameHosts && c.Ranks == 0)
	if c.Ranks != 0 {
		rankChange = fmt.Sprintf("%+d rank(s)", c.Ranks)
	}
	row("mpi_tasks", ranks(a), ranks(b), rankChange)
	row("mpi lib", a.MPILibrary+" "+a.MPIVersion, b.MPILibrary+" "+b.MPIVersion, same(c.SameMPI))
	row("wallclock", units.NS(a.Wallclock)+" s", units.NS(b.Wallclock)+" s", ratio(c.WallclockRatio))
	row("%mpi", fmt.Sprintf("%.2f", a.MPIPct), fmt.Sprintf("%.2f", b.MPIPct), fmt.Sprintf("%+.2f points", c.MPIPct))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, banner.String())
	for _, j := range []struct {
		name string
		job  *analysis.DiffJob
	}{{"A", a}, {"B", b}} {
		if j.job.Incomplete {
			fmt.Fprintf(w, "# NOTE: %s is an incomplete run: some ranks did not reach MPI_Finalize; their data ends where they stopped\n", j.name)
		}
	}
	if d.PerRank {
		what, na, nb := "rank(s)", a.Ranks, b.Ranks
		if a.Blocks != a.Ranks || b.Blocks != b.Ranks {
			what, na, nb = "blocks (ranks and threads analysed)", a.Blocks, b.Blocks
		}
		fmt.Fprintf(w, "# the runs have %d and %d %s: times, iterations, calls and bytes are means per rank\n", na, nb, what)
	}
	for i, g := range d.Groups {
		switch g.Status {
		case analysis.StatusMatched:
			fmt.Fprintf(w, "# group %d: A's group %d (%s) and B's group %d (%s), matched by %s\n", i+1, g.A+1, g.AMembers, g.B+1, g.BMembers, g.By)
		case analysis.StatusGone:
			fmt.Fprintf(w, "# group %d: A's group %d (%s), gone\n", i+1, g.A+1, g.AMembers)
		default:
			fmt.Fprintf(w, "# group %d: B's group %d (%s), new\n", i+1, g.B+1, g.BMembers)
		}
	}
	fmt.Fprintln(w, line)
	items := d.Items
	if top > 0 && len(items) > top {
		items = items[:top]
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "status\tgroup\ttime A(s)\ttime B(s)\tchange(s)\tnoise(s)\tratio\ttime/iter A(s)\ttime/iter B(s)\titer A\titer B\tcalls A\tcalls B\tbytes A\tbytes B\t%mpi A\t%mpi B\titem")
	for _, it := range items {
		group := "-"
		if it.Kind == analysis.ItemLoop {
			group = fmt.Sprint(it.Group + 1)
		}
		var f [2][6]string
		for k, s := range []*analysis.DiffSide{it.A, it.B} {
			if s == nil {
				f[k] = [6]string{"-", "-", "-", "-", "-", "-"}
				continue
			}
			f[k] = [6]string{units.Seconds(s.Time / 1e9), "-", "-", units.Count(s.Calls), units.Bytes(s.Bytes), fmt.Sprintf("%.2f", s.MPIPct)}
			if it.Kind == analysis.ItemLoop {
				f[k][1], f[k][2] = units.Seconds(s.TimePerIteration/1e9), units.Count(s.Iterations)
			}
		}
		name := OneLine(it.Name)
		if it.Kind == analysis.ItemLoop {
			name = "loop " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Verdict, group,
			f[0][0], f[1][0], units.Seconds(it.Change.Time/1e9), units.Seconds(it.Noise/1e9), ratio(it.Ratio), f[0][1], f[1][1], f[0][2], f[1][2],
			f[0][3], f[1][3], f[0][4], f[1][4], f[0][5], f[1][5], name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(items) < len(d.Items) {
		fmt.Fprintf(w, "# %d more item(s): --top 0 or --json for all\n", len(d.Items)-len(items))
	}
	return nil
}

// ratio formats a ratio B/A as "x2.00", "-" when there is none.
func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("x%.2f", r)
}

// PrintScaling writes the runs of a scaling study and the tables of its
// loops and calls by time lost, top rows each (0: all; JSON has all).
func PrintScaling(w io.Writer, s *analysis.Scaling, f Format, top int) error {
	return present(w, f, s, func(w io.Writer) error { return printScaling(w, s, top) })
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
