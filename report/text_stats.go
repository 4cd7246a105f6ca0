package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

// StatsParts are the tables PrintStats adds to the banner and the table
// of calls.
type StatsParts struct {
	Sites  bool // the call sites (the job loaded with its site table)
	Matrix bool // the point-to-point traffic from rank to rank
}

// PrintStats writes the statistics of a job: an IPM-style banner and the
// table of MPI calls by time, with the parts asked for.
func PrintStats(w io.Writer, job *analysis.Job, f Format, parts StatsParts) error {
	if f == FormatJSON {
		out := statsOutput(job)
		if parts.Sites {
			out.Sites = job.CallSites
		}
		if parts.Matrix {
			out.Comm = job.Comm
		}
		return WriteJSON(w, out)
	}
	w = TerminalText(w)
	if err := printStats(w, job); err != nil {
		return err
	}
	if parts.Sites {
		if err := printSites(w, job); err != nil {
			return err
		}
	}
	if parts.Matrix {
		return printMatrix(w, job.Comm, matrixRanks, matrixPairs)
	}
	return nil
}

// StatsOutput is what PrintStats writes as JSON: the banner's numbers,
// the calls, the ranks and the parts asked for.
type StatsOutput struct {
	Header     *flowgraph.Header    `json:"header"`
	MPITime    int64                `json:"mpi_ns"`
	WallTime   int64                `json:"wall_ns_sum"`
	MPIPercent float64              `json:"mpi_percent"`
	TotalBytes int64                `json:"bytes"`
	Calls      []flowgraph.CallStat `json:"calls"`
	Ranks      []flowgraph.RankStat `json:"ranks"`
	// Spread is each quantity over the ranks, as IPM's banner.
	Spread      []analysis.Spread `json:"spread"`
	Hosts       []string          `json:"hosts"`
	Incomplete  bool              `json:"incomplete"`
	RanksInFile int               `json:"ranks_in_file"`
	// FileBytes are the bytes of the selected ranks' blocks by part, and
	// of the rest of the file.
	FileBytes flowgraph.FileBytes `json:"file_bytes"`
	// Budget sums up the recording budget (nil: none).
	Budget *analysis.BudgetSummary `json:"budget,omitempty"`
	// Sites are the call sites (with --sites).
	Sites []analysis.SiteStat `json:"sites,omitempty"`
	// Comm is the point-to-point traffic (with --matrix).
	Comm *analysis.CommMatrix `json:"comm,omitempty"`
	// Regions are the regions of MPI_Pcontrol, if any.
	Regions []analysis.Region `json:"regions,omitempty"`
}

// statsOutput presents the statistics of a job.
func statsOutput(job *analysis.Job) StatsOutput {
	h, s := &job.Header, job.Summary
	mpi, wall, bytes := s.Totals()
	out := StatsOutput{Header: h, MPITime: mpi, WallTime: wall, MPIPercent: analysis.Percent(mpi, wall), TotalBytes: bytes,
		Calls: job.Calls, Ranks: s.Ranks, Spread: job.Spreads(), Hosts: h.DistinctHosts(), Incomplete: h.Incomplete, RanksInFile: h.NumRanks,
		FileBytes: job.FileBytes, Regions: job.Regions}
	if job.Budget.Blocks > 0 {
		out.Budget = &job.Budget
	}
	return out
}

