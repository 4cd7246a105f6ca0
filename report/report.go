// Package report writes the self-contained HTML report of an mpiflow
// recording (job banner, MPI statistics charts, loop-collapsed event flow
// graphs, rank comparison, Ocelotl overview and timeline) and colored DOT
// graphs of single ranks.
//
// The report is one HTML file that works offline: CSS and JavaScript are
// inlined from the embedded templates, charts are SVG drawn here, graphs
// are laid out by Graphviz at report time, and the data the page's script
// needs is embedded as JSON by html/template, which escapes every string
// taken from the trace.
package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"mpiflow/flowgraph"
	"mpiflow/internal/parallel"
	"mpiflow/loops"
	"mpiflow/templates"
)

// Options tune a report. Zero values select the defaults.
type Options struct {
	// DotPath is the Graphviz dot executable ("dot" from PATH).
	DotPath string
	// Slices is the number of time slices of the Ocelotl overview (30).
	Slices int
	// MaxGroups bounds the rank groups whose graphs are embedded (24).
	MaxGroups int
	// MaxLevels bounds the levels (top level and loops) drawn per group (100).
	MaxLevels int
	// MaxNodes skips laying out levels with more nodes than this (400).
	MaxNodes int
	// TimelineRanks bounds the ranks of the timeline (128, the first ranks).
	TimelineRanks int
	// TimelineSegments bounds the segments of the timeline over all its
	// ranks (300,000).
	TimelineSegments int
	// MaxPRuns bounds the runs of the Ocelotl partitioning when it looks
	// for the significant values of p, and so the embedded partitions
	// (by default from 40 for large jobs to 300 for small ones, so that
	// the search takes a few seconds at most).
	MaxPRuns int
	// Workers bounds parallel work (GOMAXPROCS).
	Workers int
	// NoOcelotl skips the spatiotemporal overview.
	NoOcelotl bool
	// Progress, if set, is called as the report is built with the stage
	// ("reading ranks", "finding loops", "drawing graphs", "timeline",
	// "overview") and how much of it is done, so that a command can show
	// progress on a terminal; the report itself never prints.
	Progress func(stage string, done, total int)
	// NoResolve keeps call sites that the recording left unresolved as
	// object+offset, instead of looking them up in the objects' debug
	// information.
	NoResolve bool
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Slices, 30)
	def(&o.MaxGroups, 24)
	def(&o.MaxLevels, 100)
	def(&o.MaxNodes, 400)
	def(&o.TimelineRanks, 128)
	def(&o.TimelineSegments, 300_000)
	def(&o.Workers, runtime.GOMAXPROCS(0))
}

// progress reports a step of the build to opt.Progress, safely from
// several goroutines: done counts the calls per stage.
type progress struct {
	mu   sync.Mutex
	fn   func(stage string, done, total int)
	done map[string]int
}

func newProgress(fn func(string, int, int)) *progress {
	return &progress{fn: fn, done: map[string]int{}}
}

// begin reports that stage starts, with nothing done yet.
func (p *progress) begin(stage string, total int) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn(stage, 0, total)
}

// step records one more unit of stage done out of total.
func (p *progress) step(stage string, total int) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done[stage]++
	p.fn(stage, p.done[stage], total)
}

// num is a float64 that encodes as JSON with 5 significant digits, and
// NaN or infinities as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 5, 64), nil
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

type banner struct {
	Command, JobID, Start, Ranks, Hosts, HostList, Wall, MPIPct, Bytes, Lib, Clock, Counters, Events, Key string
	Incomplete                                                                                            bool
	IncompleteRanks                                                                                       string
}

type crumb struct {
	Loop int
	Name string
}

// loopRow is one loop of a level in the table under its drawing.
type loopRow struct {
	Loop                                        int
	Name, Where, Iter, Time, PerIter, CallsIter string
	Share                                       string
}

type levelView struct {
	Loop, Parent int
	Name, Header string
	Loops        []loopRow
	SVG          template.HTML
	DOT          string
	Err          string
	Path         []crumb
	Legend       legend
}

