package analysis

import (
	"cmp"
	"slices"
	"strings"
)

// Scaling is how the loops and MPI calls of one program scale over runs
// at several rank counts: each item's time per rank in each run and its
// parallel efficiency against the run of fewest ranks (the reference).
type Scaling struct {
	// Weak tells weak scaling (the work grows with the ranks: ideal is the
	// same time per rank); else strong scaling (the same work: ideal is
	// the time per rank falling as 1/ranks).
	Weak bool `json:"weak"`
	// Runs are the jobs by ascending rank count; Runs[0] is the reference.
	Runs []ScalingRun `json:"runs"`
	// Loops and Calls are the items by descending time lost in the
	// largest run (Lost), loops aligned across runs by the path of their
	// headers' call sites (as Diff aligns them, over all groups of
	// ranks), calls by name (MPI_Init and MPI_Finalize aside: their time
	// is the launcher's, as in Diff).
	Loops []ScalingItem `json:"loops"`
	Calls []ScalingItem `json:"calls"`
}

// ScalingRun is one job of a Scaling.
type ScalingRun struct {
	Path  string `json:"path"`
	Ranks int    `json:"ranks"`
	// Wallclock is the job's; TimePerRank its ranks' mean time from the
	// end of MPI_Init, MPIPct their time in MPI over it, in %.
	Wallclock   int64   `json:"wallclock_ns"`
	TimePerRank float64 `json:"time_per_rank_ns"`
	MPIPct      float64 `json:"mpi_percent"`
	// Efficiency is the whole run's parallel efficiency against the
	// reference (see ScalingPoint.Efficiency).
	Efficiency float64 `json:"efficiency"`
	Incomplete bool    `json:"incomplete"`
}

// ScalingItem is one loop or MPI call over the runs.
type ScalingItem struct {
	// Name is the loop's header path joined by " > " (as in Diff), or
	// the call's name.
	Name string `json:"name"`
	// Points are the item in each run (in the order of Scaling.Runs); a
	// run without it has a point with Present false.
	Points []ScalingPoint `json:"points"`
	// Lost is the time the item loses in the largest run against ideal
	// scaling from the reference, summed over its ranks, in ns (negative
	// when it scales better than ideal); 0 unless both runs have it.
	Lost float64 `json:"lost_ns"`
}

// HasReference tells whether the reference run has the item, so that its
// points have efficiencies.
func (it *ScalingItem) HasReference() bool { return len(it.Points) > 0 && it.Points[0].Present }

// ScalingPoint is an item in one run.
type ScalingPoint struct {
	Present bool `json:"present"`
	// Time is summed over the ranks, TimePerRank over the run's ranks
	// (all of them: an item on some ranks only costs the run that much
	// per rank), in ns.
	Time        float64 `json:"time_ns"`
	TimePerRank float64 `json:"time_per_rank_ns"`
	Calls       float64 `json:"calls"`
	// Efficiency is the reference's time per rank over this run's,
	// times the reference's ranks over this run's for strong scaling:
	// 1 is ideal, below 1 time lost. 0 when either is missing.
	Efficiency float64 `json:"efficiency"`
}

// NewScaling compares the jobs (any order; sorted by rank count) of one
// program: their loops (the jobs need their loops found) and MPI calls.
func NewScaling(jobs []*Job, weak bool) *Scaling {
	jobs = slices.Clone(jobs)
	slices.SortStableFunc(jobs, func(a, b *Job) int { return cmp.Compare(len(a.Ranks), len(b.Ranks)) })
	s := &Scaling{Weak: weak}
	loopSums := make([]map[string]*rankSums, len(jobs))
	callSums := make([]map[string]*rankSums, len(jobs))
	var loopOrder, callOrder []string
	seenLoop, seenCall := map[string]bool{}, map[string]bool{}
	for k, j := range jobs {
		mpi, wall, _ := j.Summary.Totals()
		n := max(len(j.Ranks), 1)
		s.Runs = append(s.Runs, ScalingRun{Path: j.Path, Ranks: j.Header.NumRanks, Wallclock: j.Header.Wallclock,
			TimePerRank: float64(wall) / float64(n), MPIPct: Percent(mpi, wall), Incomplete: j.Header.Incomplete})
		loopSums[k] = map[string]*rankSums{}
		for gi := range j.Groups {
			order, paths, _, sums := groupLoops(j, gi)
			for _, key := range order {
				name := strings.Join(paths[key], " > ")
				all := loopSums[k][name]
				if all == nil {
					all = &rankSums{}
					loopSums[k][name] = all
				}
				x := sums[key]
				all.time += x.time
				all.calls += x.calls
				all.ranks = append(all.ranks, x.ranks...)
				if !seenLoop[name] {
					seenLoop[name] = true
					loopOrder = append(loopOrder, name)
				}
			}
		}
		callSums[k] = map[string]*rankSums{}
		for _, c := range j.Calls {
			if launcherCall(c.Call) { // the launcher's, not the program's
				continue
			}
			callSums[k][c.Call] = &rankSums{time: float64(c.Time.Total), calls: float64(c.Count), ranks: []int{0}}
			if !seenCall[c.Call] {
				seenCall[c.Call] = true
				callOrder = append(callOrder, c.Call)
			}
		}
	}
	for k := range s.Runs {
		s.Runs[k].Efficiency = s.efficiency(s.Runs[0].TimePerRank, s.Runs[k].TimePerRank, 0, k)
	}
	s.Loops = s.items(loopOrder, loopSums)
	s.Calls = s.items(callOrder, callSums)
	return s
}

// efficiency is the parallel efficiency of run k, whose time per rank is
// t, against the reference's t0 (see ScalingPoint.Efficiency).
func (s *Scaling) efficiency(t0, t float64, ref, k int) float64 {
	if t0 <= 0 || t <= 0 {
		return 0
	}
	e := t0 / t
	if !s.Weak {
		e *= float64(s.Runs[ref].Ranks) / float64(s.Runs[k].Ranks)
	}
	return e
}

// items makes the items of names from their sums per run, by descending
// time lost in the largest run.
func (s *Scaling) items(names []string, sums []map[string]*rankSums) []ScalingItem {
	last := len(s.Runs) - 1
	out := make([]ScalingItem, 0, len(names))
	for _, name := range names {
		it := ScalingItem{Name: name, Points: make([]ScalingPoint, len(s.Runs))}
		for k := range s.Runs {
			x := sums[k][name]
			if x == nil || len(x.ranks) == 0 {
				continue
			}
			it.Points[k] = ScalingPoint{Present: true, Time: x.time, TimePerRank: x.time / float64(max(s.Runs[k].Ranks, 1)), Calls: x.calls}
		}
		ref := it.Points[0]
		for k := range it.Points {
			if p := &it.Points[k]; p.Present && ref.Present {
				p.Efficiency = s.efficiency(ref.TimePerRank, p.TimePerRank, 0, k)
			}
		}
		if end := it.Points[last]; ref.Present && end.Present && last > 0 {
			// Ideal: the same total time (strong), or the reference's
			// time per rank on every rank (weak).
			ideal := ref.Time
			if s.Weak {
				ideal = ref.TimePerRank * float64(s.Runs[last].Ranks)
			}
			it.Lost = end.Time - ideal
		}
		out = append(out, it)
	}
	slices.SortStableFunc(out, func(a, b ScalingItem) int { return cmp.Compare(b.Lost, a.Lost) })
	return out
}
