// Package report writes the self-contained HTML report of an mpiflow
// recording (job banner, MPI call and call-site tables with their charts,
// communication matrix, load balance, loop-collapsed event flow graphs,
// rank comparison, Ocelotl overview and timeline) and colored DOT graphs
// of single ranks. Each section has a stable id that a URL can link to.
//
// The report is one HTML file that works offline: CSS and JavaScript are
// inlined from the embedded templates, charts are SVG drawn here, graphs
// are laid out by Graphviz at report time, and the data the page's script
// needs is embedded as JSON by html/template, which escapes every string
// taken from the trace.
package report

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/internal/atomicfile"
	"mpiflow/internal/parallel"
	"mpiflow/internal/units"
	"mpiflow/loops"
	"mpiflow/templates"
)

// Options tune a report. Zero values select the defaults.
type Options struct {
	// DotPath is the Graphviz dot executable ("dot" from PATH).
	DotPath string
	// Renderer lays out the graphs (by default Graphviz{Path: DotPath});
	// a failure leaves their DOT text in the page.
	Renderer Renderer
	// Slices is the number of time slices of the Ocelotl overview (30).
	Slices int
	// WindowFrom and WindowTo, when WindowTo > 0, are the time window of
	// the overview's first view, in ns since the start of the run (by
	// default the first view starts at the end of MPI_Init); a window
	// outside the run is an error (analysis.ErrWindow).
	WindowFrom, WindowTo int64
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
	// Compare, if set, is the analysis of another run of the program (a
	// baseline, loaded with its loops): the report then has a section of
	// what changed from it to this run (analysis.Diff).
	Compare *analysis.Job
	// Progress, if set, is called as the report is built with the stage
	// ("drawing graphs", "timeline", "overview"; reading the ranks and
	// finding loops are the analysis's) and how much of it is done, so
	// that a command can show progress on a terminal; the report itself
	// never prints.
	Progress func(stage string, done, total int)
}

// renderer is o.Renderer, by default Graphviz.
func (o *Options) renderer() Renderer {
	if o.Renderer == nil {
		return Graphviz{Path: o.DotPath}
	}
	return o.Renderer
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
	// Budget says what the recording's budget approximated ("": nothing).
	Budget string
	// Spread is each quantity over the ranks (analysis.Job.Spreads), as
	// IPM's banner, formatted.
	Spread []spreadRow
	// Exe and Env are rank 0's program and the settings of its
	// environment (Header.Executable, Header.Env).
	Exe string
	Env []string
}

type spreadRow struct {
	Name, Total, Mean, Min, Max string
	MinRank, MaxRank            int
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
	// Across the group's ranks (loops.TreeRow): the least and largest
	// share with their ranks, and the ranks that have the loop when not
	// all do.
	Spread, Ranks string
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
	Index   int // into the data's groups
	Number  int // shown to people, from 1 as in mpiflow loops
	Members string
	Size    int
	// Rep labels the representative, whose graph is drawn, when the
	// members have Structures > 1 different structures.
	Rep        string
	Structures int
	Rendered   bool
	Levels     []levelView
}

type jsRank struct {
	Label string `json:"label"`
	Rank  int    `json:"rank"`
	Host  string `json:"host"`
	Group int    `json:"group"`
	// Total is the rank's time after MPI_Init in s, the scale of time
	// differences in the rank comparison.
	Total num `json:"total"`
}

type jsLevel struct {
	Loop   int    `json:"loop"`
	Parent int    `json:"parent"`
	Name   string `json:"name"`
	// Key is the element key of the loop's node (-1 for the top level),
	// so that the comparison names a loop by each rank's own number.
	Key int `json:"key"`
}