type legend struct {
	Metric, NodeMax, EdgeMax string
}

type groupView struct {
	Index    int
	Members  string
	Size     int
	Rendered bool
	Levels   []levelView
}

type jsRank struct {
	Label string `json:"label"`
	Rank  int    `json:"rank"`
	Host  string `json:"host"`
	Group int    `json:"group"`
}

type jsLevel struct {
	Loop   int    `json:"loop"`
	Parent int    `json:"parent"`
	Name   string `json:"name"`
}

type jsGroup struct {
	Members  []int     `json:"members"`
	Rendered bool      `json:"rendered"`
	Levels   []jsLevel `json:"levels"`
}

type jsData struct {
	Calls    []string        `json:"calls"`
	Colors   []string        `json:"colors"`
	Metrics  []string        `json:"metrics"`
	Ranks    []jsRank        `json:"ranks"`
	Groups   []jsGroup       `json:"groups"`
	Elems    []string        `json:"elems"`
	StartUp  []int           `json:"startup"` // keys of MPI_Init nodes, outside the color scales
	Vals     []map[int][]num `json:"vals"`    // per rank: element key -> value per metric
	Compare  [2]int          `json:"cmp"`
	Ocelotl  *ocelotlData    `json:"ocelotl"`
	Timeline *timelineData   `json:"timeline"`
}

type page struct {
	Title        string
	Generated    string
	Banner       banner
	Charts       []Chart
	Groups       []groupView
	Metrics      []string
	GraphNote    string
	LoopsNote    string
	OcelotlNote  string
	TimelineNote string
	Data         jsData
	CSS          template.CSS
	JS           template.JS
}

// rankInfo is what the report keeps of one rank.
type rankInfo struct {
	r      *flowgraph.Rank
	label  string
	levels []LevelGraph
	sig    string
	err    error
}

// Write reads the recording f and writes its report to w.
func Write(ctx context.Context, w io.Writer, f *flowgraph.File, opt Options) error {
	opt.defaults()
	p, err := build(ctx, f, &opt)
	if err != nil {
		return err
	}
	return render(w, p)
}

// WriteFile writes the report of the recording at in to out, through a
// temporary file renamed at the end so that a failure never leaves a
// partial report.
func WriteFile(ctx context.Context, out, in string, opt Options) error {
	f, err := flowgraph.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, ".mpiflow-report-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	var buf bytes.Buffer
	err = Write(ctx, &buf, f, opt)
	if err == nil {
		// CreateTemp makes the file private; a report is for sharing.
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		_, err = tmp.Write(buf.Bytes())
	}
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

func render(w io.Writer, p *page) error {
	tfs := templates.FS()
	css, err := fs.ReadFile(tfs, "report.css")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	js, err := fs.ReadFile(tfs, "report.js")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	p.CSS = template.CSS(css)
	p.JS = template.JS(js)
	t, err := template.New("report.html").Funcs(template.FuncMap{
		"add": func(a, b int) int { return a + b },
	}).ParseFS(tfs, "report.html")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	if err := t.Execute(w, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// rankRanges formats ascending rank numbers as "0-3, 8, 10-11".
func rankRanges(rs []int) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[j])
		} else {
			fmt.Fprintf(&b, "%d", rs[i])
		}
		i = j + 1
	}
	return b.String()
}

