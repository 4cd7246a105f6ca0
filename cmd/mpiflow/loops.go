package main

import (
	"fmt"
	"io"
	"strconv"
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
	var similarity float64
	cmd := &cobra.Command{
		Use:   "loops FILE",
		Short: "Find the loops of each rank and print the loop trees",
		Long: `loops finds the loops in the event flow graph of every rank (including
irreducible loops and calls repeated back to back), collapses each loop into
one loop node, and groups ranks of similar structure (the groups of the
report): a rank joins a group when at most 1 - --similarity of its time,
calls and bytes is on calls or transitions (keyed by call site) that the
group's representative does not have, and the representative's on ones the
rank does not have; --similarity 1 groups only ranks of the same structure
on every level. The representative is the member closest to the others.
For each group it prints the loop tree of the representative, then the loops
only other members have, with iterations and the share of the rank's time
spent in each loop averaged over the members that have it, its minimum and
maximum, and which ranks have it when not all do. Loops are numbered by
first execution ("Loop N").

The summary table (like Table 1 of the event flow graph paper) gives the
average number of nodes of the uncollapsed graph and of the collapsed top
level, the reduction, and the share of time spent in loops.`,
		Example: `  mpiflow loops halo.1234.mpiflow
  mpiflow loops --rank 0-3 halo.1234.mpiflow
  mpiflow loops --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSimilarity(similarity); err != nil {
				return err
			}
			job, err := load(args[0], rankList, analysis.Options{NoSequences: true, NoSiteTable: true, Similarity: similarity})
			if err != nil {
				return err
			}
			out := loopsOf(job)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			return printLoops(terminalText(cmd.OutOrStdout()), cmd.ErrOrStderr(), out)
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to include, e.g. 0-3,8 (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	similarityFlag(cmd, &similarity)
	return cmd
}

// loopsOutput is what `mpiflow loops` prints, also as JSON.
type loopsOutput struct {
	File       string              `json:"file"`
	Incomplete bool                `json:"incomplete"`
	Similarity float64             `json:"similarity"`
	Summary    loops.TableRow      `json:"summary"`
	Groups     []loopGroupOutput   `json:"groups"`
	Ranks      []loops.RankSummary `json:"ranks"`
	// Failed lists the ranks whose loop analysis failed, with the error;
	// they count as one level without loops.
	Failed []string          `json:"failed,omitempty"`
	header *flowgraph.Header // for the notes of the text output
}

// loopGroupOutput is a group of ranks of similar structure, numbered from
// 1 as in the report.
type loopGroupOutput struct {
	Number int `json:"number"`
	// Signature is the representative's structure's; Structures counts
	// the members' different structures.
	Signature      string          `json:"signature"`
	Structures     int             `json:"structures"`
	Members        string          `json:"members"`
	Representative rankThread      `json:"representative"`
	Ranks          []groupMember   `json:"ranks"`
	Summary        loops.TableRow  `json:"summary"`
	Tree           []loops.TreeRow `json:"tree"`
}

type rankThread struct {
	Rank   int `json:"rank"`
	Thread int `json:"thread"`
}

// groupMember is a member of a group with its similarity to the group's
// representative (1 - analysis.Group.Distances).
type groupMember struct {
	rankThread
	Similarity float64 `json:"similarity"`
}

// loopsOf presents the loop analysis of a job.
func loopsOf(job *analysis.Job) *loopsOutput {
	out := &loopsOutput{File: job.Path, Incomplete: job.Header.Incomplete, Similarity: job.Similarity, Summary: job.LoopTable, header: &job.Header}
	for _, r := range job.Ranks {
		out.Ranks = append(out.Ranks, r.Loops)
		if r.LoopErr != nil {
			out.Failed = append(out.Failed, fmt.Sprintf("%s: %v", r.Label, r.LoopErr))
		}
	}
	for gi, g := range job.Groups {
		rep := job.Ranks[g.Rep]
		grp := loopGroupOutput{Number: gi + 1, Signature: g.Signature, Structures: g.Structures, Members: job.Members(gi),
			Representative: rankThread{rep.Rank.Rank, rep.Thread}, Summary: g.Table, Tree: g.Tree}
		for k, m := range g.Members {
			r := job.Ranks[m]
			grp.Ranks = append(grp.Ranks, groupMember{rankThread{r.Rank.Rank, r.Thread}, 1 - g.Distances[k]})
		}
		out.Groups = append(out.Groups, grp)
	}
	return out
}

func printLoops(w, errw io.Writer, out *loopsOutput) error {
	if out.Similarity >= 1 {
		fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) with the same loop structure\n", out.File, len(out.Ranks), len(out.Groups))
	} else {
		fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) of similar structure (similarity %.2f)\n", out.File, len(out.Ranks), len(out.Groups), out.Similarity)
	}
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
		if g.Structures > 1 {
			least := 1.0
			for _, m := range g.Ranks {
				least = min(least, m.Similarity)
			}
			fmt.Fprintf(w, "%d structures; representative rank %s; least similar member %.3f\n", g.Structures, g.Representative, least)
		}
		if len(g.Tree) == 0 {
			fmt.Fprintln(w, "no loops")
			continue
		}
		fmt.Fprintf(w, "loop tree of rank %s; iterations and time share averaged over the ranks that have each loop\n", g.Representative)
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
			ranks := strconv.Itoa(r.Ranks)
			if r.Where != "" {
				ranks += " (" + r.Where + ")"
			}
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%.2f\t%.2f (%d)\t%.2f (%d)\t%s\t%s\t%s%s\n",
				strings.Repeat("  ", r.Depth-1), r.Name, ranks, units.Count(r.AvgIterations),
				100*r.AvgShare, 100*r.MinShare, r.MinRank, 100*r.MaxShare, r.MaxRank,
				units.Seconds(r.TimePerIteration/1e9), units.PerIteration(r.CallsPerIteration), r.Header, flags)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// String formats a block as "3", or "3.1" for thread 1.
func (r rankThread) String() string {
	if r.Thread != 0 {
		return fmt.Sprintf("%d.%d", r.Rank, r.Thread)
	}
	return strconv.Itoa(r.Rank)
}
