package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
	"mpiflow/loops"
)

func newLoopsCmd() *cobra.Command {
	var rankList string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "loops FILE",
		Short: "Find the loops of each rank and print the loop trees",
		Long: `loops finds the loops in the event flow graph of every rank (including
irreducible loops and calls repeated back to back), collapses each loop into
one loop node, and groups ranks whose collapsed graphs have the same
structure on every level (the groups of the report). For each group it
prints the loop tree of its first rank with iterations and the share of the
rank's time spent in each loop, averaged over the group's ranks. Loops are
numbered by first execution ("Loop N").

The summary table (like Table 1 of the event flow graph paper) gives the
average number of nodes of the uncollapsed graph and of the collapsed top
level, the reduction, and the share of time spent in loops.`,
		Example: `  mpiflow loops halo.1234.mpiflow
  mpiflow loops --rank 0-3 halo.1234.mpiflow
  mpiflow loops --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := load(args[0], rankList, analysis.Options{NoSequences: true})
			if err != nil {
				return err
			}
			out := loopsOf(job)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			return printLoops(cmd.OutOrStdout(), cmd.ErrOrStderr(), out)
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to include, e.g. 0-3,8 (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	return cmd
}

// loopsOutput is what `mpiflow loops` prints, also as JSON.
type loopsOutput struct {
	File       string              `json:"file"`
	Incomplete bool                `json:"incomplete"`
	Summary    loops.TableRow      `json:"summary"`
	Groups     []loopGroupOutput   `json:"groups"`
	Ranks      []loops.RankSummary `json:"ranks"`
	// Failed lists the ranks whose loop analysis failed, with the error;
	// they count as one level without loops.
	Failed []string          `json:"failed,omitempty"`
	header *flowgraph.Header // for the notes of the text output
}

// loopGroupOutput is a group of ranks with the same loop structure,
// numbered from 1 as in the report.
type loopGroupOutput struct {
	Number    int             `json:"number"`
	Signature string          `json:"signature"`
	Members   string          `json:"members"`
	Ranks     []rankThread    `json:"ranks"`
	Summary   loops.TableRow  `json:"summary"`
	Tree      []loops.TreeRow `json:"tree"`
}

type rankThread struct {
	Rank   int `json:"rank"`
	Thread int `json:"thread"`
}

// loopsOf presents the loop analysis of a job.
func loopsOf(job *analysis.Job) *loopsOutput {
	out := &loopsOutput{File: job.Path, Incomplete: job.Header.Incomplete, Summary: job.LoopTable, header: &job.Header}
	for _, r := range job.Ranks {
		out.Ranks = append(out.Ranks, r.Loops)
		if r.LoopErr != nil {
			out.Failed = append(out.Failed, fmt.Sprintf("%s: %v", r.Label, r.LoopErr))
		}
	}
	for gi, g := range job.Groups {
		grp := loopGroupOutput{Number: gi + 1, Signature: g.Signature, Members: job.Members(gi), Summary: g.Table, Tree: g.Tree}
		for _, m := range g.Members {
			r := job.Ranks[m]
			grp.Ranks = append(grp.Ranks, rankThread{r.Rank.Rank, r.Thread})
		}
		out.Groups = append(out.Groups, grp)
	}
	return out
}

func printLoops(w, errw io.Writer, out *loopsOutput) error {
	fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) with the same loop structure\n", out.File, len(out.Ranks), len(out.Groups))
	incompleteNote(w, out.header)
	for _, f := range out.Failed {
		fmt.Fprintf(errw, "mpiflow: loop analysis failed for %s; counted without loops\n", f)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ranks\tavg nodes\tavg top-level nodes\treduction\tavg loops\ttime in loops\t")
	row := func(label string, t loops.TableRow) {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f%%\t%.1f\t%.1f%%\t\n", label, t.AvgNodes, t.AvgTopNodes, t.ReductionPct, t.AvgLoops, t.LoopTimePct)
	}
	row(fmt.Sprintf("all (%d)", out.Summary.Ranks), out.Summary)
	if len(out.Groups) > 1 {
		for _, g := range out.Groups {
			row(fmt.Sprintf("group %d (%d)", g.Number, g.Summary.Ranks), g.Summary)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range out.Groups {
		fmt.Fprintf(w, "\n== group %d: rank(s) %s, signature %s\n", g.Number, g.Members, g.Signature)
		if len(g.Tree) == 0 {
			fmt.Fprintln(w, "no loops")
			continue
		}
		fmt.Fprintf(w, "loop tree of rank %d; iterations and time share averaged over the group's ranks\n", g.Ranks[0].Rank)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "loop\tranks\titerations\ttime %\tmin % (rank)\tmax % (rank)\ttime/iter(s)\tcalls/iter\theader")
		for _, r := range g.Tree {
			flags := ""
			if r.Irreducible {
				flags += " [irreducible]"
			}
			if r.SelfLoop {
				flags += " [self]"
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%s\t%.2f\t%.2f (%d)\t%.2f (%d)\t%s\t%s\t%s%s\n",
				strings.Repeat("  ", r.Depth-1), r.Name, r.Ranks, units.Count(r.AvgIterations),
				100*r.AvgShare, 100*r.MinShare, r.MinRank, 100*r.MaxShare, r.MaxRank,
				units.Seconds(r.TimePerIteration/1e9), units.PerIteration(r.CallsPerIteration), r.Header, flags)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