func build(ctx context.Context, f *flowgraph.File, opt *Options) (*page, error) {
	h := &f.Header
	if len(f.Index) == 0 {
		return nil, fmt.Errorf("%s: no ranks in the file", f.Path)
	}
	threads := false
	for _, e := range f.Index {
		threads = threads || e.Thread != 0
	}
	metrics := Metrics(h.Counters)
	infos := make([]*rankInfo, len(f.Index))
	sum := flowgraph.NewSummary()
	ct := &callTimes{total: map[string]float64{}, count: map[string]int64{}, bySize: map[string][]float64{}}
	resolver := flowgraph.NewResolver()
	var resolveErr error
	prog := newProgress(opt.Progress)
	for i := range f.Index {
		r, err := f.ReadRank(i)
		if err != nil {
			return nil, err
		}
		prog.step("reading ranks", len(f.Index))
		if !opt.NoResolve {
			// Show function, file and line on hover when the objects are
			// here; the raw object+offset stays otherwise.
			for k := range r.Graph.Sites {
				if cs := &r.Graph.Sites[k]; cs.Function == "" {
					if err := resolver.Resolve(cs); err != nil && resolveErr == nil {
						resolveErr = err
					}
				}
			}
		}
		label := fmt.Sprintf("rank %d", r.Rank)
		if threads {
			label = fmt.Sprintf("rank %d.%d", r.Rank, r.Thread)
		}
		infos[i] = &rankInfo{r: r, label: label}
		sum.Add(r)
		rt := rankTimes{label: label, user: float64(r.UserTime) / 1e9, perCall: map[string]float64{}}
		for k := range r.Graph.Nodes {
			n := &r.Graph.Nodes[k]
			if flowgraph.IsInit(n.Key.Call) {
				// Like IPM (and flowgraph.Summary), statistics start at
				// the end of MPI_Init, whose start-up cost would dwarf
				// short runs.
				continue
			}
			t := float64(n.Time.Total) / 1e9
			rt.perCall[n.Key.Call] += t
			rt.mpi += t
			ct.total[n.Key.Call] += t
			ct.count[n.Key.Call] += n.Count
			b := 0
			if n.Count > 0 && n.Bytes.Total > 0 {
				mean := float64(n.Bytes.Total) / float64(n.Count)
				b = 1 + max(0, int(math.Ceil(math.Log2(mean))))
			}
			s := ct.bySize[n.Key.Call]
			for len(s) <= b {
				s = append(s, 0)
			}
			s[b] += t
			ct.bySize[n.Key.Call] = s
		}
		ct.ranks = append(ct.ranks, rt)
	}
	// All calls by time, MPI_Init last so that the calls of the run get
	// the most distinct colors; the charts leave MPI_Init out.
	var calls, inits []string
	for _, c := range sum.SortedCalls() {
		if flowgraph.IsInit(c.Call) {
			inits = append(inits, c.Call)
			continue
		}
		calls = append(calls, c.Call)
	}
	ct.calls = calls
	calls = append(calls[:len(calls):len(calls)], inits...)
	ct.colors = CallColors(calls)
	callIdx := make(map[string]int, len(calls))
	data := jsData{Calls: calls, Metrics: metrics}
	for i, c := range calls {
		callIdx[c] = i
		data.Colors = append(data.Colors, ct.colors[c])
	}

	p := &page{Title: "mpiflow report", Generated: time.Now().UTC().Format(time.RFC3339), Metrics: metrics}
	p.Banner = makeBanner(h, sum, infos)
	p.Charts = []Chart{chartTimePerCall(ct), chartBySize(ct), chartBalance(ct), chartPerRank(ct)}

	if err := buildGraphs(ctx, p, &data, infos, metrics, h.Counters, opt, prog); err != nil {
		return nil, err
	}
	if resolveErr != nil {
		p.GraphNote = strings.TrimSpace(p.GraphNote + " Some call sites are shown as object+offset: " + resolveErr.Error() + ".")
	}

	// Timeline of the first ranks.
	var span int64
	for _, ri := range infos {
		span = max(span, rankSpan(ri.r))
	}
	ntl := min(len(infos), opt.TimelineRanks)
	bins := min(4000, max(100, opt.TimelineSegments/(3*ntl)))
	tb := newTimelineBuilder(span, bins, callIdx)
	tl := &timelineData{Span: float64(span) / 1e9, Tick: float64(tb.tick) / 1e9, Bins: bins}
	if ntl < len(infos) {
		tl.Note = fmt.Sprintf("the timeline shows the first %d of %d ranks", ntl, len(infos))
	}
	tl.Ranks = make([]timeline, ntl)
	err := parallel.For(ntl, opt.Workers, func(i int) error {
		var err error
		tl.Ranks[i], err = tb.rank(infos[i].r, infos[i].label)
		prog.step("timeline", ntl)
		return err
	})
	if err != nil {
		p.TimelineNote = "Timeline not available: " + err.Error()
	} else {
		data.Timeline = tl
		p.TimelineNote = tl.Note
	}
	if opt.NoOcelotl {
		p.OcelotlNote = "Spatiotemporal overview not available: disabled by option."
	} else {
		prog.begin("overview", 1)
		if oc, err := buildOcelotl(h, ranksOf(infos), opt.Slices, opt.MaxPRuns, opt.Workers, ct.colors); err != nil {
			p.OcelotlNote = "Spatiotemporal overview not available: " + err.Error()
		} else {
			data.Ocelotl = oc
			p.OcelotlNote = strings.Join(oc.Notes, "; ")
		}
		prog.step("overview", 1)
	}
	p.Data = data
	return p, ctx.Err()
}