// printStats prints the banner of a job and its table of calls.
func printStats(w io.Writer, job *analysis.Job) error {
	h, s, fb := &job.Header, job.Summary, job.FileBytes
	mpi, wall, bytes := s.Totals()
	hosts := h.DistinctHosts()
	line := strings.Repeat("#", 78)
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, "# command   : %s\n", OneLine(strings.Join(h.Command, " ")))
	if h.Executable != "" {
		fmt.Fprintf(w, "# exe       : %s\n", OneLine(h.Executable))
	}
	if len(h.Env) > 0 {
		fmt.Fprintf(w, "# env       : %s\n", OneLine(strings.Join(h.Env, " ")))
	}
	if h.StartUnixNano != 0 {
		fmt.Fprintf(w, "# start     : %s\n", time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "# mpi_tasks : %d on %d host(s)   wallclock : %s s\n", h.NumRanks, len(hosts), units.NS(h.Wallclock))
	fmt.Fprintf(w, "# %%mpi      : %.2f (after MPI_Init)   total bytes: %s\n", analysis.Percent(mpi, wall), units.Bytes(float64(bytes)))
	fmt.Fprintf(w, "# mpi lib   : %s\n", OneLine(fmt.Sprintf("%s %s   clock: %s", h.MPILibrary, h.MPIVersion, h.ClockSource)))
	if len(h.Counters) > 0 {
		fmt.Fprintf(w, "# counters  : %s\n", OneLine(strings.Join(h.Counters, ",")))
	}
	fmt.Fprintf(w, "# file      : %s (graph %s, sequences %s, timing %s, other %s)\n", units.Bytes(float64(fb.Total())),
		units.Bytes(float64(fb.Graph)), units.Bytes(float64(fb.Sequences)), units.Bytes(float64(fb.Timing)), units.Bytes(float64(fb.Other)))
	if b := job.Budget; b.Blocks > 0 {
		fmt.Fprintf(w, "# budget    : %s a rank for sequences and timing, %d of %d over it; %s\n", units.Bytes(float64(b.Budget)),
			b.Over, b.Blocks, runLengths(b))
	}
	selected := make(map[int]bool)
	for _, r := range s.Ranks {
		selected[r.Rank] = true
	}
	if len(selected) != h.NumRanks {
		fmt.Fprintf(w, "# selected  : %d of %d rank(s)\n", len(selected), h.NumRanks)
	}
	IncompleteNote(w, h)
	if sp := job.Spreads(); len(sp) > 0 {
		// IPM's spread over the ranks, with the ranks of the extremes.
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\t[total]\t<avg>\tmin\t(rank)\tmax\t(rank)\t")
		for _, q := range sp {
			f := q.Format
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t\n", q.Name, f(q.Total), f(q.Mean), f(q.Min), q.MinRank, f(q.Max), q.MaxRank)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "#")
		for _, l := range strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprint(w, "# "+strings.TrimPrefix(l, "  "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, line)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "call\tcount\ttotal(s)\tavg(s)\tmin(s)\tmax(s)\tbytes\t%mpi\t%wall\t")
	for _, c := range job.CallTable() {
		shares := fmt.Sprintf("%.2f\t%.2f", c.MPIPct, c.WallPct)
		if c.StartUp {
			shares = "-\t-" // outside the measured span, as in IPM
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Call, c.Count, units.NS(c.Time.Total),
			units.NS(c.Avg), units.NS(c.Time.Min), units.NS(c.Time.Max), units.Bytes(float64(c.Bytes)), shares)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printRegions(w, job.Regions)
}

// printRegions prints the regions of MPI_Pcontrol as IPM does: the time
// inside each, over the ranks and its least and largest on a rank, and
// the MPI time and calls within it; nested regions indented under the
// one they were entered in.
func printRegions(w io.Writer, regions []analysis.Region) error {
	if len(regions) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	// Names left-aligned in one padded cell, numbers right-aligned.
	const title = "region (MPI_Pcontrol)"
	names := make([]string, len(regions))
	width := len(title)
	for i, r := range regions {
		names[i] = strings.Repeat("  ", len(r.Path)-1) + OneLine(r.Name)
		if r.Unclosed > 0 {
			names[i] += fmt.Sprintf(" (%d not left)", r.Unclosed)
		}
		width = max(width, utf8.RuneCountInString(names[i]))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	// With counters, the compute phases' IPC and Gflop/s, as the banner.
	counters := slices.ContainsFunc(regions, func(r analysis.Region) bool { return r.IPC > 0 || r.Gflops > 0 })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tranks\tentries\twall(s)\tmin(s)\t(rank)\tmax(s)\t(rank)\tmpi(s)\t%%mpi\tcalls\t", pad(title))
	if counters {
		fmt.Fprint(tw, "IPC\tGflop/s\t")
	}
	fmt.Fprintln(tw, "most MPI time\t")
	for i, r := range regions {
		top := "-"
		if len(r.ByCall) > 0 {
			top = r.ByCall[0].Call
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%d\t%s\t%.2f\t%d\t", pad(names[i]), r.RankList, r.Entries, units.NS(r.Wall),
			units.NS(r.WallMin), r.MinRank, units.NS(r.WallMax), r.MaxRank, units.NS(r.MPI), r.MPIPercent(), r.Calls)
		if counters {
			fmt.Fprintf(tw, "%.2f\t%.3g\t", r.IPC, r.Gflops)
		}
		fmt.Fprintf(tw, "%s\t\n", top)
	}
	return tw.Flush()
}

// runLengths says how many poll run lengths a budget approximated, and in
// how many intervals it gave up the order.
func runLengths(b analysis.BudgetSummary) string {
	if b.Approximate == 0 {
		return "run lengths exact"
	}
	s := fmt.Sprintf("%d of %d poll run lengths approximate (order exact up to them; largest error %d events)",
		b.Approximate, b.Runs, b.ErrMax)
	if b.Arranged > 0 {
		s = fmt.Sprintf("%d of %d poll run lengths approximate (largest error %d events); order arranged in %d timing intervals (%d events moved, counts exact)",
			b.Approximate, b.Runs, b.ErrMax, b.Arranged, b.Moved)
	}
	return s
}

// printSites prints the table of call sites.
func printSites(w io.Writer, job *analysis.Job) error {
	fmt.Fprintln(w)
	if job.ResolveErr != nil {
		fmt.Fprintf(w, "# some call sites are shown as object+offset: %v\n", job.ResolveErr)
	}
	// Call and site left-aligned in one padded cell, numbers right-aligned.
	callW, width := len("call"), 0
	for _, s := range job.CallSites {
		callW = max(callW, len(s.Call))
	}
	for _, s := range job.CallSites {
		width = max(width, callW+2+len(siteName(s.Site)))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tcount\ttotal(s)\tavg(s)\tbytes\tranks\t\n", width, fmt.Sprintf("%-*s  site", callW, "call"))
	for _, s := range job.CallSites {
		ranks := s.RankList
		if len(ranks) > 40 {
			ranks = ranks[:strings.LastIndexByte(ranks[:40], ',')+1] + "..."
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t%s\t%d (%s)\t\n", width, fmt.Sprintf("%-*s  %s", callW, s.Call, siteName(s.Site)), s.Count, units.NS(s.Time.Total),
			units.NS(s.Avg()), units.Bytes(float64(s.Bytes)), s.Ranks, ranks)
	}
	return tw.Flush()
}

// siteName is a call site label for tables, "-" without a site.
func siteName(label string) string {
	if label == "" {
		return "-"
	}
	return label
}

// The matrix is printed whole up to matrixRanks ranks (columns of a
// terminal), as its matrixPairs busiest pairs beyond.
const (
	matrixRanks = 16
	matrixPairs = 20
)

// printMatrix prints the point-to-point traffic of m: bytes from the row's
// rank to the column's, or the busiest pairs when there are more than
// maxRanks ranks.
func printMatrix(w io.Writer, m *analysis.CommMatrix, maxRanks, maxPairs int) error {
	total := m.Total()
	fmt.Fprintf(w, "\n# point-to-point traffic at the sender: %d messages, %s", total.Count, units.Bytes(float64(total.Bytes)))
	if m.Unattributed.Count > 0 {
		fmt.Fprintf(w, "; without a known destination: %d messages, %s", m.Unattributed.Count, units.Bytes(float64(m.Unattributed.Bytes)))
	}
	fmt.Fprintln(w)
	if m.Estimated {
		fmt.Fprintln(w, "# some bytes are estimated from a call site's mean message size")
	}
	if len(m.Cells) == 0 {
		fmt.Fprintln(w, "# no point-to-point messages with a known destination")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if m.Size <= maxRanks {
		cells := make(map[[2]int]int64, len(m.Cells))
		for _, c := range m.Cells {
			cells[[2]int{c.From, c.To}] = c.Bytes
		}
		fmt.Fprint(tw, "from\\to\t")
		for to := 0; to < m.Size; to++ {
			fmt.Fprintf(tw, "%d\t", to)
		}
		fmt.Fprintln(tw)
		for from := 0; from < m.Size; from++ {
			fmt.Fprintf(tw, "%d\t", from)
			for to := 0; to < m.Size; to++ {
				if b, ok := cells[[2]int{from, to}]; ok {
					fmt.Fprintf(tw, "%s\t", units.Bytes(float64(b)))
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		return tw.Flush()
	}
	pairs := slices.Clone(m.Cells)
	slices.SortStableFunc(pairs, func(a, b analysis.CommCell) int { return cmp.Compare(b.Bytes, a.Bytes) })
	if len(pairs) > maxPairs {
		fmt.Fprintf(w, "# the %d busiest of %d pairs of %d ranks (--json for all)\n", maxPairs, len(pairs), m.Size)
		pairs = pairs[:maxPairs]
	}
	fmt.Fprintln(tw, "from\tto\tmessages\tbytes\t")
	for _, c := range pairs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t\n", c.From, c.To, c.Count, units.Bytes(float64(c.Bytes)))
	}
	return tw.Flush()
}
