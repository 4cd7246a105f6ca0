package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// do runs chromedp actions in the page.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, actions...))
}

// waitTrue polls a JavaScript condition until it holds (5 s at most).
func waitTrue(t *testing.T, b *browser, expr, what string) {
	t.Helper()
	for range 50 {
		if eval[bool](t, b, expr) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.Fail(t, "timed out waiting", "%s: %s", what, expr)
}

// column returns the sort keys (or texts) of a column of a table, in row
// order.
func column[T any](t *testing.T, b *browser, table string, col int, key bool) []T {
	t.Helper()
	get := "td.textContent"
	if key {
		get = `parseFloat(td.getAttribute("data-k"))`
	}
	return eval[[]T](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll("#%s tbody tr")).map(tr => { var td = tr.cells[%d]; return %s; })`, table, col, get))
}

// TestBrowserTables clicks column headers to sort the call and call-site
// tables, follows a navigation link and a loop link and goes back, and
// hovers the communication matrix, in the report of the recorded halo
// exchange.
func TestBrowserTables(t *testing.T) {
	b := newBrowser(t)
	out, page := writeReport(t, halo4, "tables.html", Options{})
	b.open(t, out)

	// The call table comes by total time; a click on "count" sorts by
	// count, largest first, a second click smallest first, a click on
	// "call" by name.
	totals := column[float64](t, b, "calls-table", 2, true)
	require.Len(t, totals, 8)
	assert.IsNonIncreasing(t, totals)
	b.do(t, chromedp.Click(chromedp.CSS(`#calls-table th:nth-child(2) button`)))
	counts := column[float64](t, b, "calls-table", 1, true)
	assert.IsNonIncreasing(t, counts)
	assert.Equal(t, []float64{800, 800, 800, 400, 4, 4, 4, 4}, counts)
	assert.Equal(t, "descending", eval[string](t, b, `document.querySelector("#calls-table th:nth-child(2)").getAttribute("aria-sort")`))
	b.do(t, chromedp.Click(chromedp.CSS(`#calls-table th:nth-child(2) button`)))
	assert.IsNonDecreasing(t, column[float64](t, b, "calls-table", 1, true))
	b.do(t, chromedp.Click(chromedp.CSS(`#calls-table th:nth-child(1) button`)))
	assert.Equal(t, []string{"MPI_Allreduce", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Finalize", "MPI_Init", "MPI_Irecv", "MPI_Send", "MPI_Wait"},
		column[string](t, b, "calls-table", 0, false))
	// The %MPI column puts MPI_Init (outside the shares) last.
	b.do(t, chromedp.Click(chromedp.CSS(`#calls-table th:nth-child(7) button`)))
	calls := column[string](t, b, "calls-table", 0, false)
	assert.Equal(t, "MPI_Allreduce", calls[0])
	assert.Equal(t, "MPI_Init", calls[len(calls)-1])
	// The call sites by bytes.
	b.do(t, chromedp.Click(chromedp.CSS(`#sites-table th:nth-child(6) button`)))
	assert.IsNonIncreasing(t, column[float64](t, b, "sites-table", 5, true))
	assert.Contains(t, []string{"MPI_Send", "MPI_Irecv"}, column[string](t, b, "sites-table", 0, false)[0])

	// Every section has its stable id, and the navigation bar links them.
	ids := []string{"calls", "callsites", "comm-matrix", "load-balance", "graphs", "overview", "timeline"}
	for _, id := range ids {
		assert.True(t, eval[bool](t, b, fmt.Sprintf(`!!document.querySelector("main > section#%s") && !!document.querySelector("nav#nav a[href='#%s']")`, id, id)), id)
	}

	// A navigation link scrolls to its section; Back returns to where the
	// page was.
	y := eval[float64](t, b, `window.scrollY`)
	b.do(t, chromedp.Click(chromedp.CSS(`nav#nav a[href="#comm-matrix"]`)))
	waitTrue(t, b, `location.hash === "#comm-matrix" && Math.abs(document.getElementById("comm-matrix").getBoundingClientRect().top) < 80`, "matrix in view")
	assert.True(t, eval[bool](t, b, `history.back(), true`))
	waitTrue(t, b, fmt.Sprintf(`location.hash === "" && Math.abs(window.scrollY - %g) < 2`, y), "back where the page was")

	// A loop node opens its level, Back returns to the top level, Forward
	// to the loop again.
	const shown = `document.querySelector("#g-levels .level:not([hidden])").id`
	const loopNode = "#g-levels .level:not([hidden]) g.node a[href^='#lv-']"
	require.Equal(t, "lv-0-0", eval[string](t, b, shown))
	href := eval[string](t, b, `document.querySelector("`+loopNode+`").getAttribute("href")`)
	b.do(t, chromedp.Click(chromedp.CSS(loopNode+" polygon")))
	waitTrue(t, b, fmt.Sprintf(`location.hash === %q`, href), "loop link in the URL")
	assert.Equal(t, href[1:], eval[string](t, b, shown))
	// Then a section of the navigation bar, and Back twice.
	b.do(t, chromedp.Click(chromedp.CSS(`nav#nav a[href="#timeline"]`)))
	waitTrue(t, b, `location.hash === "#timeline"`, "timeline link")
	assert.Equal(t, href[1:], eval[string](t, b, shown), "a section link keeps the level")
	assert.True(t, eval[bool](t, b, `history.back(), true`))
	waitTrue(t, b, fmt.Sprintf(`location.hash === %q`, href), "back to the loop")
	assert.Equal(t, href[1:], eval[string](t, b, shown))
	assert.True(t, eval[bool](t, b, `history.back(), true`))
	waitTrue(t, b, `location.hash === ""`, "back to the start")
	waitTrue(t, b, shown+` === "lv-0-0"`, "back to the top level")
	assert.True(t, eval[bool](t, b, `history.forward(), true`))
	waitTrue(t, b, shown+fmt.Sprintf(` === %q`, href[1:]), "forward to the loop")

	// Hovering a cell of the matrix tells its traffic: in the 2x2 grid
	// rank 0 sends 100 messages of 256 B to rank 1, none to rank 3.
	hover := func(i, j int) string {
		b.do(t, chromedp.ScrollIntoView(chromedp.CSS(`#m-view-svg svg`)))
		// The first cell drawn is 0 -> 1.
		pos := eval[[]float64](t, b, fmt.Sprintf(`(function () {
			var r = document.querySelector("#m-view-svg rect.cell").getBoundingClientRect();
			return [r.left + (%d - 0.5) * r.width, r.top + (%d + 0.5) * r.height]; })()`, j, i))
		require.Len(t, pos, 2)
		b.do(t, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pos[0], pos[1]))
		return eval[string](t, b, `document.getElementById("m-info").textContent`)
	}
	assert.Equal(t, "rank 0 \u2192 rank 1: 25.0 KiB in 100 messages. rank 0 sent 50.0 KiB in 200 messages in all; rank 1 received 50.0 KiB in 200 messages.", hover(0, 1))
	assert.Contains(t, hover(0, 3), "rank 0 \u2192 rank 3: no messages.")
	assert.Contains(t, hover(3, 2), "rank 3 \u2192 rank 2: 25.0 KiB in 100 messages.")
	assert.Equal(t, 8, eval[int](t, b, `+document.getElementById("m-view-svg").dataset.cells`))
	// Messages instead of bytes.
	assert.Contains(t, eval[string](t, b, `(function () { var s = document.getElementById("m-metric"); s.value = "count";
		s.dispatchEvent(new Event("change")); return document.getElementById("m-legend").textContent; })()`), "red 100 messages")
	b.shot(t, "#comm-matrix", "tables-matrix.png")

	// A link to a loop level from outside opens it.
	abs, err := filepath.Abs(strings.TrimSuffix(out, ".html") + "-link.html")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(abs, []byte(page), 0o644))
	b.do(t, chromedp.Navigate("file://"+abs+href), chromedp.WaitReady(chromedp.CSS("#t-canvas")))
	waitTrue(t, b, shown+fmt.Sprintf(` === %q`, href[1:]), "the linked level")
	b.check(t)
}

