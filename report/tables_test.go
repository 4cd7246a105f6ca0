package report

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

var halo4 = filepath.Join("testdata", "halo4.mpiflow")

func loadJob(t *testing.T, in string) *analysis.Job {
	t.Helper()
	job, err := analysis.Load(in, analysis.Options{})
	require.NoError(t, err)
	return job
}

// rowTexts returns the cell texts of a table's rows in the page.
func rowTexts(t *testing.T, page, id string) [][]string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, id)
	body := page[i : i+strings.Index(page[i:], "</table>")]
	var rows [][]string
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, html.UnescapeString(td[1]))
		}
		if cells != nil {
			rows = append(rows, cells)
		}
	}
	return rows
}

// The call and call-site tables of the page show the numbers of `mpiflow
// stats` and `mpiflow stats --sites`, formatted the same way.
func TestTablesShowStats(t *testing.T) {
	job := loadJob(t, halo4)
	_, page := writeReport(t, halo4, "halo-tables.html", Options{NoOcelotl: true})
	calls := rowTexts(t, page, "calls-table")
	require.Len(t, calls, len(job.Calls))
	for i, c := range job.CallTable() {
		mpi, wall := fmt.Sprintf("%.2f", c.MPIPct), fmt.Sprintf("%.2f", c.WallPct)
		if c.StartUp {
			mpi, wall = "-", "-"
		}
		assert.Equal(t, []string{c.Call, fmt.Sprint(c.Count), units.NS(c.Time.Total), units.NS(c.Avg), units.NS(c.Time.Min),
			units.NS(c.Time.Max), mpi, wall, units.Bytes(float64(c.Bytes))}, calls[i], c.Call)
	}
	assert.Equal(t, []string{"MPI_Allreduce", "400", "0.00519", "1.3e-05", "5.71e-07", "0.000794", "61.06", "49.11", "3.1 KiB"}, calls[1])
	sites := rowTexts(t, page, "sites-table")
	require.Len(t, sites, len(job.CallSites))
	for i, s := range job.CallSites {
		assert.Equal(t, []string{s.Call, s.Site, fmt.Sprint(s.Count), units.NS(s.Time.Total), units.NS(s.Avg()),
			units.Bytes(float64(s.Bytes)), fmt.Sprint(s.Ranks)}, sites[i])
	}
}

// The matrix is drawn by rank up to 64 ranks, by blocks of ranks beyond,
// and by host when there are 2 to 64 hosts; every view adds up to the
// job's traffic.
func TestMatrixViews(t *testing.T) {
	tests := []struct {
		ranks  int
		views  []string
		labels []int
		first  string
	}{
		{4, []string{"ranks", "hosts"}, []int{4, 2}, "0"},
		{64, []string{"ranks", "hosts"}, []int{64, 32}, "0"},
		{130, []string{"blocks of 3 ranks"}, []int{44}, "0-2"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.ranks), func(t *testing.T) {
			job := loadJob(t, genJob(t, tt.ranks, 300, nil))
			m := matrix(job)
			require.NotNil(t, m)
			total := job.Comm.Total()
			var names []string
			var labels []int
			for _, v := range m.Views {
				names = append(names, v.Name)
				labels = append(labels, len(v.Labels))
				var sum analysis.Traffic
				for k := 0; k < len(v.Cells); k += 4 {
					assert.Less(t, v.Cells[k], int64(len(v.Labels)))
					assert.Less(t, v.Cells[k+1], int64(len(v.Labels)))
					sum.Count += v.Cells[k+2]
					sum.Bytes += v.Cells[k+3]
				}
				assert.Equal(t, total, sum, v.Name)
			}
			assert.Equal(t, tt.views, names)
			assert.Equal(t, tt.labels, labels)
			assert.Equal(t, tt.first, m.Views[0].Labels[0])
			if tt.ranks == 130 {
				assert.Equal(t, "129", m.Views[0].Labels[43], "the last block holds one rank")
			}
		})
	}
}

