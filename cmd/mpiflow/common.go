package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/progress"
	"mpiflow/report"
)

// outputFormat is the presenters' format for a --json flag.
func outputFormat(asJSON bool) report.Format {
	if asJSON {
		return report.FormatJSON
	}
	return report.FormatText
}

// parseRanks parses a rank list such as "0-3,8,10-11" into the set of the
// ranks of f it names; an empty string selects all ranks (nil). Ranks that
// f does not hold are left out, so that no range, however large, costs
// more than the file's blocks; a list that names none of them is an error.
func parseRanks(s string, f *flowgraph.File) (map[int]bool, error) {
	if s == "" {
		return nil, nil
	}
	type span struct{ a, b int }
	var spans []span
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad rank list %q: %q is not a rank", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("bad rank list %q: %q is not a range", s, part)
			}
		}
		spans = append(spans, span{a, b})
	}
	set := make(map[int]bool)
	for _, e := range f.Index {
		for _, sp := range spans {
			if e.Rank >= sp.a && e.Rank <= sp.b {
				set[e.Rank] = true
			}
		}
	}
	if len(set) == 0 {
		var have []int
		for _, e := range f.Index {
			have = append(have, e.Rank)
		}
		slices.Sort(have)
		return nil, fmt.Errorf("%s: no rank matches --rank %s (the file has ranks %s)", f.Path, s, analysis.RankRanges(slices.Compact(have)))
	}
	return set, nil
}

// load analyzes the job file at path with the ranks of rankList (a
// --rank flag) selected, showing progress on a terminal.
func load(path, rankList string, opt analysis.Options) (*analysis.Job, error) {
	if rankList != "" {
		f, err := flowgraph.Open(path)
		if err != nil {
			return nil, err
		}
		opt.Ranks, err = parseRanks(rankList, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	bar := progress.New()
	defer bar.Done()
	opt.Progress = bar.Func()
	return analysis.Load(path, opt)
}

// checkInt fails unless lo <= v <= hi (hi < lo: no upper bound), naming
// the flag.
func checkInt(flag string, v, lo, hi int) error {
	switch {
	case hi < lo && v < lo:
		return fmt.Errorf("--%s %d: want at least %d", flag, v, lo)
	case hi >= lo && (v < lo || v > hi):
		return fmt.Errorf("--%s %d: want %d to %d", flag, v, lo, hi)
	}
	return nil
}

// checkOpen fails unless v is a number strictly between lo and hi (NaN
// compares false with everything, so it fails too), naming the flag.
func checkOpen(flag string, v, lo, hi float64) error {
	if !(v > lo && v < hi) {
		return fmt.Errorf("--%s %v: want a number greater than %v and less than %v", flag, v, lo, hi)
	}
	return nil
}

// similarityFlag adds --similarity, the analysis.Options.Similarity of the
// groups of ranks, to cmd.
func similarityFlag(cmd *cobra.Command, v *float64) {
	cmd.Flags().Float64Var(v, "similarity", analysis.DefaultSimilarity,
		"how similar the structure of a rank must be to its group's representative (0 to 1; 1: the same structure)")
}

// checkSimilarity fails unless 0 < v <= 1, naming the flag.
func checkSimilarity(v float64) error {
	if !(v > 0 && v <= 1) {
		return fmt.Errorf("--similarity %v: want a number greater than 0 and at most 1", v)
	}
	return nil
}
