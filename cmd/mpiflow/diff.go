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

func newDiffCmd() *cobra.Command {
	var asJSON bool
	var top int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs: what changed, aligned by groups of ranks, loops and call sites",
		Long: `diff compares two runs of a program (after a code change, with another MPI,
on another machine, at another rank count) aligned by program structure:
the groups of ranks of similar structure (matched by their representative's
structure, else by the loops they share, else in order), the loops of each
pair of groups (by the call sites of their header and of the headers of the
loops around them) and the calls at each call site. For each it gives the
time (and per iteration for loops), iterations, calls, bytes and MPI share in
A and in B, the difference and the ratio B/A, and whether it is matched, new
(only in B) or gone (only in A), by descending absolute change of time.

When the runs have different numbers of ranks, the numbers are means per
rank (of the group for loops, of the job for calls), so that runs at 2 and 4
ranks compare. A change is marked as noise when the mean time per rank that
has the item changed by no more than the item's spread over the ranks (its
largest minus its least time on one rank, in either run).

The banner compares command, ranks, hosts, MPI library, wallclock and MPI
share, and says when a run is partial. --top limits the table, not --json.`,
		Example: `  mpiflow diff halo.1234.mpiflow halo.5678.mpiflow
  mpiflow diff --top 0 before.mpiflow after.mpiflow
  mpiflow diff --json run-2.mpiflow run-4.mpiflow`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkInt("top", top, 0, -1); err != nil {
				return err
			}
			var jobs [2]*analysis.Job
			for i, path := range args {
				// Call sites are named as the report names them: resolved.
				job, err := load(path, "", analysis.Options{NoSequences: true})
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						err = fmt.Errorf("%s: %w", path, err)
					}
					return err
				}
				jobs[i] = job
			}
			d := analysis.Diff(jobs[0], jobs[1])
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), d)
			}
			return printDiff(terminalText(cmd.OutOrStdout()), d, top)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole comparison as JSON instead of tables")
	cmd.Flags().IntVar(&top, "top", 20, "rows of the table, by absolute change of time (0: all)")
	return cmd
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
		fmt.Fprintf(tw, "# %s\t%s\t%s\t%s\n", name, oneLine(va), oneLine(vb), change)
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
	fmt.Fprintln(tw, "status\tgroup\ttime A(s)\ttime B(s)\tchange(s)\tratio\ttime/iter A(s)\ttime/iter B(s)\titer A\titer B\tcalls A\tcalls B\tbytes A\tbytes B\t%mpi A\t%mpi B\titem")
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
		name := oneLine(it.Name)
		if it.Kind == analysis.ItemLoop {
			name = "loop " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Verdict(), group,
			f[0][0], f[1][0], units.Seconds(it.Change.Time/1e9), ratio(it.Ratio), f[0][1], f[1][1], f[0][2], f[1][2],
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
