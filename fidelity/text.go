package fidelity

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"mpiflow/internal/units"
)

// WriteText prints the report as a table, one line per rank block and one
// for all of them, then the partition comparison.
func (rep *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s: %d rank block(s), %d events, %d time slices\n", rep.File, len(rep.Ranks), rep.Events, rep.Slices)
	fmt.Fprintln(bw, "Rebuilt trace against the recorded one; errors are |rebuilt - recorded|, shares in percentage points of a slice.")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RANK\tTHREAD\tEVENTS\tORDER\tSTART ERR p50\tp90\tp99\tmax\tEND ERR p50\tp90\tp99\tmax\tMPI SHARE ERR\t(slice)\tCALL SHARE ERR\t(call, slice)\t")
	for _, r := range rep.Ranks {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%.2f pp\t%d\t%.2f pp\t%s, %d\t\n", r.Rank, r.Thread, r.Events, order(r),
			pctl(r.StartError), pctl(r.EndError), r.MaxMPIShareErrorPP, r.WorstMPISlice, r.MaxCallShareErrorPP, r.WorstCall, r.WorstSlice)
	}
	same := "same"
	switch {
	case rep.OrderIdentical:
	case rep.OrderUpToRuns:
		same = "same up to run lengths"
	case arrangedOnly(rep.Ranks):
		same = "arranged in intervals"
	default:
		same = "DIFFERS"
	}
	fmt.Fprintf(tw, "all\t\t%d\t%s\t%s\t%s\t%.2f pp\trank %d, %d\t%.2f pp\t%s, rank %d, %d\t\n", rep.Events, same,
		pctl(rep.StartError), pctl(rep.EndError), rep.MaxMPIShareErrorPP, rep.WorstMPIRank, rep.WorstMPISlice,
		rep.MaxCallShareErrorPP, rep.WorstCall, rep.WorstRank, rep.WorstSlice)
	tw.Flush()
	writeBudget(bw, rep.Ranks)
	fmt.Fprint(bw, "\nBest partitions (mpiflow aggregate):")
	for _, a := range rep.Aggregate {
		switch {
		case a.Same:
			fmt.Fprintf(bw, " p=%g same (%d aggregates);", a.P, a.Rebuilt)
		case a.Equivalent:
			fmt.Fprintf(bw, " p=%g equivalent (%d/%d aggregates, quality gap %.1e);", a.P, a.Rebuilt, a.Truth, a.QualityGap)
		default:
			fmt.Fprintf(bw, " p=%g DIFFER (%d/%d aggregates, quality gap %.1e);", a.P, a.Rebuilt, a.Truth, a.QualityGap)
		}
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

// writeBudget says what each rank block's sequences and timing take and,
// for those that did not fit the recording's budget, what was
// approximated.
func writeBudget(w io.Writer, ranks []RankResult) {
	fmt.Fprintln(w, "\nRecording budget (MPIFLOW_BUDGET): sequences + timing in the file; runs are those of polls (a call repeated), errors in events;")
	fmt.Fprintln(w, "arranged intervals keep every call's count and time but not the order of their branches (moved events: another call than recorded).")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "RANK\tTHREAD\tSEQUENCES\tTIMING\tBUDGET\tRUNS\tAPPROXIMATE\tERR p50\tp90\tmax\tARRANGED INTERVALS\tMOVED EVENTS\t")
	for _, r := range ranks {
		budget, runs, approx, errs, arranged := "none", "-", "0 (exact)", "-\t-\t-", "0\t0"
		if a := r.Budget; a != nil {
			budget = units.Bytes(float64(a.Budget))
			if !a.Fits() {
				budget += " (OVER)"
			}
			runs = strconv.FormatInt(a.Runs, 10)
			if a.Approximate > 0 {
				approx = strconv.FormatInt(a.Approximate, 10)
				errs = fmt.Sprintf("%d\t%d\t%d", a.ErrP50, a.ErrP90, a.ErrMax)
			}
			arranged = fmt.Sprintf("%d\t%d", a.Arranged, a.Moved)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Rank, r.Thread, units.Bytes(float64(r.Bytes.Sequences)),
			units.Bytes(float64(r.Bytes.Timing)), budget, runs, approx, errs, arranged)
	}
	tw.Flush()
}

// arrangedOnly tells whether every rank's order is the recorded one up to
// run lengths or up to the intervals its budget arranged.
func arrangedOnly(ranks []RankResult) bool {
	for _, r := range ranks {
		if !r.OrderIdentical && !r.OrderUpToRuns && (r.Budget == nil || r.Budget.Arranged == 0 || r.Events != r.TruthEvents) {
			return false
		}
	}
	return true
}

// order describes a rank's event order comparison.
func order(r RankResult) string {
	switch {
	case r.OrderIdentical:
		return "same"
	case r.OrderUpToRuns:
		return "same up to run lengths"
	case r.Budget != nil && r.Budget.Arranged > 0 && r.Events == r.TruthEvents:
		return fmt.Sprintf("arranged in %d intervals, from %d", r.Budget.Arranged, r.FirstMismatch)
	case r.Events != r.TruthEvents:
		return fmt.Sprintf("DIFFERS at %d (%d recorded)", r.FirstMismatch, r.TruthEvents)
	}
	return fmt.Sprintf("DIFFERS at %d", r.FirstMismatch)
}

// pctl formats percentiles as four table cells.
func pctl(p Percentiles) string {
	return duration(p.P50) + "\t" + duration(p.P90) + "\t" + duration(p.P99) + "\t" + duration(p.Max)
}

// duration formats ns with a unit that suits the value.
func duration(ns int64) string {
	switch {
	case ns < 1000:
		return strconv.FormatInt(ns, 10) + "ns"
	case ns < 1_000_000:
		return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + "µs"
	case ns < 1_000_000_000:
		return strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + "s"
}