type jsGroup struct {
	Members []int `json:"members"`
	// Rep indexes the ranks: the representative, whose graph is drawn.
	Rep        int       `json:"rep"`
	Structures int       `json:"structures"`
	Rendered   bool      `json:"rendered"`
	Levels     []jsLevel `json:"levels"`
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
	Tables       tablesView
	Groups       []groupView
	Metrics      []string
	GraphNote    string
	LoopsNote    string
	OcelotlNote  string
	TimelineNote string
	// Compare is the comparison with a baseline run (Options.Compare).
	Compare *compareView
	Data    jsData
	CSS     template.CSS
	JS      template.JS
}

// Write writes the report of the analyzed job to w. A job loaded without
// its ranks' sequences or loops (analysis.Options.NoSequences, NoLoops)
// has each rank read again, whole, once: its loops are then found, and its
// ranks grouped, as the job's analysis would; the page is the same.
func Write(ctx context.Context, w io.Writer, job *analysis.Job, opt Options) error {
	opt.defaults()
	p, err := build(ctx, job, &opt)
	if err != nil {
		return err
	}
	return render(w, p)
}

// WriteFile writes the report of the analyzed job to out, through a
// temporary file renamed at the end so that a failure never leaves a
// partial report.
func WriteFile(ctx context.Context, out string, job *analysis.Job, opt Options) error {
	return atomicfile.Write(out, func(w io.Writer) error { return Write(ctx, w, job, opt) })
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

// build makes the page of job: its tables, then one pass over the ranks'
// events for their loops, the overview and the timeline, then the graphs.
func build(ctx context.Context, job *analysis.Job, opt *Options) (*page, error) {
	metrics := job.Metrics
	ct := newCallTimes(job)
	prog := newProgress(opt.Progress)
	// All calls by time, MPI_Init last so that the calls of the run get
	// the most distinct colors; the charts leave MPI_Init out.
	calls := slices.Clip(ct.calls)
	for _, c := range job.Calls {
		if flowgraph.IsInit(c.Call) {
			calls = append(calls, c.Call)
		}
	}
	ct.colors = CallColors(calls, groupNames...)
	callIdx := make(map[string]int, len(calls))
	data := jsData{Calls: calls, Metrics: metrics}
	for i, c := range calls {
		callIdx[c] = i
		data.Colors = append(data.Colors, ct.colors[c])
	}

	p := &page{Title: "mpiflow report", Generated: time.Now().UTC().Format(time.RFC3339), Metrics: metrics}
	p.Banner = makeBanner(job)
	buildTables(p, job, ct)

	ranks := job.Recorded()
	var ie int64 // the latest end of MPI_Init
	for _, r := range job.Ranks {
		ie = max(ie, r.InitEnd)
	}
	tp := newTimelinePlan(job, ranks, ie, callIdx, opt)
	pending := !job.HasLoops()
	if err := walkRanks(job, ranks, ie, pending, tp, p, &data, ct, opt, prog); err != nil {
		return nil, err
	}
	if pending {
		job.GroupRanks()
	}
	if len(job.Groups) == 0 {
		return nil, fmt.Errorf("%s: no loop analysis", job.Path)
	}
	if opt.Compare != nil {
		p.Compare = newCompareView(ctx, analysis.Diff(opt.Compare, job), job, opt)
	}
	if err := buildGraphs(ctx, p, &data, job, opt, prog); err != nil {
		return nil, err
	}
	if job.ResolveErr != nil {
		p.GraphNote = strings.TrimSpace(p.GraphNote + " Some call sites are shown as object+offset: " + job.ResolveErr.Error() + ".")
	}
	p.Data = data
	return p, ctx.Err()
}

// newCallTimes is the calls of the job but MPI_Init by time, with their
// totals, for the charts; colors are left to the caller.
func newCallTimes(job *analysis.Job) *callTimes {
	ct := &callTimes{total: map[string]float64{}, count: map[string]int64{}, sizes: job.Sizes, ranks: rankValues(job)}
	for _, c := range job.Calls {
		if flowgraph.IsInit(c.Call) {
			continue
		}
		ct.calls = append(ct.calls, c.Call)
		ct.total[c.Call] = float64(c.Time.Total) / 1e9
		ct.count[c.Call] = c.Count
	}
	return ct
}

// timelinePlan is the timeline being drawn: each rank's row (-1: none),
// the builder of the rows, their data and the errors of drawing them.
type timelinePlan struct {
	row  []int
	tb   *timelineBuilder
	tl   *timelineData
	errs []error
}

// newTimelinePlan chooses the timeline's ranks (all, or the outliers and
// a spread of the rest) and its resolution: every event when they fit
// the budget of segments, else bins per rank. ie is the latest end of
// MPI_Init.
func newTimelinePlan(job *analysis.Job, ranks []*flowgraph.Rank, ie int64, callIdx map[string]int, opt *Options) *timelinePlan {
	var span int64
	for _, r := range ranks {
		span = max(span, r.End())
	}
	shown, shownNote := timelineRanks(job.Summary.Ranks, opt.TimelineRanks)
	ntl := len(shown)
	row := make([]int, len(ranks))
	for i := range row {
		row[i] = -1
	}
	for k, i := range shown {
		row[i] = k
	}
	var events int64
	for _, i := range shown {
		events += ranks[i].Graph.NumEvents
	}
	bins := min(4000, max(100, opt.TimelineSegments/(3*ntl)))
	exact := events <= int64(opt.TimelineSegments)
	if exact {
		bins = 0
	}
	tb := newTimelineBuilder(span, bins, callIdx)
	tl := &timelineData{Span: float64(span) / 1e9, Tick: float64(tb.tick) / 1e9, Bins: bins, Exact: exact}
	if ie > 0 && ie < span {
		tl.Start = float64(ie) / 1e9
	}
	var notes []string
	if shownNote != "" {
		notes = append(notes, shownNote)
	}
	if !exact {
		notes = append(notes, fmt.Sprintf("its %d events are more than the %d segments it holds: calls shorter than %.3g s are merged per %.3g s of the run (`mpiflow trace FILE --from A --to B` lists a window's events)",
			events, opt.TimelineSegments, float64(tb.binW)/2e9, float64(tb.binW)/1e9))
	}
	tl.Note = strings.Join(notes, "; ")
	tl.Ranks = make([]timeline, ntl)
	return &timelinePlan{row: row, tb: tb, tl: tl, errs: make([]error, ntl)}
}

// walkRanks reads the ranks' events once for the loops (of a job loaded
// without them, when pending), the overview and the timeline: a rank is
// loaded whole (Job.Whole) once, for the overview's models, its loops are
// found then, and its timeline row is drawn in the overview's walk of its
// events; ranks the overview did not reach (disabled, or failed first) are
// read after it. At most Workers ranks' sequences are in memory at once.
func walkRanks(job *analysis.Job, ranks []*flowgraph.Rank, ie int64, pending bool, tp *timelinePlan, p *page, data *jsData, ct *callTimes, opt *Options, prog *progress) error {
	ntl := len(tp.tl.Ranks)
	visited := make([]bool, len(ranks))
	drawn := make([]bool, len(ranks)) // its timeline row, if it has one
	whole := func(i int) (*flowgraph.Rank, error) {
		r, err := job.Whole(i)
		if err != nil || visited[i] {
			return r, err
		}
		visited[i] = true
		if pending {
			job.FindLoops(i, r)
			prog.step("finding loops", len(ranks))
		}
		return r, nil
	}
	draw := func(i int, tl timeline, err error) {
		k := tp.row[i]
		tp.tl.Ranks[k], tp.errs[k] = tl, err
		tp.tl.Ranks[k].Index = i
		drawn[i] = true
		prog.step("timeline", ntl)
	}
	visit := func(i int, r *flowgraph.Rank) aggregate.RankVisitor {
		if tp.row[i] < 0 || tp.tb.eventsOnly {
			return nil
		}
		return &timelineVisit{rankWalk: tp.tb.walk(r, job.Ranks[i].Label), redo: func() (timeline, error) {
			return tp.tb.rank(r, job.Ranks[i].Label)
		}, draw: func(tl timeline, err error) { draw(i, tl, err) }}
	}
	if pending {
		prog.begin("finding loops", len(ranks))
	}
	prog.begin("timeline", ntl)
	if opt.NoOcelotl {
		p.OcelotlNote = "Spatiotemporal overview not available: disabled by option."
	} else {
		prog.begin("overview", 1)
		if oc, err := buildOcelotl(&job.Header, ranks, ie, rankWalks{whole, visit}, *opt, ct.calls, ct.colors); errors.Is(err, analysis.ErrWindow) {
			return err
		} else if err != nil {
			p.OcelotlNote = "Spatiotemporal overview not available: " + err.Error()
		} else {
			data.Ocelotl = oc
			p.OcelotlNote = strings.Join(oc.Notes, "; ")
		}
		prog.step("overview", 1)
	}
	err := parallel.For(len(ranks), opt.Workers, func(i int) error {
		row := tp.row[i] >= 0 && !drawn[i]
		if visited[i] && !row || !pending && !row {
			return nil
		}
		r, err := whole(i)
		if err == nil && row {
			tl, err := tp.tb.rank(r, job.Ranks[i].Label)
			draw(i, tl, err)
		}
		return err
	})
	if err != nil && pending {
		return err // no rank may be left without its loops
	}
	if err = errors.Join(err, errors.Join(tp.errs...)); err != nil {
		p.TimelineNote = "Timeline not available: " + err.Error()
	} else {
		tp.tl.pairMessages()
		data.Timeline = tp.tl
		p.TimelineNote = tp.tl.Note
	}
	return nil
}

// timelineVisit draws a rank's timeline row in the overview's walk of its
// events (aggregate.RankVisitor), or, if the walk did not give it every
// interval, on its own (redo).
type timelineVisit struct {
	*rankWalk
	redo func() (timeline, error)
	draw func(timeline, error)
}

// End implements aggregate.RankVisitor.
func (v *timelineVisit) End(walked bool) {
	if !walked {
		v.draw(v.redo())
		return
	}
	v.flush()
	v.draw(*v.tl, nil)
}

func makeBanner(job *analysis.Job) banner {
	h := &job.Header
	mpi, wall, bytes := job.Summary.Totals()
	hosts := h.DistinctHosts()
	var events int64
	var incomplete []int
	for _, rs := range job.Summary.Ranks {
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
		Command: strings.Join(h.Command, " "), JobID: h.JobID, Exe: h.Executable, Env: h.Env,
		Ranks:    fmt.Sprintf("%d (%d blocks in the file)", h.NumRanks, len(job.Ranks)),
		Hosts:    strconv.Itoa(len(hosts)),
		HostList: strings.Join(hl, ", ") + more,
		Wall:     units.NS(h.Wallclock) + " s",
		Bytes:    units.Bytes(float64(bytes)),
		Lib:      strings.TrimSpace(h.MPILibrary + " " + h.MPIVersion),
		Clock:    h.ClockSource, Counters: strings.Join(h.Counters, ", "),
		Events: strconv.FormatInt(events, 10), Key: strings.Join(h.KeyFields, ", "),
		Incomplete: h.Incomplete || len(incomplete) > 0, IncompleteRanks: analysis.RankRanges(slices.Compact(incomplete)),
	}
	if wall > 0 {
		b.MPIPct = fmt.Sprintf("%.2f %%", 100*float64(mpi)/float64(wall))
	}
	if u := job.Budget; u.Approximate > 0 || u.Over > 0 {
		order := "every other call is in its recorded order"
		if u.Arranged > 0 {
			order += " but in the intervals below"
		}
		b.Budget = fmt.Sprintf("Run lengths approximate: %d of %d runs of a repeated call (a poll's tries) have lengths "+
			"spread evenly within their timing interval, to fit the recording's budget of %s a rank (MPIFLOW_BUDGET); "+
			"%s and every count is exact (largest error %d events).",
			u.Approximate, u.Runs, units.Bytes(float64(u.Budget)), order, u.ErrMax)
		if u.Arranged > 0 {
			b.Budget += fmt.Sprintf(" Where that was not enough, %d timing intervals (the densest first) keep every call's count "+
				"and time but not the order of their branches: %d events hold another call than recorded.", u.Arranged, u.Moved)
		}
		if u.Over > 0 {
			b.Budget += fmt.Sprintf(" %d of %d rank blocks exceed the budget even so.", u.Over, u.Blocks)
		}
	}
	if h.StartUnixNano != 0 {
		b.Start = time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339)
	}
	for _, q := range job.Spreads() {
		b.Spread = append(b.Spread, spreadRow{Name: q.Name, Total: q.Format(q.Total), Mean: q.Format(q.Mean),
			Min: q.Format(q.Min), Max: q.Format(q.Max), MinRank: q.MinRank, MaxRank: q.MaxRank})
	}
	if b.Counters == "" {
		b.Counters = "none"
	}
	return b
}

