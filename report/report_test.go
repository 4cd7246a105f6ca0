package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func TestReportSmoke(t *testing.T) {
	in := genJob(t, 4, 3000, nil)
	_, html := writeReport(t, in, "smoke.html", Options{})
	assert.Contains(t, html, "<svg")
}

// Header.Incomplete alone (every rank's block says complete, as when a
// rank's file was lost) shows the warning first in the job section.
func TestIncompleteWarning(t *testing.T) {
	for _, incomplete := range []bool{false, true} {
		in := genJob(t, 3, 300, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
			h.Incomplete = incomplete
			for _, r := range ranks {
				r.Complete = true
			}
		})
		_, html := writeReport(t, in, "incomplete.html", Options{NoOcelotl: true})
		warn := strings.Index(html, `<p class="warn"`)
		if !incomplete {
			assert.Equal(t, -1, warn, "no warning for a complete run")
			continue
		}
		require.GreaterOrEqual(t, warn, 0, "warning shown")
		assert.Contains(t, html[warn:], "Incomplete run")
		assert.Less(t, warn, strings.Index(html, `<div class="banner">`), "before the banner's fields")
	}
}

// A job whose poll run lengths were approximated to fit the budget says so
// in the job section, with the numbers of stats; others say nothing.
func TestBudgetNote(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 40, Events: 100_000, Depth: 3, Sites: 12, Polls: true, Budget: 1 << 10}, 2, 2)
	path := filepath.Join(t.TempDir(), "poll.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	var approx, runs, arranged, moved int64
	for _, r := range ranks {
		approx += r.Graph.Budget.Approximate
		runs += r.Graph.Budget.Runs
		arranged += r.Graph.Budget.Arranged
		moved += r.Graph.Budget.Moved
	}
	require.Positive(t, approx)
	require.Positive(t, arranged, "1 KiB: intervals arranged too")
	_, html := writeReport(t, path, "budget.html", Options{NoOcelotl: true})
	assert.Contains(t, html, fmt.Sprintf(`<p class="note" id="job-budget">Run lengths approximate: %d of %d runs`, approx, runs))
	assert.Contains(t, html, "every other call is in its recorded order but in the intervals below")
	assert.Contains(t, html, fmt.Sprintf("%d timing intervals (the densest first)", arranged))
	assert.Contains(t, html, fmt.Sprintf("%d events hold another call", moved))
	_, html = writeReport(t, genJob(t, 2, 300, nil), "nobudget.html", Options{NoOcelotl: true})
	assert.NotContains(t, html, "job-budget")
}

// The progress callback sees every stage, counts up to each stage's total
// and ends with everything done; the number of ranks is known here. Loops
// are found by the analysis, or in the report's pass over the ranks when
// the job was loaded without them.
func TestProgress(t *testing.T) {
	in := genJob(t, 5, 500, nil)
	for _, aopt := range []analysis.Options{{}, {NoLoops: true, NoSequences: true}} {
		var mu sync.Mutex
		last := map[string][2]int{}
		var order []string
		opt := Options{Progress: func(stage string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := last[stage]; !ok {
				order = append(order, stage)
			}
			prev := last[stage]
			assert.GreaterOrEqual(t, done, prev[0], "%s counts up", stage)
			assert.LessOrEqual(t, done, total, "%s within its total", stage)
			last[stage] = [2]int{done, total}
		}}
		aopt.Progress = opt.Progress
		job, err := analysis.Load(in, aopt)
		require.NoError(t, err)
		var sb strings.Builder
		require.NoError(t, Write(context.Background(), &sb, job, opt))
		assert.Equal(t, []string{"reading ranks", "finding loops", "timeline", "overview", "drawing graphs"}, order, "%+v", aopt)
		assert.Equal(t, [2]int{5, 5}, last["reading ranks"])
		assert.Equal(t, [2]int{5, 5}, last["finding loops"])
		assert.Equal(t, [2]int{5, 5}, last["timeline"])
		assert.Equal(t, [2]int{1, 1}, last["overview"])
		g := last["drawing graphs"]
		assert.Equal(t, g[1], g[0])
		assert.GreaterOrEqual(t, g[1], 1)
	}
}

// TestReportWithoutSequences: the report of a job analysed without keeping
// its ranks' sequences (each rank read again, whole, for the overview and
// the timeline), or without its loops either (found in that pass), is the
// report of the job analysed with them, whatever the number of workers, and
// also without the overview.
func TestReportWithoutSequences(t *testing.T) {
	in := genJob(t, 5, 3000, nil)
	generated := regexp.MustCompile(`Report generated [^ ]+\.`)
	for _, opt := range []Options{{}, {Workers: 1}, {NoOcelotl: true}, {NoOcelotl: true, TimelineRanks: 2}} {
		_, want := writeReportOf(t, in, "seqs.html", analysis.Options{}, opt)
		require.Contains(t, want, `"timeline":{`)
		for _, aopt := range []analysis.Options{{NoSequences: true, Workers: 3}, {NoSequences: true, NoLoops: true}} {
			_, got := writeReportOf(t, in, "noseqs.html", aopt, opt)
			assert.Equal(t, generated.ReplaceAllString(want, ""), generated.ReplaceAllString(got, ""), "%+v %+v", opt, aopt)
		}
	}
}

// TestRenderBounded: a Graphviz that runs without end, or writes without
// end, is stopped, and says why.
func TestRenderBounded(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return p
	}
	hang := script("hang", "exec sleep 600")
	flood := script("flood", "exec yes '<svg>'")
	ok := script("ok", "cat >/dev/null; printf '<?xml a?><svg/>'")
	start := time.Now()
	_, err := renderDOT(context.Background(), hang, []string{"digraph{}"}, 200*time.Millisecond, 1<<20)
	require.ErrorContains(t, err, "still running after 200ms, stopped")
	assert.Less(t, time.Since(start), 30*time.Second)
	_, err = renderDOT(context.Background(), flood, []string{"digraph{}"}, time.Minute, 1<<20)
	require.ErrorContains(t, err, "wrote more than 1 MiB of SVG, stopped")
	docs, err := renderDOT(context.Background(), ok, []string{"digraph{}"}, time.Minute, 1<<20)
	require.NoError(t, err)
	assert.Len(t, docs, 1)
}
