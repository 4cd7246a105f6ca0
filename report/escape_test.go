package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// Hostile strings put into every trace-derived field that reaches the page.
const (
	evilCmd  = `"><script>window.__pwned=1</script>`
	evilHost = `<img src=x onerror="window.__pwned=2">'`
	evilFn   = `<script>window.__pwned=3</script>"'`
	evilCall = `MPI_</script><script>window.__pwned=4</script>`
	evilFile = `/src/"x'<b>.c`
)

func evilJob(t *testing.T) string {
	return genJob(t, 4, 2000, func(h *flowgraph.Header, ranks []*flowgraph.Rank) {
		h.Command = []string{"./app", evilCmd, "'q'"}
		h.JobID = evilHost
		h.Hosts[0] = evilHost
		ranks[0].Host = evilHost
		for _, r := range ranks {
			for i := range r.Graph.Sites {
				r.Graph.Sites[i].Function = evilFn
				r.Graph.Sites[i].File = evilFile
				r.Graph.Sites[i].Line = 42
			}
		}
		ranks[0].Graph.Nodes[0].Key.Call = evilCall
	})
}

func TestEscaping(t *testing.T) {
	in := evilJob(t)
	_, html := writeReport(t, in, "evil.html", Options{})
	for _, raw := range []string{"<script>window.__pwned", "<img", `onerror="`} {
		assert.NotContains(t, html, raw)
	}
	// Exactly our three scripts: the JSON data, the matrix and the code.
	assert.Equal(t, 3, strings.Count(html, "<script"), "script elements")
	assert.Contains(t, html, "&#34;&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;", "command escaped in the banner")
	assert.Contains(t, html, `\u003cscript\u003ewindow.__pwned=3`, "function name escaped in the JSON data")
	assert.Contains(t, html, "&lt;script&gt;window.__pwned=3&lt;/script&gt;", "function name escaped in graph tooltips")
}

func TestBrowserEscaping(t *testing.T) {
	b := newBrowser(t)
	in := evilJob(t)
	out, _ := writeReport(t, in, "evil.html", Options{})
	b.open(t, out)
	assert.Equal(t, "undefined", eval[string](t, b, `typeof window.__pwned`), "no injected script ran")
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll("img, foreignObject").length`))
	assert.Equal(t, "./app "+evilCmd+" 'q'", eval[string](t, b, `document.getElementById("job-command").textContent`))
	assert.Contains(t, eval[string](t, b, `document.getElementById("job-hosts").textContent`), evilHost)
	titles := eval[string](t, b, `Array.from(document.querySelectorAll("#g-levels svg title")).map(t => t.textContent).join("\n")`)
	assert.Contains(t, titles, evilFn, "call site function shown as text on hover")
	assert.Contains(t, eval[string](t, b, `Array.from(document.querySelectorAll("figure.chart title")).map(t => t.textContent).join("\n")`), evilCall)
	assert.Contains(t, eval[string](t, b, `document.getElementById("sites-table").textContent`), evilFn, "call site in the table")
	assert.Contains(t, eval[string](t, b, `document.getElementById("calls-table").textContent`), evilCall, "call in the table")
	// The matrix by hosts labels the first host with its name, shortened.
	assert.Contains(t, eval[string](t, b, `(function () { var s = document.getElementById("m-view"); s.value = "1"; s.dispatchEvent(new Event("change"));
		return Array.from(document.querySelectorAll("#m-view-svg text")).map(t => t.textContent).join("\n"); })()`), evilHost[:15])
	b.shot(t, "#job", "evil-job.png")
	b.check(t)
}

func TestSanitizeSVG(t *testing.T) {
	in := `<?xml version="1.0"?><!DOCTYPE svg><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10pt" onload="alert(1)">
<title>G</title><script>alert(2)</script><g id="x0_1" class="node"><a xlink:href="javascript:alert(3)" xlink:title="f &lt;script&gt;"><polygon fill="url(http://evil/)" stroke="red" points="1,2"/></a>
<a xlink:href="#lv-0-1"><text x="1" style="x" onclick="alert(4)">a &lt;b&gt; &amp; &quot;c&quot;</text></a></g>
<foreignObject><div>x</div></foreignObject></svg>`
	out, err := SanitizeSVG([]byte(in))
	require.NoError(t, err)
	for _, bad := range []string{"onload", "alert", "<script", "javascript:", "url(", "style=", "onclick", "foreignObject", "<div", "xmlns", "<title>G</title>"} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, `<title>f &lt;script&gt;</title>`)
	assert.Contains(t, out, `href="#lv-0-1"`)
	assert.Contains(t, out, `a &lt;b&gt; &amp; &#34;c&#34;`)
	assert.Contains(t, out, `<polygon stroke="red" points="1,2"></polygon>`)

	_, err = SanitizeSVG([]byte(`<svg><g></svg>`))
	assert.Error(t, err)
}