func TestMatrixCaption(t *testing.T) {
	c := matrixCaption(loadJob(t, halo4))
	assert.Contains(t, c, "In all 200.0 KiB in 800 messages (MPI_Send).")
	assert.Contains(t, c, "(MPI_Irecv 200.0 KiB, MPI_Allreduce 3.1 KiB)")
	assert.NotContains(t, c, "estimates")
	assert.NotContains(t, c, "selected")

	job, err := analysis.Load(genJob(t, 6, 300, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		// Sends of two sizes to two partners from one site.
		for _, r := range ranks {
			for i := range r.Graph.Nodes {
				if n := &r.Graph.Nodes[i]; n.Key.Call == "MPI_Send" {
					n.Partners = []flowgraph.PartnerCount{{Rank: 1, Count: n.Count - 1}, {Rank: 2, Count: 1}}
					n.Bytes.Min, n.Bytes.Max = 0, n.Bytes.Max*2
				}
			}
		}
	}), analysis.Options{NoLoops: true, Ranks: map[int]bool{0: true, 1: true}})
	require.NoError(t, err)
	c = matrixCaption(job)
	assert.Contains(t, c, "Some bytes are estimates")
	assert.Contains(t, c, "Only the sends of the 2 selected ranks are counted.")
}

// The message-size chart has one row per call that moves data, so that no
// call hides another; calls without data are left out, and sites without
// data are "none", never "0 B".
func TestChartBySize(t *testing.T) {
	job := loadJob(t, halo4)
	ct := &callTimes{sizes: job.Sizes, colors: CallColors([]string{"MPI_Allreduce", "MPI_Send", "MPI_Irecv"})}
	c := chartBySize(ct)
	var rows []string
	for _, x := range c.Texts {
		if x.Class == "cat" {
			rows = append(rows, x.Text)
		}
	}
	assert.Equal(t, []string{"MPI_Allreduce", "MPI_Send", "MPI_Irecv"}, rows, "no row for MPI_Wait, which moves no data")
	// Send and Irecv move the same sizes: their bars are in disjoint rows.
	require.Len(t, c.Rects, 3)
	for i := range c.Rects {
		for j := range i {
			a, b := c.Rects[i], c.Rects[j]
			assert.True(t, a.Y >= b.Y+b.H || b.Y >= a.Y+a.H, "bars %d and %d overlap", i, j)
		}
	}
	assert.Contains(t, c.Rects[1].Title, "MPI_Send, message size over 128 B up to 256 B: 0.00017 s in 800 calls (100.0% of its time)")
	for _, x := range c.Texts {
		assert.NotRegexp(t, `^0 ?B$`, x.Text)
	}

	// A call whose sites partly move no data gets a "none" column.
	ct.sizes = []analysis.CallSizes{{Call: "MPI_Bcast", Time: 3, Count: 3,
		Buckets: []analysis.SizeBucket{{Max: 0, Count: 1, Time: 1}, {Max: 8, Count: 2, Time: 2}}}}
	c = chartBySize(ct)
	var ticks []string
	for _, x := range c.Texts {
		if x.Class == "tick" {
			ticks = append(ticks, x.Text)
		}
	}
	assert.Equal(t, []string{"none", "8 B"}, ticks)
	assert.Contains(t, c.Rects[0].Title, "message size no data")

	ct.sizes = nil
	c = chartBySize(ct)
	assert.Equal(t, "no call moved data", c.Texts[0].Text)
}

