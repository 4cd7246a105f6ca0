package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mpiflow/flowgraph"
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
one loop node, and groups ranks whose collapsed top-level graphs have the
same structure. For each group it prints the loop tree of its first rank
with iterations and the share of the rank's time spent in each loop, matched
across the group's ranks by the header's call site. Loops are numbered by
first execution ("Loop N").

The summary table (like Table 1 of the event flow graph paper) gives the
average number of nodes of the uncollapsed graph and of the collapsed top
level, the reduction, and the share of time spent in loops.`,
		Example: `  mpiflow loops halo.1234.mpiflow
  mpiflow loops --rank 0-3 halo.1234.mpiflow
  mpiflow loops --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ranks, err := parseRanks(rankList)
			if err != nil {
				return err
			}
			out, err := analyzeLoops(args[0], ranks)
			if err != nil {
				return err
			}
			if len(out.Ranks) == 0 {
				return fmt.Errorf("%s: no rank matches --rank %s", args[0], rankList)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			return printLoops(cmd.OutOrStdout(), out)
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
	header     *flowgraph.Header   // for the notes of the text output
}

type loopGroupOutput struct {
	Signature string          `json:"signature"`
	Ranks     []rankThread    `json:"ranks"`
	Summary   loops.TableRow  `json:"summary"`
	Tree      []loops.TreeRow `json:"tree"`
}

type rankThread struct {
	Rank   int `json:"rank"`
	Thread int `json:"thread"`
}

// analyzeLoops collapses the selected ranks of the file at path (all if
// ranks is nil) and groups them.
func analyzeLoops(path string, ranks map[int]bool) (*loopsOutput, error) {
	f, err := flowgraph.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []loops.RankLoops
	resolver := flowgraph.NewResolver()
	prog := newProgress("finding loops", len(f.Index))
	for i, e := range f.Index {
		prog.step(i + 1)
		if ranks != nil && !ranks[e.Rank] {
			continue
		}
		r, err := f.ReadRank(i)
		if err != nil {
			return nil, err
		}
		// Name loop headers by function, file and line when the objects
		// are here; unresolved ones keep object+offset.
		_ = resolver.ResolveAll(r.Graph.Sites)
		c, err := loops.Collapse(&r.Graph)
		if err != nil {
			return nil, fmt.Errorf("%s: rank %d thread %d: %w", path, r.Rank, r.Thread, err)
		}
		rs = append(rs, loops.RankLoops{Rank: r.Rank, Thread: r.Thread, Graph: &r.Graph, Collapsed: c})
	}
	prog.done()
	out := &loopsOutput{File: path, Incomplete: f.Header.Incomplete, header: &f.Header}
	for _, r := range rs {
		out.Ranks = append(out.Ranks, loops.Summarize(r))
	}
	out.Summary = loops.Table(out.Ranks)
	for _, g := range loops.GroupRanks(rs) {
		grp := loopGroupOutput{Signature: g.Signature, Tree: loops.GroupTree(rs, g.Members)}
		sums := make([]loops.RankSummary, len(g.Members))
		for k, m := range g.Members {
			grp.Ranks = append(grp.Ranks, rankThread{rs[m].Rank, rs[m].Thread})
			sums[k] = out.Ranks[m]
		}
		grp.Summary = loops.Table(sums)
		out.Groups = append(out.Groups, grp)
	}
	return out, nil
}

func printLoops(w io.Writer, out *loopsOutput) error {
	fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) with the same collapsed top level\n", out.File, len(out.Ranks), len(out.Groups))
	incompleteNote(w, out.header)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ranks\tavg nodes\tavg top-level nodes\treduction\tavg loops\ttime in loops\t")
	row := func(label string, t loops.TableRow) {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f%%\t%.1f\t%.1f%%\t\n", label, t.AvgNodes, t.AvgTopNodes, t.ReductionPct, t.AvgLoops, t.LoopTimePct)
	}
	row(fmt.Sprintf("all (%d)", out.Summary.Ranks), out.Summary)
	if len(out.Groups) > 1 {
		for i, g := range out.Groups {
			row(fmt.Sprintf("group %d (%d)", i+1, g.Summary.Ranks), g.Summary)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, g := range out.Groups {
		fmt.Fprintf(w, "\n== group %d: rank(s) %s, signature %s\n", i+1, formatRankThreads(g.Ranks), g.Signature)
		if len(g.Tree) == 0 {
			fmt.Fprintln(w, "no loops")
			continue
		}
		fmt.Fprintf(w, "loop tree of rank %s; iterations and time share averaged over the ranks with the same loop\n",
			formatRankThreads(g.Ranks[:1]))
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
			fmt.Fprintf(tw, "%s%s\t%d\t%.1f\t%.2f\t%.2f (%d)\t%.2f (%d)\t%s\t%.1f\t%s%s\n",
				strings.Repeat("  ", r.Depth-1), r.Name, r.Ranks, r.AvgIterations,
				100*r.AvgShare, 100*r.MinShare, r.MinRank, 100*r.MaxShare, r.MaxRank,
				seconds(int64(r.TimePerIteration)), r.CallsPerIteration, r.Header, flags)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// formatRankThreads formats ranks compactly: consecutive ranks of thread 0
// as ranges ("0-3,8"), other threads as rank.thread.
func formatRankThreads(rs []rankThread) string {
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		if rs[i].Thread == 0 {
			for j+1 < len(rs) && rs[j+1].Thread == 0 && rs[j+1].Rank == rs[j].Rank+1 {
				j++
			}
		}
		switch {
		case rs[i].Thread != 0:
			parts = append(parts, strconv.Itoa(rs[i].Rank)+"."+strconv.Itoa(rs[i].Thread))
		case j > i:
			parts = append(parts, strconv.Itoa(rs[i].Rank)+"-"+strconv.Itoa(rs[j].Rank))
		default:
			parts = append(parts, strconv.Itoa(rs[i].Rank))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