func makeBanner(h *flowgraph.Header, sum *flowgraph.Summary, infos []*rankInfo) banner {
	mpi, wall, bytes := sum.Totals()
	hosts := h.DistinctHosts()
	var events int64
	var incomplete []int
	for _, rs := range sum.Ranks {
		events += rs.Events
		if !rs.Complete {
			incomplete = append(incomplete, rs.Rank)
		}
	}
	hl := hosts
	more := ""
	if len(hl) > 12 {
		more = fmt.Sprintf(" and %d more", len(hl)-12)
		hl = hl[:12]
	}
	b := banner{
		Command: strings.Join(h.Command, " "), JobID: h.JobID,
		Ranks:    fmt.Sprintf("%d (%d blocks in the file)", h.NumRanks, len(infos)),
		Hosts:    strconv.Itoa(len(hosts)),
		HostList: strings.Join(hl, ", ") + more,
		Wall:     FormatSeconds(float64(h.Wallclock)/1e9) + " s",
		Bytes:    FormatBytes(float64(bytes)),
		Lib:      strings.TrimSpace(h.MPILibrary + " " + h.MPIVersion),
		Clock:    h.ClockSource, Counters: strings.Join(h.Counters, ", "),
		Events: strconv.FormatInt(events, 10), Key: strings.Join(h.KeyFields, ", "),
		Incomplete: h.Incomplete || len(incomplete) > 0, IncompleteRanks: rankRanges(incomplete),
	}
	if wall > 0 {
		b.MPIPct = fmt.Sprintf("%.2f %%", 100*float64(mpi)/float64(wall))
	}
	if h.StartUnixNano != 0 {
		b.Start = time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339)
	}
	if b.Counters == "" {
		b.Counters = "none"
	}
	return b
}

func ranksOf(infos []*rankInfo) []*flowgraph.Rank {
	out := make([]*flowgraph.Rank, len(infos))
	for i, ri := range infos {
		out[i] = ri.r
	}
	return out
}

// rawLevels is the uncollapsed graph as one level, used when the loop
// analysis fails for a rank.
func rawLevels(g *flowgraph.Graph, metrics []string, counters []string) []LevelGraph {
	cm := newCounterMap(counters)
	lg := LevelGraph{Name: "whole graph (loops not collapsed)", Initial: g.Initial}
	for v := range g.Nodes {
		n := &g.Nodes[v]
		lg.Nodes = append(lg.Nodes, Elem{Kind: KindNode, Key: "call " + nodeKey(g, v), Call: n.Key.Call, Site: n.Key.Site,
			Where: siteWhere(g, n.Key.Site), Signature: siteSignature(g, n.Key.Site), Vals: newVals(metrics, float64(n.Time.Total)/1e9, float64(n.Count), float64(n.Bytes.Total))})
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		el := Elem{Kind: KindEdge, Key: "edge " + lg.Nodes[e.Src].Key + " -> " + lg.Nodes[e.Dst].Key, Src: e.Src, Dst: e.Dst, Site: -1,
			Vals: newVals(metrics, float64(e.Time.Total)/1e9, float64(e.Count), math.NaN())}
		derived(metrics, cm, e.Counters, e.Time.Total, el.Vals)
		lg.Edges = append(lg.Edges, el)
	}
	return []LevelGraph{lg}
}