// The load balance draws ranks in rank order, whatever the file's order,
// user, system and MPI time on one scale, and memory per rank.
func TestChartBalanceByRank(t *testing.T) {
	in := genJob(t, 6, 300, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		for _, r := range ranks {
			r.UserTime = int64(r.Rank+1) * 1e9
			r.SysTime = int64(r.Rank+1) * 1e8
			r.MaxRSS = int64(r.Rank+1) << 20
		}
		slices.Reverse(ranks)
	})
	job := loadJob(t, in)
	require.Equal(t, 5, job.Ranks[0].Rank.Rank, "the file holds the ranks in reverse")
	ct := &callTimes{ranks: rankValues(job)}
	c := chartBalance(ct)
	// Bars: user, system, MPI per rank, then the hover columns.
	var user, sys []Rect
	for _, r := range c.Rects {
		switch r.Fill {
		case UserColor:
			user = append(user, r)
		case SystemColor:
			sys = append(sys, r)
		}
	}
	require.Len(t, user, 6)
	require.Len(t, sys, 6)
	for i := 1; i < 6; i++ {
		assert.Greater(t, user[i].X, user[i-1].X, "rank order")
		assert.Greater(t, user[i].H, user[i-1].H, "rank %d uses more CPU", i)
		// One scale: system time is a tenth of user time.
		assert.InDelta(t, user[i].H/10, sys[i].H, 0.05)
	}
	hover := c.Rects[len(c.Rects)-1]
	assert.Contains(t, hover.Title, "rank 5 (node002)\nuser CPU time: 6.00 s\nsystem CPU time: 0.6 s\nMPI time: ")

	m := chartMemory(ct)
	var rss []float64
	for _, r := range m.Rects {
		if r.Fill == MemoryColor {
			rss = append(rss, r.H)
		}
	}
	require.Len(t, rss, 6)
	assert.IsIncreasing(t, rss)
	assert.Contains(t, m.Rects[len(m.Rects)-1].Title, "rank 5 (node002)\nmax RSS: 6.0 MiB")

	// Many ranks: lines, and hover columns of several ranks.
	many := make([]rankTimes, 3000)
	for i := range many {
		many[i] = rankTimes{order: i, label: fmt.Sprintf("rank %d", i), user: float64(i)}
	}
	c = chartBalance(&callTimes{ranks: many})
	assert.Len(t, c.Polys, 4, "a line per series")
	last := c.Rects[len(c.Rects)-1]
	assert.Contains(t, last.Title, "rank 2997 to rank 2999\nuser CPU time: 2997.00 to 2999.00 s")
	assert.Less(t, len(c.Rects), 1200)
}

// TestJobSpread: the job section has IPM's spread over the ranks, the
// figures of `mpiflow stats`.
func TestJobSpread(t *testing.T) {
	in := genJob(t, 4, 300, nil)
	job := loadJob(t, in)
	_, page := writeReport(t, in, "spread.html", Options{})
	sp := job.Spreads()
	require.Len(t, sp, 7)
	for _, q := range sp {
		row := fmt.Sprintf("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%d</td></tr>",
			q.Name, q.Format(q.Total), q.Format(q.Mean), q.Format(q.Min), q.MinRank, q.Format(q.Max), q.MaxRank)
		assert.Contains(t, page, row)
	}
}

// TestRankNames: a hover over ranks in rank order names their range, over
// ranks in another order (by MPI time) the first few.
func TestRankNames(t *testing.T) {
	var rs []rankTimes
	for i := range 10 {
		rs = append(rs, rankTimes{order: i, label: fmt.Sprintf("rank %d", i)})
	}
	assert.Equal(t, "rank 2 to rank 5", rankNames(rs, 2, 6))
	slices.Reverse(rs)
	assert.Equal(t, "rank 9, rank 8, rank 7, rank 6 and 2 more", rankNames(rs, 0, 6))
	assert.Equal(t, "rank 9, rank 8", rankNames(rs, 0, 2))
}

// TestJobEnv: the job section names the executable and the run's settings,
// escaped.
func TestJobEnv(t *testing.T) {
	in := genJob(t, 2, 300, func(h *flowgraph.Header, _ []*flowgraph.Rank) {
		h.Executable = "/opt/<b>app</b>"
		h.Env = []string{"MPIFLOW_X=<script>x</script>", "OMP_NUM_THREADS=4"}
	})
	_, page := writeReport(t, in, "env.html", Options{})
	assert.Contains(t, page, `<code id="job-exe">/opt/&lt;b&gt;app&lt;/b&gt;</code>`)
	assert.Contains(t, page, "environment: 2 setting(s) of the run")
	assert.Contains(t, page, "<li><code>MPIFLOW_X=&lt;script&gt;x&lt;/script&gt;</code></li>")
	assert.Contains(t, page, "<li><code>OMP_NUM_THREADS=4</code></li>")
}

