package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

// sortTable is a table whose columns the page sorts when their header is
// clicked: numeric columns by their cells' Key, text columns by their text.
type sortTable struct {
	ID   string
	Head []tableHead
	Rows [][]tableCell
}

type tableHead struct {
	Label, Title string
	// Num sorts by the cells' keys, descending first; else by text.
	Num bool
}

type tableCell struct {
	Text, Title string
	Key         num
}

// maxSiteRows bounds the rows of the call-site table; `mpiflow stats
// --sites` lists them all.
const maxSiteRows = 500

// callTable is the IPM call table, the numbers of `mpiflow stats`.
func callTable(job *analysis.Job) sortTable {
	t := sortTable{ID: "calls-table", Head: []tableHead{{Label: "call"}, {Label: "count", Num: true},
		{Label: "total (s)", Num: true, Title: "time inside the call, summed over the ranks"},
		{Label: "avg (s)", Num: true}, {Label: "min (s)", Num: true}, {Label: "max (s)", Num: true},
		{Label: "%MPI", Num: true, Title: "share of the MPI time of all ranks after MPI_Init"},
		{Label: "%wall", Num: true, Title: "share of the wall time of all ranks after MPI_Init"},
		{Label: "bytes", Num: true}}}
	for _, c := range job.CallTable() {
		mpi, wall := pctCell(c.MPIPct), pctCell(c.WallPct)
		if c.StartUp {
			// Outside the measured span, as in IPM.
			mpi = tableCell{Text: "-", Key: -1, Title: "MPI_Init is outside the measured span"}
			wall = mpi
		}
		t.Rows = append(t.Rows, []tableCell{{Text: c.Call}, countCell(c.Count), nsCell(c.Time.Total), nsCell(c.Avg),
			nsCell(c.Time.Min), nsCell(c.Time.Max), mpi, wall, bytesCell(c.Bytes)})
	}
	return t
}

// siteTable is the table of call sites, the numbers of `mpiflow stats
// --sites`; it returns a note when rows were left out.
func siteTable(job *analysis.Job) (sortTable, string) {
	t := sortTable{ID: "sites-table", Head: []tableHead{{Label: "call"}, {Label: "call site", Title: "function file:line, or object+offset when not resolved"},
		{Label: "count", Num: true}, {Label: "total (s)", Num: true}, {Label: "avg (s)", Num: true}, {Label: "bytes", Num: true},
		{Label: "ranks", Num: true, Title: "ranks that call it (hover for the list)"}}}
	sites := job.CallSites
	note := ""
	if len(sites) > maxSiteRows {
		note = fmt.Sprintf("The %d call sites with the most time of %d; `mpiflow stats --sites` lists them all.", maxSiteRows, len(sites))
		sites = sites[:maxSiteRows]
	}
	for i := range sites {
		s := &sites[i]
		site := tableCell{Text: s.Site, Title: s.Signature}
		if s.Site == "" {
			site.Text = "-"
		}
		t.Rows = append(t.Rows, []tableCell{{Text: s.Call}, site, countCell(s.Count), nsCell(s.Time.Total), nsCell(s.Avg()),
			bytesCell(s.Bytes), {Text: strconv.Itoa(s.Ranks), Key: num(s.Ranks), Title: "ranks " + s.RankList}})
	}
	return t, note
}

// regionTable is the table of the regions of MPI_Pcontrol, in the order
// of `mpiflow stats`, each named by its path.
func regionTable(job *analysis.Job) sortTable {
	t := sortTable{ID: "regions-table", Head: []tableHead{{Label: "region", Title: "outer > inner for a region entered inside another"},
		{Label: "ranks", Num: true, Title: "ranks that entered it (hover for the list)"}, {Label: "entries", Num: true},
		{Label: "wall (s)", Num: true, Title: "from entry to exit, summed over the ranks"}, {Label: "least (s)", Num: true}, {Label: "rank", Num: true},
		{Label: "largest (s)", Num: true}, {Label: "rank", Num: true}, {Label: "MPI (s)", Num: true}, {Label: "% MPI", Num: true},
		{Label: "calls", Num: true}}}
	// With counters, the compute phases' IPC and Gflop/s, as the banner.
	counters := slices.ContainsFunc(job.Regions, func(r analysis.Region) bool { return r.IPC > 0 || r.Gflops > 0 })
	if counters {
		t.Head = append(t.Head, tableHead{Label: "IPC", Num: true, Title: "of the compute phases inside it"},
			tableHead{Label: "Gflop/s", Num: true, Title: "of the compute phases inside it"})
	}
	t.Head = append(t.Head, tableHead{Label: "most MPI time"})
	for i := range job.Regions {
		r := &job.Regions[i]
		var calls []string
		for _, c := range r.ByCall {
			calls = append(calls, fmt.Sprintf("%s: %s s, %d calls", c.Call, units.NS(c.Time), c.Count))
		}
		name := tableCell{Text: r.Label(), Title: strings.Join(calls, "\n")}
		if r.Unclosed > 0 {
			name.Text += fmt.Sprintf(" (%d not left)", r.Unclosed)
		}
		top := "-"
		if len(r.ByCall) > 0 {
			top = r.ByCall[0].Call
		}
		row := []tableCell{name, {Text: strconv.Itoa(r.Ranks), Key: num(r.Ranks), Title: "ranks " + r.RankList},
			countCell(r.Entries), nsCell(r.Wall), nsCell(r.WallMin), countCell(int64(r.MinRank)), nsCell(r.WallMax),
			countCell(int64(r.MaxRank)), nsCell(r.MPI), pctCell(r.MPIPercent()), countCell(r.Calls)}
		if counters {
			row = append(row, tableCell{Text: fmt.Sprintf("%.2f", r.IPC), Key: num(r.IPC)}, tableCell{Text: fmt.Sprintf("%.3g", r.Gflops), Key: num(r.Gflops)})
		}
		t.Rows = append(t.Rows, append(row, tableCell{Text: top}))
	}
	return t
}