// RankLevels returns the drawable levels of a rank's graph: the collapsed
// levels, or the whole graph as one level (and the error) when the loop
// analysis fails.
func RankLevels(g *flowgraph.Graph, counters []string) ([]LevelGraph, error) {
	metrics := Metrics(counters)
	c, err := loops.Collapse(g)
	if err != nil {
		return rawLevels(g, metrics, counters), err
	}
	return BuildLevels(g, c, metrics, counters), nil
}

// structure is the signature of all levels of a rank: element keys and
// level nesting, no values. Ranks with equal structure share one drawing.
func structure(levels []LevelGraph) string {
	var b strings.Builder
	for i := range levels {
		lg := &levels[i]
		fmt.Fprintf(&b, "L%d<%d %d\n", lg.Loop, lg.Parent, lg.Initial)
		for _, e := range lg.Nodes {
			b.WriteString(e.Key)
			b.WriteByte('\n')
		}
		for _, e := range lg.Edges {
			fmt.Fprintf(&b, "%d>%d\n", e.Src, e.Dst)
		}
	}
	return b.String()
}

func elemName(e *Elem, lg *LevelGraph) string {
	switch e.Kind {
	case KindLoop:
		return fmt.Sprintf("loop at %s (%s)", e.Call, e.Where)
	case KindEdge:
		return fmt.Sprintf("%s -> %s", elemShort(&lg.Nodes[e.Src]), elemShort(&lg.Nodes[e.Dst]))
	}
	return fmt.Sprintf("%s (%s)", e.Call, e.Where)
}

func elemShort(e *Elem) string {
	if e.Kind == KindLoop {
		return "loop@" + e.Call
	}
	if e.Site >= 0 {
		return fmt.Sprintf("%s cs=%d", e.Call, e.Site)
	}
	return e.Call
}

