package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/internal/atomicfile"
	"mpiflow/internal/progress"
	"mpiflow/report"
)

func newReportCmd() *cobra.Command {
	var out, dotPath, win, baseline string
	var slices, maxGroups int
	var noOcelotl, scaling, weak bool
	var similarity float64
	cmd := &cobra.Command{
		Use:   "report FILE | report --scaling FILE FILE...",
		Short: "Write the self-contained HTML report of a recording",
		Long: `report writes one HTML file that opens offline in any browser: the job
banner, sortable tables of the MPI calls and call sites (the numbers of stats
and stats --sites), the communication matrix, load balance and memory by rank,
loop-collapsed event flow graphs per rank group (laid out by Graphviz dot), a
two-rank comparison, the Ocelotl spatiotemporal overview and a timeline of the
reconstructed events. Sections have stable ids (#calls, #callsites,
#comm-matrix, #load-balance, #graphs, #overview, #timeline) to link to.
With --compare BASELINE a section (#compare-runs) says what changed from
that run to this one, as mpiflow diff BASELINE FILE does.

With --scaling, FILE... are runs of one program at several rank counts, and
the page is their scaling (as mpiflow scaling prints it, --weak for weak
scaling): each run's efficiency, the efficiency curves of the loops and MPI
calls that lose the most time, and their tables (default -o scaling.html).

The overview opens on the run after MPI_Init, cut into --slices slices, and
offers the whole run and finer cuts; --window START:END opens it on that
window instead (times since the start of the run, as seconds "1.5" or
durations "1500ms"; END past the run's end stops at the end).`,
		Example: `  mpiflow report halo.1234.mpiflow
  mpiflow report halo.1234.mpiflow -o halo.html --slices 50
  mpiflow report halo.1234.mpiflow --window 0.5:2.5`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if scaling {
				return writeScalingPage(cmd, args, out, weak)
			}
			if len(args) > 1 {
				return fmt.Errorf("one profile at a time (%d given); --scaling takes several runs", len(args))
			}
			if err := errors.Join(checkInt("slices", slices, 1, aggregate.MaxSlices), checkInt("max-groups", maxGroups, 1, -1),
				checkSimilarity(similarity)); err != nil {
				return err
			}
			if err := checkDot(dotPath, cmd.Flags().Changed("dot"), cmd.ErrOrStderr()); err != nil {
				return err
			}
			if out == "" {
				out = reportPath(args[0])
			}
			if err := atomicfile.NotInput(out, args[0]); err != nil {
				return err
			}
			opt := report.Options{DotPath: dotPath, Slices: slices, MaxGroups: maxGroups, NoOcelotl: noOcelotl}
			if win != "" {
				var err error
				if opt.WindowFrom, opt.WindowTo, err = parseWindow(win); err != nil {
					return err
				}
			}
			if baseline != "" {
				base, err := load(baseline, "", analysis.Options{Similarity: similarity, NoSequences: true, Variation: true})
				if err != nil {
					return err
				}
				opt.Compare = base
			}
			if err := writeReport(cmd.Context(), out, args[0], similarity, opt); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "report written to %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default FILE with .html)")
	cmd.Flags().StringVar(&dotPath, "dot", "dot", "Graphviz dot executable")
	cmd.Flags().IntVar(&slices, "slices", 30, "time slices of the spatiotemporal overview")
	cmd.Flags().IntVar(&maxGroups, "max-groups", 24, "rank groups whose graphs are embedded")
	cmd.Flags().BoolVar(&noOcelotl, "no-overview", false, "skip the spatiotemporal overview")
	cmd.Flags().StringVar(&win, "window", "", "START:END: the overview's first window (times since the start of the run)")
	cmd.Flags().BoolVar(&scaling, "scaling", false, "FILE... are runs at several rank counts: write their scaling page")
	cmd.Flags().BoolVar(&weak, "weak", false, "with --scaling: weak scaling (work growing with the ranks)")
	cmd.Flags().StringVar(&baseline, "compare", "", "BASELINE.mpiflow: add a section of what changed from that run to this one (as mpiflow diff BASELINE FILE)")
	similarityFlag(cmd, &similarity)
	return cmd
}

// writeScalingPage writes the scaling page of the runs in paths to out
// (default scaling.html).
func writeScalingPage(cmd *cobra.Command, paths []string, out string, weak bool) error {
	if len(paths) < 2 {
		return fmt.Errorf("--scaling compares runs: give two or more profiles (%d given)", len(paths))
	}
	if out == "" {
		out = "scaling.html"
	}
	var jobs []*analysis.Job
	for _, p := range paths {
		if err := atomicfile.NotInput(out, p); err != nil {
			return err
		}
		job, err := load(p, "", analysis.Options{NoSequences: true, NoSiteTable: true})
		if err != nil {
			return err
		}
		jobs = append(jobs, job)
	}
	if err := report.WriteScaling(out, analysis.NewScaling(jobs, weak)); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "scaling page written to %s\n", out)
	return nil
}

// checkDot fails when --dot names a program that is not there; without
// --dot, a missing Graphviz is a warning on stderr (the report says so
// too): the report gives its graphs as DOT text.
func checkDot(path string, explicit bool, stderr io.Writer) error {
	if _, err := exec.LookPath(path); err == nil {
		return nil
	}
	if explicit {
		return fmt.Errorf("--dot %s: no such program (Graphviz's dot; leave --dot out to use the one on PATH)", path)
	}
	fmt.Fprintf(stderr, "mpiflow: %v: the report gives its graphs as DOT text\n", report.ErrNoDot)
	return nil
}

// parseWindow parses --window START:END into ns since the start of the
// run.
func parseWindow(s string) (from, to int64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("--window %q: want START:END, such as 0.5:2.5 or 500ms:2s", s)
	}
	if from, err = parseTraceTime("--window start", a); err != nil {
		return 0, 0, err
	}
	if to, err = parseTraceTime("--window end", b); err != nil {
		return 0, 0, err
	}
	if a == "" || b == "" || to <= from {
		return 0, 0, fmt.Errorf("--window %s: the end must be after the start", s)
	}
	return from, to, nil
}

// writeReport analyzes the profile in (groups of ranks of the given
// similarity, 0 for the default) and writes its report to out, with
// progress on a terminal.
func writeReport(ctx context.Context, out, in string, similarity float64, opt report.Options) error {
	bar := progress.New()
	defer bar.Done()
	// The compared run's variation within the run bounds the comparison's
	// noise as the baseline's does.
	job, err := analysis.Load(in, analysis.Options{Similarity: similarity, NoLoops: true, NoSequences: true,
		Variation: opt.Compare != nil, Progress: bar.Func()})
	if err != nil {
		return err
	}
	opt.Progress = bar.Func()
	return report.WriteFile(ctx, out, job, opt)
}