// The regions table shows the regions of `mpiflow stats`, and a job
// without MPI_Pcontrol has none.
func TestRegionTable(t *testing.T) {
	in := filepath.Join("..", "testdata", "profiles", "regions.mpiflow") // testdata/apps/regions.c, 4 ranks
	job := loadJob(t, in)
	_, page := writeReport(t, in, "regions.html", Options{NoOcelotl: true})
	rows := rowTexts(t, page, "regions-table")
	require.Len(t, rows, len(job.Regions))
	var names []string
	for i, r := range job.Regions {
		names = append(names, rows[i][0])
		assert.Equal(t, []string{r.Label(), "4", fmt.Sprint(r.Entries), units.NS(r.Wall), units.NS(r.WallMin), fmt.Sprint(r.MinRank),
			units.NS(r.WallMax), fmt.Sprint(r.MaxRank), units.NS(r.MPI), fmt.Sprintf("%.2f", r.MPIPercent()), fmt.Sprint(r.Calls),
			r.ByCall[0].Call}, rows[i])
	}
	assert.Equal(t, []string{"solve", "solve > halo", "a region whose name is longer than the sixty-three bytes that m", "phase 0", "phase 1"}, names)
	assert.Contains(t, page, `href="#regions"`)

	// With counters, the IPC and Gflop/s of each region's compute phases:
	// regions.mpiflow with counters on its edges, 2 instructions per cycle
	// and 3 flop per ns in every phase.
	withCtr := filepath.Join("..", "testdata", "profiles", "regions-counters.mpiflow")
	job = loadJob(t, withCtr)
	_, page = writeReport(t, withCtr, "regions-counters.html", Options{NoOcelotl: true})
	rows = rowTexts(t, page, "regions-table")
	require.Len(t, rows, len(job.Regions))
	for i, r := range job.Regions {
		require.Len(t, rows[i], 14)
		assert.InDelta(t, 2, r.IPC, 0.01, r.Label())
		assert.InDelta(t, 3, r.Gflops, 0.03, r.Label())
		assert.Equal(t, []string{fmt.Sprintf("%.2f", r.IPC), fmt.Sprintf("%.3g", r.Gflops), r.ByCall[0].Call}, rows[i][11:])
	}

	_, page = writeReport(t, halo4, "halo-no-regions.html", Options{NoOcelotl: true})
	assert.NotContains(t, page, `id="regions"`)
	assert.NotContains(t, page, `href="#regions"`)
}

// The scaling page has each run, the efficiency charts and the tables of
// mpiflow scaling; names from the files are escaped.
func TestScalingPage(t *testing.T) {
	a, b := loadJob(t, halo4), loadJob(t, halo4)
	s := analysis.NewScaling([]*analysis.Job{a, b}, true)
	s.Calls = append(s.Calls, analysis.ScalingItem{Name: "<script>x</script>", Points: make([]analysis.ScalingPoint, 2)})
	out := filepath.Join(artifacts(t), "scaling.html")
	require.NoError(t, WriteScaling(out, s))
	b2, err := os.ReadFile(out)
	require.NoError(t, err)
	page := string(b2)
	assert.Contains(t, page, `id="scaling-loops"`)
	assert.Contains(t, page, `id="scaling-calls"`)
	assert.NotContains(t, page, "<script>x</script>")
	assert.NotContains(t, page, "https://", "offline")
	runs := rowTexts(t, page, "scaling-runs")
	require.Len(t, runs, 2)
	assert.Equal(t, "1.00", runs[1][4], "the same run twice: weak efficiency 1")
	loopsRows := rowTexts(t, page, "scaling-loops-table")
	require.Len(t, loopsRows, len(s.Loops))
	for i, it := range s.Loops {
		assert.Equal(t, it.Name, loopsRows[i][0])
		assert.Equal(t, "1.00", loopsRows[i][5], it.Name)
	}
	calls := rowTexts(t, page, "scaling-calls-table")
	require.Len(t, calls, len(s.Calls))
	assert.Equal(t, "<script>x</script>", calls[len(calls)-1][0], "escaped in the page, itself in the text")
}