func buildGraphs(ctx context.Context, p *page, data *jsData, infos []*rankInfo, metrics, counters []string, opt *Options, prog *progress) error {
	var loopErrs []string
	err := parallel.For(len(infos), opt.Workers, func(i int) error {
		ri := infos[i]
		ri.levels, ri.err = RankLevels(&ri.r.Graph, counters)
		ri.sig = structure(ri.levels)
		prog.step("finding loops", len(infos))
		return nil
	})
	if err != nil {
		return err
	}
	// Global element keys, so that values can be compared across ranks.
	keyIdx := map[string]int{}
	key := func(e *Elem, lg *LevelGraph) int {
		k, ok := keyIdx[e.Key]
		if !ok {
			k = len(data.Elems)
			keyIdx[e.Key] = k
			data.Elems = append(data.Elems, elemName(e, lg))
			if e.StartUp() {
				data.StartUp = append(data.StartUp, k)
			}
		}
		return k
	}
	nt := metricIndex(metrics, MetricTime)
	nc := metricIndex(metrics, MetricCount)
	bySig := map[string]int{}
	var groups [][]int
	data.Vals = make([]map[int][]num, len(infos))
	for i, ri := range infos {
		if ri.err != nil {
			loopErrs = append(loopErrs, fmt.Sprintf("%s: %v", ri.label, ri.err))
		}
		g, ok := bySig[ri.sig]
		if !ok {
			g = len(groups)
			bySig[ri.sig] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
		vals := map[int][]num{}
		for l := range ri.levels {
			lg := &ri.levels[l]
			for _, list := range [][]Elem{lg.Nodes, lg.Edges} {
				for k := range list {
					e := &list[k]
					vals[key(e, lg)] = nums(e.Vals)
				}
			}
		}
		data.Vals[i] = vals
		data.Ranks = append(data.Ranks, jsRank{Label: ri.label, Rank: ri.r.Rank, Host: ri.r.Host, Group: g})
	}
	if len(loopErrs) > 0 {
		p.LoopsNote = "Loop analysis failed for some ranks; their whole graph is shown instead: " + strings.Join(loopErrs, "; ")
	}
	// Compare by default the rank with the most compute time against the
	// one of its group (else of the job) with the least.
	slow := 0
	compute := func(i int) float64 {
		var t float64
		for _, lg := range infos[i].levels {
			for _, e := range lg.Edges {
				t += e.Vals[nt]
			}
		}
		return t
	}
	ct := make([]float64, len(infos))
	for i := range infos {
		ct[i] = compute(i)
		if ct[i] > ct[slow] {
			slow = i
		}
	}
	fast := -1
	for _, pass := range []bool{true, false} {
		for i := range infos {
			if i == slow || (pass && data.Ranks[i].Group != data.Ranks[slow].Group) {
				continue
			}
			if fast < 0 || ct[i] < ct[fast] {
				fast = i
			}
		}
		if fast >= 0 {
			break
		}
	}
	if fast < 0 {
		fast = slow
	}
	data.Compare = [2]int{fast, slow}

	// Group means and drawings. The largest groups are drawn first when
	// there are more groups than MaxGroups.
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(groups[order[a]]) > len(groups[order[b]]) })
	drawn := make([]bool, len(groups))
	for k, g := range order {
		drawn[g] = k < opt.MaxGroups
		// Always draw the groups of the default comparison.
		if g == data.Ranks[fast].Group || g == data.Ranks[slow].Group {
			drawn[g] = true
		}
	}
	if len(groups) > opt.MaxGroups {
		p.GraphNote = fmt.Sprintf("%d groups of ranks with different graph structure; the graphs of the %d largest are embedded, use `mpiflow graph FILE --rank R` for the others.", len(groups), opt.MaxGroups)
	}
	p.Groups = make([]groupView, len(groups))
	data.Groups = make([]jsGroup, len(groups))
	var dotErr error
	var mu sync.Mutex
	err = parallel.For(len(groups), opt.Workers, func(g int) error {
		members := groups[g]
		rep := infos[members[0]]
		mean := make([]LevelGraph, len(rep.levels))
		var ranks []int
		for _, m := range members {
			ranks = append(ranks, infos[m].r.Rank)
		}
		for l := range rep.levels {
			mean[l] = rep.levels[l]
			mean[l].Nodes = meanElems(infos, members, l, false)
			mean[l].Edges = meanElems(infos, members, l, true)
		}
		gv := groupView{Index: g, Members: rankRanges(uniqSorted(ranks)), Size: len(members), Rendered: drawn[g]}
		jg := jsGroup{Members: members, Rendered: drawn[g]}
		var dots []string
		var dotLevel []int
		for l := range mean {
			lg := &mean[l]
			jg.Levels = append(jg.Levels, jsLevel{Loop: lg.Loop, Parent: lg.Parent, Name: lg.Name})
			lv := levelView{Loop: lg.Loop, Parent: lg.Parent, Name: lg.Name, Header: lg.Header}
			// Crumbs from the top level down to the parent; enclosing loops
			// have smaller IDs, the bound only guards against bad input.
			for x, steps := lg.Parent, 0; l > 0 && x >= 0 && x < len(mean) && steps <= len(mean); steps++ {
				name := "top level"
				if x > 0 {
					name = mean[x].Name
				}
				lv.Path = append([]crumb{{Loop: x, Name: name}}, lv.Path...)
				if x == 0 {
					break
				}
				x = mean[x].Parent
			}
			for _, e := range lg.Nodes {
				if e.Kind != KindLoop {
					continue
				}
				t, it := e.Vals[nt], e.Vals[nc]
				row := loopRow{Loop: e.Loop, Name: e.Name, Where: e.Call + " at " + e.Where, Iter: formatCount(it),
					Time: FormatSeconds(t), Share: fmt.Sprintf("%.1f%%", 100*e.Share)}
				if it > 0 {
					row.PerIter = FormatSeconds(t / it)
					row.CallsIter = fmt.Sprintf("%.3g", float64(e.Calls)/it)
				}
				lv.Loops = append(lv.Loops, row)
			}
			k := metricIndex(metrics, MetricTime)
			lv.Legend = legend{Metric: MetricTime, NodeMax: formatMetric(MetricTime, maxOf(lg.Nodes, k)), EdgeMax: formatMetric(MetricTime, maxOf(lg.Edges, k))}
			switch {
			case !drawn[g]:
			case l >= opt.MaxLevels:
				lv.Err = fmt.Sprintf("not drawn: more than %d loops in this rank group", opt.MaxLevels)
			case len(lg.Nodes) > opt.MaxNodes:
				lv.Err = fmt.Sprintf("not drawn: %d nodes, more than %d", len(lg.Nodes), opt.MaxNodes)
			default:
				// The page shows title and legend around the drawing; the
				// labels are the group's means until the page's script
				// writes in the selected rank's values.
				d := lg.DOT(metrics, DOTOptions{Metric: MetricTime, NoLegend: true,
					ElemID: func(kind, i int) string {
						if kind == KindEdge {
							return fmt.Sprintf("x%d_%d", g, keyIdx[lg.Edges[i].Key])
						}
						return fmt.Sprintf("x%d_%d", g, keyIdx[lg.Nodes[i].Key])
					},
					LoopHref: func(loop int) string { return fmt.Sprintf("#lv-%d-%d", g, loop) }})
				dots = append(dots, d)
				dotLevel = append(dotLevel, l)
				lv.DOT = d
			}
			gv.Levels = append(gv.Levels, lv)
		}
		if len(dots) > 0 {
			svgs, err := Render(ctx, opt.DotPath, dots)
			if err != nil {
				mu.Lock()
				dotErr = err
				mu.Unlock()
				for _, l := range dotLevel {
					gv.Levels[l].Err = "Graph picture not available: " + err.Error() + ". The DOT text follows; render it with `dot -Tsvg`."
				}
			} else {
				for k, l := range dotLevel {
					s, err := SanitizeSVG(svgs[k])
					if err != nil {
						gv.Levels[l].Err = err.Error()
						continue
					}
					gv.Levels[l].SVG = template.HTML(s) // sanitized: only drawing elements, escaped values
					gv.Levels[l].DOT = ""
				}
			}
		}
		p.Groups[g] = gv
		data.Groups[g] = jg
		prog.step("drawing graphs", len(groups))
		return nil
	})
	if err != nil {
		return err
	}
	if dotErr != nil {
		if errors.Is(dotErr, ErrNoDot) {
			p.GraphNote = strings.TrimSpace(p.GraphNote + " Graphviz is not installed: graphs are given as DOT text.")
		} else {
			p.GraphNote = strings.TrimSpace(p.GraphNote + " Graphviz failed: " + dotErr.Error())
		}
	}
	return nil
}

func uniqSorted(v []int) []int {
	sort.Ints(v)
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// meanElems averages the values of the nodes (or edges) of level l over the
// members of a group, whose levels have the same structure.
func meanElems(infos []*rankInfo, members []int, l int, edges bool) []Elem {
	list := func(m int) []Elem {
		if edges {
			return infos[m].levels[l].Edges
		}
		return infos[m].levels[l].Nodes
	}
	first := list(members[0])
	out := make([]Elem, len(first))
	for i := range first {
		out[i] = first[i]
		v := make([]float64, len(first[i].Vals))
		for _, m := range members {
			for k, x := range list(m)[i].Vals {
				v[k] += x
			}
		}
		for k := range v {
			v[k] /= float64(len(members))
		}
		out[i].Vals = v
		if len(members) > 1 && out[i].Kind == KindLoop {
			var share float64
			for _, m := range members {
				share += list(m)[i].Share
			}
			out[i].Share = share / float64(len(members))
		}
	}
	return out
}
