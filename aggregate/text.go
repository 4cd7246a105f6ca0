package aggregate

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText prints a readable summary: the partition's size and quality,
// its aggregates per hierarchy level, the coarse phases, the top largest
// aggregates and the significant p values if computed.
func (res *Result) WriteText(w io.Writer, top int) error {
	part := res.Partition
	bw := bufio.NewWriter(w)
	w = bw
	state := "state"
	if res.Variables {
		state = "variable"
	}
	fmt.Fprintf(w, "%d resources, %d slices of %.4g s (%.4g s to %.4g s), %d %ss, mode %s\n",
		res.Resources, res.Slices, res.SliceWidth, res.Start, res.End, len(res.States), state, res.Mode)
	fmt.Fprintf(w, "p = %.4g: %d aggregates, gain %.4g (%.1f%% of the full aggregate's), loss %.4g (%.1f%%)\n",
		part.P, len(part.Aggregates), part.Gain, 100*part.NormGain, part.Loss, 100*part.NormLoss)

	fmt.Fprintln(w, "\nAggregates per hierarchy level:")
	counts := make([]int, len(res.Levels))
	for _, a := range part.Aggregates {
		if a.Depth < len(counts) {
			counts[a.Depth]++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for d, n := range counts {
		fmt.Fprintf(tw, "  level %d\t(e.g. %s)\t%d\n", d, res.Levels[d], n)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nPhases (all ranks together):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  START (s)\tEND (s)\tDOMINANT %s\tSHARE\tNEXT %sS\n", strings.ToUpper(state), strings.ToUpper(state))
	for _, a := range res.Phases {
		fmt.Fprintf(tw, "  %.4g\t%.4g\t%s\t%.1f%%\t%s\n", a.Start, a.End, modeName(a), 100*a.ModeShare, nextStates(res.States, a, 2))
	}
	tw.Flush()

	aggs := slices.Clone(part.Aggregates)
	// The largest aggregates (resources x slices) first: they summarize
	// the most of the run.
	slices.SortStableFunc(aggs, func(x, y Aggregate) int {
		return (y.Resources*(y.Last-y.First+1) - x.Resources*(x.Last-x.First+1))
	})
	fmt.Fprintf(w, "\nAggregates, largest first (%d of %d; --top, --json for all):\n", min(top, len(aggs)), len(aggs))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tRANKS\tSTART (s)\tEND (s)\tMODE\tSHARE")
	for _, a := range aggs[:min(top, len(aggs))] {
		fmt.Fprintf(tw, "  %s\t%d\t%.4g\t%.4g\t%s\t%.1f%%\n", a.Path, a.Resources, a.Start, a.End, modeName(a), 100*a.ModeShare)
	}
	tw.Flush()

	if len(res.PValues) > 0 {
		fmt.Fprintf(w, "\nSignificant p values (suggested p = %.4g):\n", res.SuggestedP)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  FROM P\tAGGREGATES\tGAIN\tLOSS\tNORM GAIN\tNORM LOSS")
		for _, v := range res.PValues {
			fmt.Fprintf(tw, "  %.4f\t%d\t%.4g\t%.4g\t%.3f\t%.3f\n", v.P, v.Aggregates, v.Gain, v.Loss, v.NormGain, v.NormLoss)
		}
		tw.Flush()
	}
	return bw.Flush()
}

// nextStates lists the k states after the mode by proportion.
func nextStates(states []string, a Aggregate, k int) string {
	idx := make([]int, len(states))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		switch {
		case a.Proportions[x] > a.Proportions[y]:
			return -1
		case a.Proportions[x] < a.Proportions[y]:
			return 1
		}
		return 0
	})
	var parts []string
	for _, x := range idx {
		if x == a.Mode || a.Proportions[x] <= 0 {
			continue
		}
		if len(parts) == k {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", states[x], 100*a.Proportions[x]))
	}
	return strings.Join(parts, ", ")
}

// modeName is the aggregate's mode state, "(idle)" if it holds no state.
func modeName(a Aggregate) string {
	if a.Mode < 0 {
		return "(idle)"
	}
	return a.ModeState
}