// elemName names an element in the rank comparison, as the graphs and
// `mpiflow loops` name it but without loop numbers, which differ between
// ranks of different structure: a loop is named by its header (the page
// adds each rank's loop number).
func elemName(e *analysis.Elem, lg *analysis.Level) string {
	switch e.Kind {
	case analysis.KindLoop:
		return fmt.Sprintf("loop (header %s at %s)", e.Call, e.Where)
	case analysis.KindEdge:
		end := func(n *analysis.Elem) string {
			if n.Kind == analysis.KindLoop {
				return "loop of " + n.Call + " at " + n.Where
			}
			return shortName(n)
		}
		name := fmt.Sprintf("%s -> %s", end(&lg.Nodes[e.Src]), end(&lg.Nodes[e.Dst]))
		if e.Back {
			name += " (back edge)"
		}
		return name
	}
	return fmt.Sprintf("%s (%s)", e.Call, e.Where)
}

// buildGraphs fills the rank comparison's data and draws the groups'
// levels.
func buildGraphs(ctx context.Context, p *page, data *jsData, job *analysis.Job, opt *Options, prog *progress) error {
	keys := &elemKeys{idx: map[string]int{}, data: data}
	if loopErrs := rankVals(data, job, keys); len(loopErrs) > 0 {
		p.LoopsNote = "Loop analysis failed for some ranks; their whole graph is shown instead: " + strings.Join(loopErrs, "; ")
	}
	fast, slow := job.ComparedRanks()
	data.Compare = [2]int{fast, slow}

	groups := job.Groups
	drawn := drawnGroups(job, fast, slow, opt.MaxGroups)
	if len(groups) > opt.MaxGroups {
		p.GraphNote = fmt.Sprintf("%d groups of ranks of different graph structure; the graphs of the %d largest are embedded, use `mpiflow graph FILE --rank R` for the others.", len(groups), opt.MaxGroups)
	}
	renderer := opt.renderer()
	p.Groups = make([]groupView, len(groups))
	data.Groups = make([]jsGroup, len(groups))
	var dotErr error
	var mu sync.Mutex
	err := parallel.For(len(groups), opt.Workers, func(g int) error {
		gv, jg, dots, dotLevel := buildGroup(job, g, drawn[g], keys.idx, opt)
		if err := renderGroup(ctx, renderer, &gv, dots, dotLevel); err != nil {
			mu.Lock()
			dotErr = err
			mu.Unlock()
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

// elemKeys numbers the elements of all ranks' levels by their key, so
// that values can be compared across ranks, and names them in data.
type elemKeys struct {
	idx  map[string]int
	data *jsData
}

// key is the number of element e of level lg, given on first sight.
func (ks *elemKeys) key(e *analysis.Elem, lg *analysis.Level) int {
	k, ok := ks.idx[e.Key]
	if !ok {
		k = len(ks.data.Elems)
		ks.idx[e.Key] = k
		ks.data.Elems = append(ks.data.Elems, elemName(e, lg))
		if e.StartUp() {
			ks.data.StartUp = append(ks.data.StartUp, k)
		}
	}
	return k
}

// rankVals fills the ranks of data and the values of their elements, and
// returns the ranks' loop analysis failures.
func rankVals(data *jsData, job *analysis.Job, keys *elemKeys) []string {
	var loopErrs []string
	data.Vals = make([]map[int][]num, len(job.Ranks))
	for i, r := range job.Ranks {
		if r.LoopErr != nil {
			loopErrs = append(loopErrs, fmt.Sprintf("%s: %v", r.Label, r.LoopErr))
		}
		vals := map[int][]num{}
		for l := range r.Levels {
			lg := &r.Levels[l]
			for _, list := range [][]analysis.Elem{lg.Nodes, lg.Edges} {
				for k := range list {
					e := &list[k]
					vals[keys.key(e, lg)] = nums(e.Vals)
				}
			}
		}
		data.Vals[i] = vals
		data.Ranks = append(data.Ranks, jsRank{Label: r.Label, Rank: r.Rank.Rank, Host: r.Host, Group: r.Group, Total: num(float64(job.Summary.Ranks[i].Wall) / 1e9)})
	}
	return loopErrs
}

// drawnGroups tells which groups have their graphs drawn: the maxGroups
// largest, and always the groups of the default comparison (ranks fast
// and slow).
func drawnGroups(job *analysis.Job, fast, slow, maxGroups int) []bool {
	groups := job.Groups
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(groups[order[a]].Members) > len(groups[order[b]].Members) })
	drawn := make([]bool, len(groups))
	for k, g := range order {
		drawn[g] = k < maxGroups
		if g == job.Ranks[fast].Group || g == job.Ranks[slow].Group {
			drawn[g] = true
		}
	}
	return drawn
}

// buildGroup makes the view of group g and its data for the page, and
// returns the DOT texts of the levels to draw with their indices.
func buildGroup(job *analysis.Job, g int, drawn bool, keyIdx map[string]int, opt *Options) (groupView, jsGroup, []string, []int) {
	metrics := job.Metrics
	mean := job.Groups[g].Levels
	gr := &job.Groups[g]
	gv := groupView{Index: g, Number: g + 1, Members: job.Members(g), Size: len(gr.Members), Structures: gr.Structures, Rendered: drawn}
	if gr.Structures > 1 {
		gv.Rep = job.Ranks[gr.Rep].Label
	}
	jg := jsGroup{Members: gr.Members, Rep: gr.Rep, Structures: gr.Structures, Rendered: drawn}
	var dots []string
	var dotLevel []int
	loopKeys := loopKeyIndex(mean, keyIdx)
	// The loop tree's rows by the representative's loop IDs, which
	// are those of the drawn levels.
	tree := map[int]*loops.TreeRow{}
	for k := range gr.Tree {
		tree[gr.Tree[k].ID] = &gr.Tree[k]
	}
	scale := RankScale(mean, metrics, analysis.MetricTime)
	nt := analysis.MetricIndex(metrics, analysis.MetricTime)
	for l := range mean {
		lg := &mean[l]
		jg.Levels = append(jg.Levels, jsLevel{Loop: lg.Loop, Parent: lg.Parent, Name: lg.Name, Key: loopKeys[l]})
		lv := levelView{Loop: lg.Loop, Parent: lg.Parent, Name: lg.Name, Header: lg.Header, Path: levelPath(mean, l)}
		lv.Loops = loopRows(lg, tree, nt, analysis.MetricIndex(metrics, analysis.MetricCount))
		lv.Legend = legend{Metric: analysis.MetricTime, NodeMax: formatMetric(analysis.MetricTime, maxOf(lg.Nodes, nt)),
			EdgeMax: formatMetric(analysis.MetricTime, maxOf(lg.Edges, nt))}
		switch {
		case !drawn:
		case l >= opt.MaxLevels:
			lv.Err = fmt.Sprintf("not drawn: more than %d loops in this rank group", opt.MaxLevels)
		case len(lg.Nodes) > opt.MaxNodes:
			lv.Err = fmt.Sprintf("not drawn: %d nodes, more than %d", len(lg.Nodes), opt.MaxNodes)
		default:
			// The page shows title and legend around the drawing; the
			// labels are the group's means until the page's script
			// writes in the selected rank's values.
			d := DOT(lg, metrics, DOTOptions{Metric: analysis.MetricTime, NoLegend: true, Scale: scale,
				ElemID: func(kind, i int) string {
					if kind == analysis.KindEdge {
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
	return gv, jg, dots, dotLevel
}

// levelPath is the crumbs of level l from the top level down to its
// parent; enclosing loops have smaller IDs, the bound only guards against
// bad input.
func levelPath(mean []analysis.Level, l int) []crumb {
	var path []crumb
	for x, steps := mean[l].Parent, 0; l > 0 && x >= 0 && x < len(mean) && steps <= len(mean); steps++ {
		name := "top level"
		if x > 0 {
			name = mean[x].Name
		}
		path = append([]crumb{{Loop: x, Name: name}}, path...)
		if x == 0 {
			break
		}
		x = mean[x].Parent
	}
	return path
}

// loopRows is the table of the loops of level lg, with their spread over
// the group's ranks from the loop tree's rows by loop ID; nt and nc index
// time and count in the elements' values.
func loopRows(lg *analysis.Level, tree map[int]*loops.TreeRow, nt, nc int) []loopRow {
	var rows []loopRow
	for _, e := range lg.Nodes {
		if e.Kind != analysis.KindLoop {
			continue
		}
		t, it := e.Vals[nt], e.Vals[nc]
		row := loopRow{Loop: e.Loop, Name: e.Name, Where: e.Call + " at " + e.Where, Iter: units.Count(it),
			Time: units.Seconds(t), Share: fmt.Sprintf("%.2f%%", 100*e.Share)}
		if tr, ok := tree[e.Loop]; ok {
			row.Spread = fmt.Sprintf("%.2f%% (rank %d) to %.2f%% (rank %d)", 100*tr.MinShare, tr.MinRank, 100*tr.MaxShare, tr.MaxRank)
			row.Ranks = fmt.Sprintf("%d", tr.Ranks)
			if tr.Where != "" {
				row.Ranks += ": " + tr.Where
			}
		}
		if it > 0 {
			row.PerIter = units.Seconds(t / it)
			row.CallsIter = units.PerIteration(e.Calls / it)
		}
		rows = append(rows, row)
	}
	return rows
}

// renderGroup lays out the DOT texts dots of the levels dotLevel of gv
// with r and puts the sanitized pictures in place of the texts; when r
// fails, the levels keep their text with a note, and the error is
// returned.
func renderGroup(ctx context.Context, r Renderer, gv *groupView, dots []string, dotLevel []int) error {
	if len(dots) == 0 {
		return nil
	}
	svgs, err := r.Render(ctx, dots)
	if err != nil {
		for _, l := range dotLevel {
			gv.Levels[l].Err = "Graph picture not available: " + err.Error() + ". The DOT text follows; render it with `dot -Tsvg`."
		}
		return err
	}
	for k, l := range dotLevel {
		s, err := SanitizeSVG(svgs[k])
		if err != nil {
			gv.Levels[l].Err = err.Error()
			continue
		}
		gv.Levels[l].SVG = template.HTML(s) // sanitized: only drawing elements, escaped values
		gv.Levels[l].DOT = ""
	}
	return nil
}