func countCell(n int64) tableCell { return tableCell{Text: strconv.FormatInt(n, 10), Key: num(n)} }
func nsCell(ns int64) tableCell   { return tableCell{Text: units.NS(ns), Key: num(ns)} }
func bytesCell(b int64) tableCell { return tableCell{Text: units.Bytes(float64(b)), Key: num(b)} }
func pctCell(p float64) tableCell { return tableCell{Text: fmt.Sprintf("%.2f", p), Key: num(p)} }

// maxMatrix is the most rows and columns the matrix is drawn with;
// larger jobs are summed into blocks of ranks.
const maxMatrix = 64

// matrixData is the communication matrix as the page draws it, in one or
// more views (ranks or blocks of ranks, hosts).
type matrixData struct {
	Views []matrixView `json:"views"`
}

// matrixView is the matrix summed over some grouping of the ranks.
type matrixView struct {
	Name string `json:"name"`
	// Prefix is put before a label in hover texts ("rank ", "ranks ").
	Prefix string   `json:"prefix"`
	Labels []string `json:"labels"`
	// Cells are the non-empty cells: from, to, messages, bytes.
	Cells []int64 `json:"cells"`
}

func newMatrixView(m *analysis.CommMatrix, name, prefix string, labels []string, block func(int) int) matrixView {
	v := matrixView{Name: name, Prefix: prefix, Labels: labels}
	for i, row := range m.Blocks(len(labels), block) {
		for j, c := range row {
			if c.Count > 0 || c.Bytes > 0 {
				v.Cells = append(v.Cells, int64(i), int64(j), c.Count, c.Bytes)
			}
		}
	}
	return v
}

// matrix returns the views of the job's communication matrix: its ranks
// (up to 64), else blocks of consecutive ranks, and its hosts when there
// are 2 to 64; nil when no rank sent messages.
func matrix(job *analysis.Job) *matrixData {
	m := job.Comm
	if m == nil || len(m.Cells) == 0 {
		return nil
	}
	d := &matrixData{}
	if m.Size <= maxMatrix {
		labels := make([]string, m.Size)
		for i := range labels {
			labels[i] = strconv.Itoa(i)
		}
		d.Views = append(d.Views, newMatrixView(m, "ranks", "rank ", labels, func(r int) int { return r }))
	} else {
		k := (m.Size + maxMatrix - 1) / maxMatrix
		var labels []string
		for lo := 0; lo < m.Size; lo += k {
			label := strconv.Itoa(lo)
			if hi := min(lo+k, m.Size) - 1; hi > lo {
				label += "-" + strconv.Itoa(hi)
			}
			labels = append(labels, label)
		}
		d.Views = append(d.Views, newMatrixView(m, fmt.Sprintf("blocks of %d ranks", k), "ranks ", labels, func(r int) int { return r / k }))
	}
	hosts := job.Header.Hosts
	distinct := job.Header.DistinctHosts()
	if len(distinct) >= 2 && len(distinct) <= maxMatrix && len(distinct) < m.Size {
		idx := make(map[string]int, len(distinct))
		for i, h := range distinct {
			idx[h] = i
		}
		d.Views = append(d.Views, newMatrixView(m, "hosts", "", distinct, func(r int) int {
			if r < 0 || r >= len(hosts) {
				return -1
			}
			if i, ok := idx[hosts[r]]; ok {
				return i
			}
			return -1 // a rank whose host is not known
		}))
	}
	return d
}

