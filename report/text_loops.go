package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
	"mpiflow/loops"
)

// PrintLoops writes the loop analysis of a job: the summary table (as
// Table 1 of the event flow graph paper) and the loop tree of each group
// of ranks; the ranks whose analysis failed are told on errw.
func PrintLoops(w, errw io.Writer, job *analysis.Job, f Format) error {
	out := loopsOf(job)
	return present(w, f, out, func(w io.Writer) error { return printLoops(w, errw, out) })
}

// LoopsOutput is what PrintLoops writes, also as JSON.
type LoopsOutput struct {
	File       string              `json:"file"`
	Incomplete bool                `json:"incomplete"`
	Similarity float64             `json:"similarity"`
	Summary    loops.TableRow      `json:"summary"`
	Groups     []LoopGroup         `json:"groups"`
	Ranks      []loops.RankSummary `json:"ranks"`
	// Failed lists the ranks whose loop analysis failed, with the error;
	// they count as one level without loops.
	Failed []string          `json:"failed,omitempty"`
	header *flowgraph.Header // for the notes of the text output
}

// LoopGroup is a group of ranks of similar structure, numbered from
// 1 as in the report.
type LoopGroup struct {
	Number int `json:"number"`
	// Signature is the representative's structure's; Structures counts
	// the members' different structures.
	Signature      string          `json:"signature"`
	Structures     int             `json:"structures"`
	Members        string          `json:"members"`
	Representative RankThread      `json:"representative"`
	Ranks          []GroupMember   `json:"ranks"`
	Summary        loops.TableRow  `json:"summary"`
	Tree           []loops.TreeRow `json:"tree"`
}

// RankThread is a block of a job file: a rank, or a thread of it.
type RankThread struct {
	Rank   int `json:"rank"`
	Thread int `json:"thread"`
}

// GroupMember is a member of a group with its similarity to the group's
// representative (1 - analysis.Group.Distances).
type GroupMember struct {
	RankThread
	Similarity float64 `json:"similarity"`
}

// loopsOf presents the loop analysis of a job.
func loopsOf(job *analysis.Job) *LoopsOutput {
	out := &LoopsOutput{File: job.Path, Incomplete: job.Header.Incomplete, Similarity: job.Similarity, Summary: job.LoopTable, header: &job.Header}
	for _, r := range job.Ranks {
		out.Ranks = append(out.Ranks, r.Loops)
		if r.LoopErr != nil {
			out.Failed = append(out.Failed, fmt.Sprintf("%s: %v", r.Label, r.LoopErr))
		}
	}
	for gi, g := range job.Groups {
		rep := job.Ranks[g.Rep]
		grp := LoopGroup{Number: gi + 1, Signature: g.Signature, Structures: g.Structures, Members: job.Members(gi),
			Representative: RankThread{rep.Rank.Rank, rep.Thread}, Summary: g.Table, Tree: g.Tree}
		for k, m := range g.Members {
			r := job.Ranks[m]
			grp.Ranks = append(grp.Ranks, GroupMember{RankThread{r.Rank.Rank, r.Thread}, 1 - g.Distances[k]})
		}
		out.Groups = append(out.Groups, grp)
	}
	return out
}

// printLoops prints the summary table and the loop tree of each group.
func printLoops(w, errw io.Writer, out *LoopsOutput) error {
	if out.Similarity >= 1 {
		fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) with the same loop structure\n", out.File, len(out.Ranks), len(out.Groups))
	} else {
		fmt.Fprintf(w, "# %s: %d rank(s) in %d group(s) of similar structure (similarity %.2f)\n", out.File, len(out.Ranks), len(out.Groups), out.Similarity)
	}
	IncompleteNote(w, out.header)
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
func (r RankThread) String() string {
	if r.Thread != 0 {
		return fmt.Sprintf("%d.%d", r.Rank, r.Thread)
	}
	return strconv.Itoa(r.Rank)
}
