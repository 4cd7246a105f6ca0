package report

import (
	"context"
	"fmt"
	"strings"

	"mpiflow/analysis"
	"mpiflow/internal/units"
)

// maxCompareRows bounds the rows of the comparison table; `mpiflow diff
// --json` has them all.
const maxCompareRows = 200

// compareView is the section that compares the report's run (B) with a
// baseline (A): the banners side by side and the aligned loops and call
// sites by change, as `mpiflow diff A B` prints them.
type compareView struct {
	Banner []compareRow
	Notes  []string
	Table  sortTable
	// Trees are the matched groups' loop trees side by side, Graphs
	// this run's graphs of those groups colored by ratio, with Legend;
	// GraphNote says what was not drawn.
	Trees     []compareTree
	Graphs    []groupView
	GraphNote string
	Legend    []swatch
}

// compareRow is one line of the banners: a quantity in A and in B and how
// it changed.
type compareRow struct {
	Name, A, B, Change string
}

func newCompareView(ctx context.Context, d *analysis.JobDiff, job *analysis.Job, opt *Options) *compareView {
	a, b, c := &d.A, &d.B, &d.Change
	same := func(eq bool) string {
		if eq {
			return "same"
		}
		return "changed"
	}
	ranks := func(j *analysis.DiffJob) string { return fmt.Sprintf("%d on %d host(s)", j.Ranks, len(j.Hosts)) }
	rankChange := same(c.SameHosts && c.Ranks == 0)
	if c.Ranks != 0 {
		rankChange = fmt.Sprintf("%+d rank(s)", c.Ranks)
	}
	ratio := "-"
	if c.WallclockRatio > 0 {
		ratio = fmt.Sprintf("x%.2f", c.WallclockRatio)
	}
	v := &compareView{Banner: []compareRow{
		{"file", a.Path, b.Path, ""},
		{"command", strings.Join(a.Command, " "), strings.Join(b.Command, " "), same(c.SameCommand)},
		{"ranks", ranks(a), ranks(b), rankChange},
		{"MPI library", a.MPILibrary + " " + a.MPIVersion, b.MPILibrary + " " + b.MPIVersion, same(c.SameMPI)},
		{"wallclock (s)", units.NS(a.Wallclock), units.NS(b.Wallclock), ratio},
		{"% MPI", fmt.Sprintf("%.2f", a.MPIPct), fmt.Sprintf("%.2f", b.MPIPct), fmt.Sprintf("%+.2f points", c.MPIPct)},
	}}
	for _, j := range []struct {
		name string
		job  *analysis.DiffJob
	}{{"The baseline", a}, {"This run", b}} {
		if j.job.Incomplete {
			v.Notes = append(v.Notes, j.name+" is incomplete: some ranks did not reach MPI_Finalize.")
		}
	}
	if d.PerRank {
		v.Notes = append(v.Notes, fmt.Sprintf("The runs have %d and %d rank blocks: times, iterations, calls and bytes are means per rank.", a.Blocks, b.Blocks))
	}
	t := sortTable{ID: "compare-table", Head: []tableHead{{Label: "item"},
		{Label: "status", Title: "matched items are 'changed', or 'noise' when the change is within the item's noise; MPI_Init and MPI_Finalize are the launcher's ('start-up', 'shut-down'), never a change"},
		{Label: "time A (s)", Num: true}, {Label: "time B (s)", Num: true}, {Label: "change (s)", Num: true},
		{Label: "noise (s)", Num: true, Title: "the largest of the item's spread over the ranks, its variation within each run (the spread of its time per iteration or per call in 30 parts of the run, 5th to 95th percentile) and a hundredth of a rank's time"},
		{Label: "ratio", Num: true, Title: "B / A"}, {Label: "time/iter A (s)", Num: true}, {Label: "time/iter B (s)", Num: true},
		{Label: "calls A", Num: true}, {Label: "calls B", Num: true}, {Label: "% MPI A", Num: true}, {Label: "% MPI B", Num: true}}}
	items := d.Items
	if len(items) > maxCompareRows {
		v.Notes = append(v.Notes, fmt.Sprintf("The %d items of largest change of %d; `mpiflow diff --json` lists them all.", maxCompareRows, len(items)))
		items = items[:maxCompareRows]
	}
	side := func(s *analysis.DiffSide, loop bool) []tableCell {
		if s == nil {
			return []tableCell{{Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: "-"}}
		}
		per := tableCell{Text: "-"}
		if loop {
			per = tableCell{Text: units.Seconds(s.TimePerIteration / 1e9), Key: num(s.TimePerIteration)}
		}
		return []tableCell{{Text: units.Seconds(s.Time / 1e9), Key: num(s.Time)}, per, {Text: units.Count(s.Calls), Key: num(s.Calls)},
			{Text: fmt.Sprintf("%.2f", s.MPIPct), Key: num(s.MPIPct)}}
	}
	for _, it := range items {
		name := it.Name
		if it.Kind == analysis.ItemLoop {
			name = "loop " + name
		}
		sa, sb := side(it.A, it.Kind == analysis.ItemLoop), side(it.B, it.Kind == analysis.ItemLoop)
		r := tableCell{Text: ratioText(&it)}
		if it.Ratio > 0 {
			r.Key = num(it.Ratio)
		}
		t.Rows = append(t.Rows, []tableCell{{Text: name}, {Text: it.Verdict}, sa[0], sb[0],
			{Text: units.Seconds(it.Change.Time / 1e9), Key: num(it.Change.Time)}, {Text: units.Seconds(it.Noise / 1e9), Key: num(it.Noise)}, r, sa[1], sb[1], sa[2], sb[2], sa[3], sb[3]})
	}
	v.Table = t
	v.Trees = compareTrees(d)
	v.Graphs, v.GraphNote = compareGraphs(ctx, d, job, opt)
	v.Legend = ratioLegend()
	return v
}