// matrixCaption says what the matrix counts and what it leaves out.
func matrixCaption(job *analysis.Job) string {
	m := job.Comm
	if m == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("Messages of the point-to-point sends (MPI_Send, Bsend, Rsend, Ssend, their nonblocking and large-count forms, and the send half of Sendrecv) from the sending rank (row) to the destination's world rank (column). Each message is counted once, at its sender, so receives, wildcard or not, do not matter; persistent sends are not counted (their messages go at MPI_Start, which records no partner).")
	if t := m.Total(); t.Count > 0 {
		fmt.Fprintf(&b, " In all %s in %d messages", units.Bytes(float64(t.Bytes)), t.Count)
		var calls []string
		for _, s := range m.Sent {
			calls = append(calls, s.Call)
		}
		fmt.Fprintf(&b, " (%s).", strings.Join(calls, ", "))
	}
	if m.SelectedRanks < m.Size {
		fmt.Fprintf(&b, " Only the sends of the %d selected ranks are counted.", m.SelectedRanks)
	}
	if u := m.Unattributed; u.Count > 0 {
		fmt.Fprintf(&b, " %d sends (%s) have no recorded destination (MPI_PROC_NULL, or more than %d destinations from one call site) and are not shown.",
			u.Count, units.Bytes(float64(u.Bytes)), flowgraph.MaxPartners)
	}
	if m.Estimated {
		b.WriteString(" Some bytes are estimates: a call site that sent different sizes to several destinations is counted at its mean size, and Sendrecv, which records sent plus received bytes, at half of them.")
	}
	if len(m.Other) > 0 {
		var parts []string
		for i, o := range m.Other {
			if i == 4 {
				parts = append(parts, fmt.Sprintf("%d more", len(m.Other)-i))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %s", o.Call, units.Bytes(float64(o.Bytes))))
		}
		fmt.Fprintf(&b, " Calls without a partner per message are not in the matrix: receives (counted at their senders), collectives, one-sided and I/O calls (%s).", strings.Join(parts, ", "))
	}
	return b.String()
}

// tablesView holds the report's sections of statistics: the call table
// with the charts of time per call and message size, the call sites, the
// communication matrix (drawn by the page's script from Matrix) and the
// load balance charts.
type tablesView struct {
	Calls      sortTable
	CallCharts []Chart
	Sites      sortTable
	SitesNote  string
	// Regions are the regions of MPI_Pcontrol (no rows without any).
	Regions       sortTable
	Matrix        *matrixData
	MatrixCaption string
	Balance       []Chart
	// BalanceByMPI are the Balance charts with the ranks by MPI time,
	// largest first (none for one rank).
	BalanceByMPI []Chart
}

// buildTables fills the statistics sections of p.
func buildTables(p *page, job *analysis.Job, ct *callTimes) {
	t := &p.Tables
	t.Calls = callTable(job)
	t.CallCharts = []Chart{chartTimePerCall(ct), chartBySize(ct)}
	t.Sites, t.SitesNote = siteTable(job)
	t.Regions = regionTable(job)
	t.Matrix = matrix(job)
	t.MatrixCaption = matrixCaption(job)
	t.Balance = []Chart{chartBalance(ct), chartMemory(ct), chartPerRank(ct)}
	if len(ct.ranks) > 1 {
		// The same charts with the ranks by MPI time, largest first.
		byMPI := *ct
		byMPI.ranks = slices.Clone(ct.ranks)
		slices.SortStableFunc(byMPI.ranks, func(a, b rankTimes) int { return cmp.Compare(b.mpi, a.mpi) })
		for _, c := range []Chart{chartBalance(&byMPI), chartMemory(&byMPI), chartPerRank(&byMPI)} {
			c.ID += "-by-mpi"
			c.Title += ", ranks by MPI time"
			t.BalanceByMPI = append(t.BalanceByMPI, c)
		}
	}
}

// rankValues are the values of the per-rank charts, ranks (and threads)
// in order.
func rankValues(job *analysis.Job) []rankTimes {
	idx := make([]int, len(job.Ranks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra, rb := job.Ranks[a], job.Ranks[b]
		return cmp.Or(cmp.Compare(ra.Rank.Rank, rb.Rank.Rank), cmp.Compare(ra.Thread, rb.Thread))
	})
	out := make([]rankTimes, 0, len(idx))
	for _, i := range idx {
		r, rs := job.Ranks[i], &job.Summary.Ranks[i]
		rt := rankTimes{rank: r.Rank.Rank, order: len(out), label: r.Label, host: r.Host, user: float64(r.UserTime) / 1e9, sys: float64(r.SysTime) / 1e9,
			wall: float64(rs.Wall) / 1e9, rss: float64(r.MaxRSS), mpi: float64(rs.MPI) / 1e9, perCall: map[string]float64{}}
		for call, t := range r.CallTime {
			rt.perCall[call] = float64(t) / 1e9
		}
		out = append(out, rt)
	}
	return out
}
