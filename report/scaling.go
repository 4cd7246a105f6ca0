package report

import (
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"strings"
	"time"

	"mpiflow/analysis"
	"mpiflow/internal/atomicfile"
	"mpiflow/internal/units"
	"mpiflow/templates"
)

// scalingCurves is how many items' efficiency curves a chart draws.
const scalingCurves = 8

// scalingPage is the page of WriteScaling.
type scalingPage struct {
	Title, Kind, Ideal, Generated string
	Runs                          []scalingRunRow
	Charts                        []Chart
	Loops, Calls                  sortTable
	CSS                           template.CSS
}

type scalingRunRow struct {
	Ranks                         int
	Wall, PerRank, MPI, Eff, Path string
}

// WriteScaling writes to out the page of s: its runs, the efficiency
// curves of the loops and MPI calls that lose the most time, and their
// tables, self-contained and offline as the report.
func WriteScaling(out string, s *analysis.Scaling) error {
	return atomicfile.Write(out, func(w io.Writer) error { return writeScaling(w, s) })
}

func writeScaling(w io.Writer, s *analysis.Scaling) error {
	p := &scalingPage{Title: "mpiflow scaling", Kind: "strong", Ideal: "the same work, the time per rank falling as 1/ranks",
		Generated: time.Now().UTC().Format(time.RFC3339)}
	if s.Weak {
		p.Kind, p.Ideal = "weak", "work growing with the ranks, the same time per rank"
	}
	for _, r := range s.Runs {
		path := r.Path
		if r.Incomplete {
			path += " (incomplete run)"
		}
		p.Runs = append(p.Runs, scalingRunRow{Ranks: r.Ranks, Wall: units.NS(r.Wallclock), PerRank: units.Seconds(r.TimePerRank / 1e9),
			MPI: fmt.Sprintf("%.2f", r.MPIPct), Eff: fmt.Sprintf("%.2f", r.Efficiency), Path: path})
	}
	p.Charts = []Chart{scalingChart(s, s.Loops, "scaling-loops", "Efficiency of the loops"),
		scalingChart(s, s.Calls, "scaling-calls", "Efficiency of the MPI calls")}
	p.Loops = scalingTable(s, s.Loops, "scaling-loops-table", "loop")
	p.Calls = scalingTable(s, s.Calls, "scaling-calls-table", "MPI call")
	tfs := templates.FS()
	css, err := fs.ReadFile(tfs, "report.css")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	p.CSS = template.CSS(css)
	t, err := template.New("scaling.html").Funcs(template.FuncMap{"add": func(a, b int) int { return a + b }}).
		ParseFS(tfs, "scaling.html", "report.html")
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return t.ExecuteTemplate(w, "scaling.html", p)
}

// scalingChart draws the efficiency of the items that lose the most time
// against the runs' rank counts (a log scale), with the ideal at 1.
func scalingChart(s *analysis.Scaling, items []analysis.ScalingItem, id, title string) Chart {
	c := Chart{ID: id, Title: title, W: 600, H: 320,
		Caption: fmt.Sprintf("Parallel efficiency against the run of %d rank(s), of the %d items that lose the most time in the largest run; dashed: ideal.", s.Runs[0].Ranks, scalingCurves)}
	if len(items) > scalingCurves {
		items = items[:scalingCurves]
	}
	mx := 1.0
	for _, it := range items {
		for _, pt := range it.Points {
			mx = math.Max(mx, pt.Efficiency)
		}
	}
	top := c.yAxis(mx, "efficiency")
	c.xLabel("ranks (log scale)")
	plotW, plotH := c.W-padL-padR, c.H-padT-padB
	lo, hi := math.Log2(float64(max(s.Runs[0].Ranks, 1))), math.Log2(float64(max(s.Runs[len(s.Runs)-1].Ranks, 1)))
	x := func(ranks int) float64 {
		if hi <= lo {
			return padL + plotW/2
		}
		return padL + plotW*(math.Log2(float64(max(ranks, 1)))-lo)/(hi-lo)
	}
	y := func(e float64) float64 { return padT + plotH*(1-e/top) }
	for _, r := range s.Runs {
		c.Texts = append(c.Texts, Text{X: x(r.Ranks), Y: c.H - padB + 14, Anchor: "middle", Text: fmt.Sprint(r.Ranks), Class: "tick"})
	}
	c.Polys = append(c.Polys, Poly{Points: fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(s.Runs[0].Ranks), y(1), x(s.Runs[len(s.Runs)-1].Ranks), y(1)),
		Stroke: OtherColor, Class: "dashed", Title: "ideal"})
	c.Legend = append(c.Legend, LegendItem{Color: OtherColor, Label: "ideal", Dashed: true})
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	colors := CallColors(names)
	for _, it := range items {
		var pts []string
		for k, pt := range it.Points {
			if pt.Present && pt.Efficiency > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.Runs[k].Ranks), y(pt.Efficiency)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		if len(pts) == 1 { // a dot
			pts = append(pts, pts[0])
		}
		c.Polys = append(c.Polys, Poly{Points: strings.Join(pts, " "), Stroke: colors[it.Name], Title: it.Name})
		c.Legend = append(c.Legend, LegendItem{Color: colors[it.Name], Label: it.Name})
	}
	return c
}

// scalingTable lists the items with their time per rank and efficiency in
// each run and their time lost.
func scalingTable(s *analysis.Scaling, items []analysis.ScalingItem, id, what string) sortTable {
	t := sortTable{ID: id, Head: []tableHead{{Label: what}, {Label: "lost (s)", Num: true, Title: "time lost in the largest run against ideal scaling, over the ranks"}}}
	for _, r := range s.Runs {
		t.Head = append(t.Head, tableHead{Label: fmt.Sprintf("t/rank @%d (s)", r.Ranks), Num: true}, tableHead{Label: fmt.Sprintf("eff @%d", r.Ranks), Num: true})
	}
	for _, it := range items {
		row := []tableCell{{Text: it.Name}, {Text: units.Seconds(it.Lost / 1e9), Key: num(it.Lost)}}
		for _, pt := range it.Points {
			if !pt.Present {
				row = append(row, tableCell{Text: "-"}, tableCell{Text: "-"})
				continue
			}
			eff := tableCell{Text: "-"} // the reference has no such item
			if it.HasReference() {
				eff = tableCell{Text: fmt.Sprintf("%.2f", pt.Efficiency), Key: num(pt.Efficiency)}
			}
			row = append(row, tableCell{Text: units.Seconds(pt.TimePerRank / 1e9), Key: num(pt.TimePerRank)}, eff)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