// maxTreeRows bounds the rows of an aligned loop tree on the page.
const maxTreeRows = 300

// compareTree is the loop trees of a pair of matched groups side by side.
type compareTree struct {
	Number             int // of B's group, from 1 as in mpiflow loops
	AMembers, BMembers string
	Open               bool
	Rows               []treeRow
	Note               string
}

// treeRow is one aligned loop: its side in A and B (empty where it is
// not) and the ratio between, colored by the verdict.
type treeRow struct {
	Indent         float64 // em
	A, B           treeSide
	Ratio, Verdict string
	Fill, Ink      string
}

type treeSide struct {
	Name, Time, PerIter string
}

// compareTrees presents the diff's aligned loop trees; the first is open.
func compareTrees(d *analysis.JobDiff) []compareTree {
	var out []compareTree
	for k, t := range d.Trees {
		m := d.Groups[t.Group]
		ct := compareTree{Number: m.B + 1, AMembers: m.AMembers, BMembers: m.BMembers, Open: k == 0}
		rows := t.Rows
		if len(rows) > maxTreeRows {
			ct.Note = fmt.Sprintf("The first %d loops of %d; `mpiflow diff --json` lists them all.", maxTreeRows, len(rows))
			rows = rows[:maxTreeRows]
		}
		for _, r := range rows {
			var it *analysis.DiffItem
			if r.Item >= 0 {
				it = &d.Items[r.Item]
			}
			tr := treeRow{Indent: 0.4 + 1.2*float64(r.Depth), Ratio: ratioText(it), Fill: itemColor(it)}
			tr.Ink = TextColor(tr.Fill)
			switch {
			case it != nil:
				tr.Verdict = it.Verdict
				tr.A, tr.B = treeSideOf(it.A, r.Header), treeSideOf(it.B, r.Header)
			case r.ALoop > 0:
				tr.A.Name = r.Header
			default:
				tr.B.Name = r.Header
			}
			ct.Rows = append(ct.Rows, tr)
		}
		out = append(out, ct)
	}
	return out
}

// treeSideOf presents one job's side of a loop item, empty where it is
// not.
func treeSideOf(s *analysis.DiffSide, header string) treeSide {
	if s == nil {
		return treeSide{}
	}
	return treeSide{Name: s.Loop + ": " + header, Time: units.Seconds(s.Time / 1e9), PerIter: units.Seconds(s.TimePerIteration / 1e9)}
}
