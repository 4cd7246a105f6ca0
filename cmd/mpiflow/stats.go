package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"mpiflow/flowgraph"
)

func newStatsCmd() *cobra.Command {
	var rankList string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats FILE",
		Short: "Print the job banner and a table of MPI calls by time",
		Long: `stats prints an IPM-style banner (command, ranks, hosts, wallclock, %MPI,
bytes) and a table of MPI calls sorted by total time over the selected ranks.`,
		Example: `  mpiflow stats halo.1234.mpiflow
  mpiflow stats --rank 0-3 --json halo.1234.mpiflow`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ranks, err := parseRanks(rankList)
			if err != nil {
				return err
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			s := flowgraph.NewSummary()
			fb := f.FrameBytes()
			prog := newProgress("reading ranks", len(f.Index))
			for i, e := range f.Index {
				prog.step(i + 1)
				if ranks != nil && !ranks[e.Rank] {
					continue
				}
				r, err := f.ReadRank(i)
				if err != nil {
					return err
				}
				s.Add(r)
				fb.Add(f.BlockBytes(i, r))
			}
			prog.done()
			if len(s.Ranks) == 0 {
				return fmt.Errorf("%s: no rank matches --rank %s", args[0], rankList)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), statsJSON(&f.Header, s, fb))
			}
			return printStats(cmd.OutOrStdout(), &f.Header, s, fb)
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to include, e.g. 0-3,8 (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of tables")
	return cmd
}

type statsOutput struct {
	Header      *flowgraph.Header    `json:"header"`
	MPITime     int64                `json:"mpi_ns"`
	WallTime    int64                `json:"wall_ns_sum"`
	MPIPercent  float64              `json:"mpi_percent"`
	TotalBytes  int64                `json:"bytes"`
	Calls       []flowgraph.CallStat `json:"calls"`
	Ranks       []flowgraph.RankStat `json:"ranks"`
	Hosts       []string             `json:"hosts"`
	Incomplete  bool                 `json:"incomplete"`
	RanksInFile int                  `json:"ranks_in_file"`
	// FileBytes are the bytes of the selected ranks' blocks by part, and
	// of the rest of the file.
	FileBytes flowgraph.FileBytes `json:"file_bytes"`
}

func statsJSON(h *flowgraph.Header, s *flowgraph.Summary, fb flowgraph.FileBytes) statsOutput {
	mpi, wall, bytes := s.Totals()
	return statsOutput{Header: h, MPITime: mpi, WallTime: wall, MPIPercent: pct(mpi, wall), TotalBytes: bytes,
		Calls: s.SortedCalls(), Ranks: s.Ranks, Hosts: h.DistinctHosts(), Incomplete: h.Incomplete, RanksInFile: h.NumRanks,
		FileBytes: fb}
}

func printStats(w io.Writer, h *flowgraph.Header, s *flowgraph.Summary, fb flowgraph.FileBytes) error {
	mpi, wall, bytes := s.Totals()
	hosts := h.DistinctHosts()
	line := strings.Repeat("#", 78)
	fmt.Fprintln(w, line)
	fmt.Fprintf(w, "# command   : %s\n", strings.Join(h.Command, " "))
	if h.StartUnixNano != 0 {
		fmt.Fprintf(w, "# start     : %s\n", time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "# mpi_tasks : %d on %d host(s)   wallclock : %s s\n", h.NumRanks, len(hosts), seconds(h.Wallclock))
	fmt.Fprintf(w, "# %%mpi      : %.2f (after MPI_Init)   total bytes: %s\n", pct(mpi, wall), byteSize(bytes))
	fmt.Fprintf(w, "# mpi lib   : %s %s   clock: %s\n", h.MPILibrary, h.MPIVersion, h.ClockSource)
	if len(h.Counters) > 0 {
		fmt.Fprintf(w, "# counters  : %s\n", strings.Join(h.Counters, ","))
	}
	fmt.Fprintf(w, "# file      : %s (graph %s, sequences %s, timing %s, other %s)\n", byteSize(fb.Total()),
		byteSize(fb.Graph), byteSize(fb.Sequences), byteSize(fb.Timing), byteSize(fb.Other))
	selected := make(map[int]bool)
	for _, r := range s.Ranks {
		selected[r.Rank] = true
	}
	if len(selected) != h.NumRanks {
		fmt.Fprintf(w, "# selected  : %d of %d rank(s)\n", len(selected), h.NumRanks)
	}
	incompleteNote(w, h)
	fmt.Fprintln(w, line)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "call\tcount\ttotal(s)\tavg(s)\tmin(s)\tmax(s)\tbytes\t%mpi\t%wall\t")
	for _, c := range s.SortedCalls() {
		avg := int64(0)
		if c.Count > 0 {
			avg = c.Time.Total / c.Count
		}
		shares := fmt.Sprintf("%.2f\t%.2f", pct(c.Time.Total, mpi), pct(c.Time.Total, wall))
		if flowgraph.IsInit(c.Call) {
			shares = "-\t-" // outside the measured span, as in IPM
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Call, c.Count, seconds(c.Time.Total),
			seconds(avg), seconds(c.Time.Min), seconds(c.Time.Max), byteSize(c.Bytes), shares)
	}
	return tw.Flush()
}