// TestBrowserWide64 checks that the report of 64 ranks fits a 1400 px
// wide window: nothing scrolls horizontally, the matrix shows every rank.
func TestBrowserWide64(t *testing.T) {
	b := newBrowser(t)
	in := genJob(t, 64, 1000, nil)
	out, _ := writeReport(t, in, "wide64.html", Options{})
	b.do(t, chromedp.EmulateViewport(1400, 1000))
	b.open(t, out)
	assert.LessOrEqual(t, eval[int](t, b, `document.documentElement.scrollWidth`), 1400, "page width")
	assert.LessOrEqual(t, eval[int](t, b, `document.body.scrollWidth`), 1400, "body width")
	// No section or figure scrolls sideways either.
	assert.Empty(t, eval[[]string](t, b, `Array.from(document.querySelectorAll("main section, figure.chart, table")).filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.id || e.tagName)`))
	assert.Equal(t, "ranks", eval[string](t, b, `document.getElementById("m-view").selectedOptions[0].textContent`))
	assert.Equal(t, 64, eval[int](t, b, `document.querySelectorAll("#m-view-svg svg text.tick").length / 2`), "a label per rank")
	assert.GreaterOrEqual(t, eval[float64](t, b, `document.querySelector("#m-view-svg rect.cell").getBoundingClientRect().width`), 8.0, "cells large enough to point at")
	b.shot(t, "#comm-matrix", "wide64-matrix.png")
	b.shot(t, "#load-balance", "wide64-balance.png")
	b.check(t)
}
