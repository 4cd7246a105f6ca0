package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/internal/atomicfile"
	"mpiflow/report"
)

func newGraphCmd() *cobra.Command {
	var rank, thread, loop int
	var color, format, out, dotPath, scale string
	cmd := &cobra.Command{
		Use:   "graph FILE",
		Short: "Write the loop-collapsed event flow graph of one rank as DOT or SVG",
		Long: `graph writes one level of a rank's loop-collapsed event flow graph: the top
level, or with --loop the inside of one loop. Nodes are labeled as in the
event-flow-graph paper ("MPI_Allreduce 8B cs=68 t=31.69"), edges with count
and time ("200 (0.01)"), back edges (from the end of an iteration to the
loop's header) dashed; both are colored yellow to red by --color, on one
scale for all levels of the rank (--scale rank, so that the inside of a
loop with little time stays pale) or scaled to the drawn level alone
(--scale level). SVG is laid out by Graphviz dot.`,
		Example: `  mpiflow graph halo.1234.mpiflow --rank 0 > rank0.dot
  mpiflow graph halo.1234.mpiflow --rank 3 --loop 2 --color count --format svg -o loop2.svg
  mpiflow graph halo.1234.mpiflow --rank 0 --loop 4 --scale level`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "dot" && format != "svg" {
				return fmt.Errorf("unknown format %q (known: dot, svg)", format)
			}
			if scale != report.ScaleRank && scale != report.ScaleLevel {
				return fmt.Errorf("unknown scale %q (known: %s, %s)", scale, report.ScaleRank, report.ScaleLevel)
			}
			if err := errors.Join(checkInt("rank", rank, 0, -1), checkInt("thread", thread, 0, -1)); err != nil {
				return err
			}
			job, err := load(args[0], "", analysis.Options{Ranks: map[int]bool{rank: true}, NoSequences: true, NoGraphs: true, NoSiteTable: true})
			if err != nil {
				return err
			}
			if !slices.Contains(job.Metrics, color) {
				return fmt.Errorf("unknown color metric %q for this file (known: %s)", color, strings.Join(job.Metrics, ", "))
			}
			i := job.FindRank(rank, thread)
			if i < 0 {
				return fmt.Errorf("%s: no rank %d thread %d", args[0], rank, thread)
			}
			r := job.Ranks[i]
			if r.LoopErr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: loop analysis failed (%v); writing the whole graph\n", r.LoopErr)
				loop = 0
			}
			if loop < 0 || loop >= len(r.Levels) {
				return fmt.Errorf("rank %d has no loop %d (it has loops 1 to %d)", rank, loop, len(r.Levels)-1)
			}
			lg := &r.Levels[loop]
			title := fmt.Sprintf("%s: %s", r.Label, lg.Name)
			opt := report.DOTOptions{Metric: color, Title: title}
			if scale == report.ScaleRank {
				opt.Scale = report.RankScale(r.Levels, job.Metrics, color)
			}
			d := report.DOT(lg, job.Metrics, opt)
			report.IncompleteNote(cmd.ErrOrStderr(), &job.Header)
			if out != "-" {
				if err := atomicfile.NotInput(out, args[0]); err != nil {
					return err
				}
			}
			return writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) error {
				if format == "dot" {
					_, err := io.WriteString(w, d)
					return err
				}
				svgs, err := report.Render(cmd.Context(), dotPath, []string{d})
				if err != nil {
					return err
				}
				_, err = w.Write(svgs[0])
				return err
			})
		},
	}
	cmd.Flags().IntVar(&rank, "rank", 0, "rank to draw")
	cmd.Flags().IntVar(&thread, "thread", 0, "thread of the rank")
	cmd.Flags().IntVar(&loop, "loop", 0, "loop to draw (0: the top level)")
	cmd.Flags().StringVar(&color, "color", analysis.MetricTime, "metric coloring nodes and edges: time, count, bytes (and ipc, mips, mflops, missrate with counters)")
	cmd.Flags().StringVar(&scale, "scale", report.ScaleRank, "color scale: rank (one for all levels of the rank) or level (the drawn level alone)")
	cmd.Flags().StringVar(&format, "format", "dot", "output format: dot or svg")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default standard output)")
	cmd.Flags().StringVar(&dotPath, "dot", "dot", "Graphviz dot executable (for --format svg)")
	return cmd
}
