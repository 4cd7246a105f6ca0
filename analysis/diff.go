package analysis

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// JobDiff is what changed from job A to job B, aligned by program structure:
// the groups of ranks of similar structure, the loops of each pair of
// matched groups (by the nesting path of their headers' call sites) and
// the calls at each call site.
type JobDiff struct {
	A DiffJob `json:"a"`
	B DiffJob `json:"b"`
	// Change compares the jobs' banners.
	Change JobChange `json:"change"`
	// PerRank tells that the jobs have different numbers of ranks (of
	// blocks: ranks, and their threads when recorded): the items' times,
	// iterations, calls and bytes are then means per rank (of the group
	// for loops, of the job for calls) instead of sums over the ranks, so
	// that runs at 2 and 4 ranks compare.
	PerRank bool `json:"per_rank"`
	// Groups pair the groups of ranks of A with those of B.
	Groups []GroupMatch `json:"groups"`
	// Items are the aligned loops and call sites, the changed, new and
	// gone first, then the noise, then MPI_Init and MPI_Finalize
	// (Launcher), each by descending absolute change of time
	// (Change.Time; a loop's shift when larger: weight).
	Items []DiffItem `json:"items"`
	// Trees are the loop trees of the matched groups aligned row by row,
	// for the report (not in mpiflow diff --json, whose items have the
	// same loops).
	Trees []DiffTree `json:"-"`
}

// DiffJob is one job's banner as the diff compares it.
type DiffJob struct {
	Path    string   `json:"path"`
	Command []string `json:"command"`
	// Ranks is the job's number of ranks, Blocks the blocks analysed
	// (the selected ranks, and their threads when recorded).
	Ranks      int      `json:"ranks"`
	Blocks     int      `json:"blocks"`
	Hosts      []string `json:"hosts"`
	MPILibrary string   `json:"mpi_library"`
	MPIVersion string   `json:"mpi_version"`
	// Wallclock is the job's (MPI_Init to MPI_Finalize of the slowest
	// rank); MPITime and WallTime are summed over the ranks from the end
	// of MPI_Init, and MPIPct is their ratio in %, as mpiflow stats
	// gives them.
	Wallclock int64   `json:"wallclock_ns"`
	MPITime   int64   `json:"mpi_ns"`
	WallTime  int64   `json:"wall_ns_sum"`
	MPIPct    float64 `json:"mpi_percent"`
	// Incomplete tells a partial run: some rank did not reach
	// MPI_Finalize.
	Incomplete bool `json:"incomplete"`
	// Groups is the number of groups of ranks; 0 when the job's loops
	// were not found (Options.NoLoops), so that no loop is compared.
	Groups int `json:"groups"`
}

// JobChange compares the banners of two jobs.
type JobChange struct {
	SameCommand bool `json:"same_command"`
	SameHosts   bool `json:"same_hosts"`
	SameMPI     bool `json:"same_mpi"`
	// Ranks and Wallclock are B minus A, WallclockRatio B over A (0
	// when A's is 0), MPIPct the change of the MPI share in points.
	Ranks          int     `json:"ranks"`
	Wallclock      int64   `json:"wallclock_ns"`
	WallclockRatio float64 `json:"wallclock_ratio"`
	MPIPct         float64 `json:"mpi_percent"`
	// Partial tells that either run is incomplete.
	Partial bool `json:"partial"`
}

// Status of an aligned group or item.
const (
	StatusMatched = "matched" // in both jobs
	StatusNew     = "new"     // only in B
	StatusGone    = "gone"    // only in A
)

// Kinds of items.
const (
	ItemLoop = "loop"
	ItemCall = "call"
)

// How two groups were matched (GroupMatch.By).
const (
	MatchSignature = "signature" // their representatives have the same structure
	MatchLoops     = "loops"     // their loop trees share the most loops
	MatchOrder     = "order"     // what was left, in the order of the groups
)

// GroupMatch pairs a group of ranks of A with one of B.
type GroupMatch struct {
	// A and B index the jobs' Groups; -1 when the group is only in the
	// other job.
	A int `json:"a"`
	B int `json:"b"`
	// AMembers and BMembers list the groups' ranks ("0-3,8"), ARanks and
	// BRanks count them.
	AMembers string `json:"a_members,omitempty"`
	BMembers string `json:"b_members,omitempty"`
	ARanks   int    `json:"a_ranks"`
	BRanks   int    `json:"b_ranks"`
	// By tells how they were matched (MatchSignature, MatchLoops,
	// MatchOrder); empty when they were not.
	By     string `json:"by,omitempty"`
	Status string `json:"status"`
}

// DiffItem is one loop or call site aligned between the jobs.
type DiffItem struct {
	Kind   string `json:"kind"`   // ItemLoop or ItemCall
	Status string `json:"status"` // StatusMatched, StatusNew or StatusGone
	// Group indexes JobDiff.Groups for a loop; -1 for a call site, which is
	// compared over the whole job.
	Group int `json:"group"`
	// Name names the item for people: a loop's Path joined by " > ", a
	// call site's call " at " its site.
	Name string `json:"name"`
	// Path is a loop's headers (call " at " call site, as loops.TreeRow
	// names them), outermost first; a self-loop's ends in " [self]".
	Path []string `json:"path,omitempty"`
	// Call and Site are a call site's call and label.
	Call string `json:"call,omitempty"`
	Site string `json:"site,omitempty"`
	// A and B are the item in each job, nil where it is not.
	A *DiffSide `json:"a"`
	B *DiffSide `json:"b"`
	// Change is B minus A, a missing side counting as zero.
	Change DiffValues `json:"change"`
	// Ratio is B's time over A's, IterationRatio that of a loop's time
	// per iteration; 0 unless both are above 0.
	Ratio          float64 `json:"ratio"`
	IterationRatio float64 `json:"iteration_ratio,omitempty"`
	// Noise is the largest of the item's spreads over the ranks that
	// have it (the largest minus the least time on one rank, in A and in
	// B), its variation within each run (DiffSide.Variation times its
	// mean time per rank) and a hundredth of a rank's mean time (the
	// least change that two runs of one program do not show): a noise
	// per rank, given in ns times the ranks that have the item (divided
	// as the sides' times are, the larger of A and B), so that it reads
	// against Change.Time. WithinNoise marks a matched item whose mean
	// time per rank that has it changed by at most the noise per rank: a
	// change that the ranks' variation, between them or over the run,
	// can explain.
	Noise       float64 `json:"noise_ns"`
	WithinNoise bool    `json:"within_noise"`
	// IterationNoise and IterationWithinNoise are the same for a loop's
	// time per iteration: the largest of the spreads of a rank's time
	// per iteration over the ranks and of its variation within each run,
	// and whether the time per iteration changed by no more (runs of
	// different lengths compare there).
	IterationNoise       float64 `json:"iteration_noise_ns,omitempty"`
	IterationWithinNoise bool    `json:"iteration_within_noise,omitempty"`
	// Launcher marks MPI_Init and MPI_Finalize, whose time is the
	// launcher's and the machine's, not the program's: never a change.
	Launcher bool `json:"launcher,omitempty"`
	// Verdict names the item's change for people, as the CLI, the JSON
	// and the report show it: "new", "gone", "start-up" and "shut-down"
	// (Launcher), "noise" (WithinNoise), "changed on rank R" (within
	// noise but for one rank's own change: work moved between ranks),
	// "changed, per iteration noise" (a loop whose time changed but not
	// its time per iteration: a longer run), "changed, most on rank R"
	// or "changed".
	Verdict string `json:"verdict"`
	// Shift is the rank whose own part of a matched item changed most,
	// paired rank by rank (nil when the jobs' ranks differ in number).
	// A change that moved between ranks (one rank computes longer now,
	// another less) leaves the means, and so WithinNoise, as they were:
	// the paired changes show it.
	Shift *RankShift `json:"shift,omitempty"`
}

// RankShift is the largest change of an item on one rank between two jobs
// of the same ranks: of a loop's compute (its time outside MPI calls:
// where a rank's own work changed, while the others' waits for it are
// consequences), of a call site's time.
type RankShift struct {
	Rank int `json:"rank"`
	// Change is B minus A on that rank, in ns; Before is A's value.
	Change float64 `json:"change_ns"`
	Before float64 `json:"before_ns"`
	// Noise is the rank's own variation within each run: that of the
	// loop's compute (the call site's time) per iteration (per call),
	// times its value, the larger of A's and B's, in ns.
	Noise float64 `json:"noise_ns"`
	// Stands tells that the change stands out: above a hundredth of a
	// rank's time (JobDiff.noiseFloor), above Noise, above a tenth of
	// the rank's value, and above twice the third largest change on a rank
	// (two ranks change when work moves from one to another; ranks that
	// all changed alike did so by a change of the program, not of a
	// rank), of two ranks that changed the same way above twice the
	// other's.
	Stands bool `json:"stands"`
}

// DiffValues are the quantities an item is compared by; times in ns.
type DiffValues struct {
	Time float64 `json:"time_ns"`
	// TimePerIteration and Iterations are a loop's.
	TimePerIteration float64 `json:"time_per_iteration_ns,omitempty"`
	Iterations       float64 `json:"iterations,omitempty"`
	Calls            float64 `json:"calls"`
	Bytes            float64 `json:"bytes"`
	// MPIPct is, for a loop, the share of its time inside MPI calls; for
	// a call site, its share of the job's MPI time (as the %mpi of
	// mpiflow stats; 0 for MPI_Init, outside the measured span).
	MPIPct float64 `json:"mpi_percent"`
}

// DiffSide is an item in one job.
type DiffSide struct {
	DiffValues
	// Loop is a loop's name in that job ("Loop 3").
	Loop string `json:"loop,omitempty"`
	// Ranks counts the ranks that have the item, RankList lists them.
	Ranks    int    `json:"ranks"`
	RankList string `json:"rank_list"`
	// MinTime and MaxTime are the least and largest time of the item on
	// one rank, in ns, MinRank and MaxRank those ranks.
	MinTime float64 `json:"min_time_ns"`
	MaxTime float64 `json:"max_time_ns"`
	MinRank int     `json:"min_rank"`
	MaxRank int     `json:"max_rank"`
	// Variation is how much the item's time per iteration (a loop's) or
	// per call (a call site's) varies within the run: the spread of its
	// values in 30 parts of its iterations (calls), from the 5th to the
	// 95th percentile, relative to its mean, the mean over the ranks weighted by their
	// time of the item. 0 when not known (timing not by whole intervals,
	// too few iterations).
	Variation float64 `json:"variation,omitempty"`
}

// Diff returns what changed from job a to job b. Its call sites are those
// of Job.CallSites (none with Options.NoSiteTable) and its loops those of
// the groups' trees (none with Options.NoLoops): load both jobs alike.
func Diff(a, b *Job) *JobDiff {
	d := &JobDiff{A: diffJob(a), B: diffJob(b), PerRank: len(a.Ranks) != len(b.Ranks)}
	d.Change = JobChange{
		SameCommand: slices.Equal(d.A.Command, d.B.Command),
		SameHosts:   slices.Equal(d.A.Hosts, d.B.Hosts),
		SameMPI:     d.A.MPILibrary == d.B.MPILibrary && d.A.MPIVersion == d.B.MPIVersion,
		Ranks:       d.B.Ranks - d.A.Ranks,
		Wallclock:   d.B.Wallclock - d.A.Wallclock,
		MPIPct:      d.B.MPIPct - d.A.MPIPct,
		Partial:     d.A.Incomplete || d.B.Incomplete,
	}
	if d.A.Wallclock > 0 {
		d.Change.WallclockRatio = float64(d.B.Wallclock) / float64(d.A.Wallclock)
	}
	d.Groups = matchGroups(a, b)
	for gi, m := range d.Groups {
		d.Items = append(d.Items, d.loopItems(a, b, gi, m)...)
	}
	d.Items = append(d.Items, d.callItems(a, b)...)
	slices.SortStableFunc(d.Items, func(x, y DiffItem) int {
		if c := cmp.Compare(x.rank(), y.rank()); c != 0 {
			return c
		}
		if c := cmp.Compare(y.weight(), x.weight()); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Kind, y.Kind); c != 0 {
			return -c // loops first
		}
		return cmp.Compare(x.Name, y.Name)
	})
	d.Trees = d.alignTrees(a, b)
	return d
}

// weight orders the items of a diff of one rank (DiffItem.rank): by their absolute change of time, a loop by the change of its compute
// on one rank when that stands out and is larger (work moved between ranks
// leaves the loop's total as it was). Not a call's: the wait that grew on
// one rank because another computes longer is the consequence, the loop
// whose compute moved the cause.
func (it *DiffItem) weight() float64 {
	w := math.Abs(it.Change.Time)
	if it.Kind == ItemLoop && it.Shift != nil && it.Shift.Stands {
		w = max(w, math.Abs(it.Shift.Change))
	}
	return w
}

// rank orders the items of a diff by what they tell: findings first (a
// change, on a rank or overall, new and gone), then noise, then the
// launcher's calls; weight orders them within.
func (it *DiffItem) rank() int {
	switch {
	case it.Launcher:
		return 2
	case it.Verdict == "noise":
		return 1
	}
	return 0
}

// diffJob is the banner of j.
func diffJob(j *Job) DiffJob {
	h := &j.Header
	mpi, wall, _ := j.Summary.Totals()
	return DiffJob{Path: j.Path, Command: h.Command, Ranks: h.NumRanks, Blocks: len(j.Ranks), Hosts: h.DistinctHosts(),
		MPILibrary: h.MPILibrary, MPIVersion: h.MPIVersion, Wallclock: h.Wallclock, MPITime: mpi, WallTime: wall,
		MPIPct: Percent(mpi, wall), Incomplete: h.Incomplete, Groups: len(j.Groups)}
}

// matchGroups pairs the groups of a and b: by signature, then by the loops
// their trees share, then in order; the groups left are gone or new.
func matchGroups(a, b *Job) []GroupMatch {
	toB := make([]int, len(a.Groups))
	by := make([]string, len(a.Groups))
	usedB := make([]bool, len(b.Groups))
	for i := range toB {
		toB[i] = -1
	}
	for i, ga := range a.Groups {
		for k, gb := range b.Groups {
			if !usedB[k] && ga.Signature == gb.Signature {
				toB[i], by[i], usedB[k] = k, MatchSignature, true
				break
			}
		}
	}
	pathsA := make([]map[string]bool, len(a.Groups))
	for i := range a.Groups {
		pathsA[i] = treePathSet(a.Groups[i].Tree)
	}
	pathsB := make([]map[string]bool, len(b.Groups))
	for k := range b.Groups {
		pathsB[k] = treePathSet(b.Groups[k].Tree)
	}
	for i := range a.Groups {
		if toB[i] >= 0 {
			continue
		}
		best, bestSim := -1, 0.0
		for k := range b.Groups {
			if usedB[k] {
				continue
			}
			if s := jaccard(pathsA[i], pathsB[k]); s > bestSim {
				best, bestSim = k, s
			}
		}
		if best >= 0 {
			toB[i], by[i], usedB[best] = best, MatchLoops, true
		}
	}
	k := 0
	for i := range a.Groups {
		if toB[i] >= 0 {
			continue
		}
		for k < len(b.Groups) && usedB[k] {
			k++
		}
		if k < len(b.Groups) {
			toB[i], by[i], usedB[k] = k, MatchOrder, true
		}
	}
	var out []GroupMatch
	for i, ga := range a.Groups {
		m := GroupMatch{A: i, B: toB[i], AMembers: a.Members(i), ARanks: len(ga.Members), By: by[i], Status: StatusGone}
		if m.B >= 0 {
			m.BMembers, m.BRanks, m.Status = b.Members(m.B), len(b.Groups[m.B].Members), StatusMatched
		}
		out = append(out, m)
	}
	for k := range b.Groups {
		if !usedB[k] {
			out = append(out, GroupMatch{A: -1, B: k, BMembers: b.Members(k), BRanks: len(b.Groups[k].Members), Status: StatusNew})
		}
	}
	return out
}

// treePathSet is the set of the loop paths of a group's tree.
func treePathSet(tree []loops.TreeRow) map[string]bool {
	set := make(map[string]bool, len(tree))
	for _, p := range treePaths(tree) {
		set[strings.Join(p, "\n")] = true
	}
	return set
}

// jaccard is the share of the elements of a and b that both have.
func jaccard(a, b map[string]bool) float64 {
	both := 0
	for k := range a {
		if b[k] {
			both++
		}
	}
	if all := len(a) + len(b) - both; all > 0 {
		return float64(both) / float64(all)
	}
	return 0
}

// treePaths returns the path of every row of a loop tree (in pre-order):
// the headers of its enclosing loops and its own, outermost first, a
// self-loop's marked " [self]" and the second and later loops of one path
// numbered (" #2"), as loops of one rank with otherwise equal keys are.
func treePaths(tree []loops.TreeRow) [][]string {
	byID := make(map[int][]string, len(tree))
	seen := make(map[string]int, len(tree))
	out := make([][]string, len(tree))
	for i, r := range tree {
		label := r.Header
		if r.SelfLoop {
			label += " [self]"
		}
		parent := byID[r.Parent]
		key := strings.Join(append(slices.Clone(parent), label), "\n")
		seen[key]++
		if n := seen[key]; n > 1 {
			label += " #" + strconv.Itoa(n)
		}
		p := append(slices.Clone(parent), label)
		byID[r.ID] = p
		out[i] = p
	}
	return out
}

// rankSums sums one item's quantities over ranks, with its least and
// largest time on one rank, for loops its least and largest time per
// iteration on one rank, each rank's own part (RankShift) and its
// variation within the run (DiffSide.Variation) weighted by the rank's
// time.
type rankSums struct {
	time, iter, calls, bytes, mpi float64
	ranks                         []int
	min, max                      float64
	minRank, maxRank              int
	minPer, maxPer                float64
	iterRanks                     int
	// minCalls and maxCalls are the least and most calls on one rank,
	// minCPI and maxCPI the least and most calls per iteration.
	minCalls, maxCalls, minCPI, maxCPI float64
	// own is each rank's own part of the item (RankShift): a loop's
	// compute, a call site's time; ownVar its variation within the run
	// where known, ownVarSum and ownVarW their sum weighted by own and
	// the weights (for the ranks whose variation is not known).
	own, ownVar        map[int]float64
	ownVarSum, ownVarW float64
	// varSum sums the ranks' variations times their time, varTime the
	// time of the ranks whose variation is known.
	varSum, varTime float64
}

// rankItem is an item on one rank: its time, iterations, calls, bytes,
// time in MPI calls and own part (rankSums.own), and the variations
// within the run of its time and own part (< 0: not known).
type rankItem struct {
	time, iter, calls, bytes, mpi, own float64
	variation, ownVariation            float64
}

// add adds the item x on rank.
func (s *rankSums) add(rank int, x rankItem) {
	time, iter := x.time, x.iter
	if len(s.ranks) == 0 || time < s.min {
		s.min, s.minRank = time, rank
	}
	if len(s.ranks) == 0 || time > s.max {
		s.max, s.maxRank = time, rank
	}
	if len(s.ranks) == 0 {
		s.minCalls, s.maxCalls = x.calls, x.calls
	}
	s.minCalls, s.maxCalls = min(s.minCalls, x.calls), max(s.maxCalls, x.calls)
	if iter > 0 {
		per, cpi := time/iter, x.calls/iter
		if s.iterRanks == 0 {
			s.minPer, s.maxPer, s.minCPI, s.maxCPI = per, per, cpi, cpi
		}
		s.minPer, s.maxPer = min(s.minPer, per), max(s.maxPer, per)
		s.minCPI, s.maxCPI = min(s.minCPI, cpi), max(s.maxCPI, cpi)
		s.iterRanks++
	}
	if s.own == nil {
		s.own, s.ownVar = make(map[int]float64), make(map[int]float64)
	}
	s.own[rank] += x.own
	if x.ownVariation >= 0 {
		s.ownVar[rank] = max(s.ownVar[rank], x.ownVariation)
		s.ownVarSum += x.ownVariation * x.own
		s.ownVarW += x.own
	}
	if x.variation >= 0 {
		s.varSum += x.variation * time
		s.varTime += time
	}
	s.ranks = append(s.ranks, rank)
	s.time += time
	s.iter += iter
	s.calls += x.calls
	s.bytes += x.bytes
	s.mpi += x.mpi
}

// side presents the sums as one job's side of an item, divided by div
// (the ranks the means are over, 1 for sums).
func (s *rankSums) side(div float64, loop bool) *DiffSide {
	rs := slices.Clone(s.ranks)
	slices.Sort(rs)
	rs = slices.Compact(rs)
	d := &DiffSide{Ranks: len(rs), RankList: RankRanges(rs), MinTime: s.min, MaxTime: s.max, MinRank: s.minRank, MaxRank: s.maxRank}
	if s.varTime > 0 {
		d.Variation = s.varSum / s.varTime
	}
	d.Time, d.Calls, d.Bytes = s.time/div, s.calls/div, s.bytes/div
	if loop {
		d.Iterations = s.iter / div
		if s.iter > 0 {
			d.TimePerIteration = s.time / s.iter
		}
		if s.time > 0 {
			d.MPIPct = 100 * s.mpi / s.time
		}
	}
	return d
}

// meanPerRank is the mean time of the item on the ranks that have it.
func (s *rankSums) meanPerRank() float64 {
	if s == nil || len(s.ranks) == 0 {
		return 0
	}
	return s.time / float64(len(s.ranks))
}

// ownVariation is the variation within the run of rank's own part: its
// own where known, else the mean of the ranks' (weighted by their own
// part), 0 if none is known.
func (s *rankSums) ownVariation(rank int) float64 {
	if v, ok := s.ownVar[rank]; ok {
		return v
	}
	if s.ownVarW > 0 {
		return s.ownVarSum / s.ownVarW
	}
	return 0
}

// spread is the item's largest minus its least time on one rank.
func (s *rankSums) spread() float64 {
	if s == nil || len(s.ranks) == 0 {
		return 0
	}
	return s.max - s.min
}

// groupLoops sums the loops of group gi of j over its members, keyed by
// their paths (treePaths); order lists the keys in the tree's order.
func groupLoops(j *Job, gi int) (order []string, paths map[string][]string, names map[string]string, sums map[string]*rankSums) {
	g := &j.Groups[gi]
	rowPaths := treePaths(g.Tree)
	byKey := make(map[loops.LoopKey]string, len(g.Tree))
	paths = make(map[string][]string, len(g.Tree))
	names = make(map[string]string, len(g.Tree))
	sums = make(map[string]*rankSums, len(g.Tree))
	for i, r := range g.Tree {
		k := strings.Join(rowPaths[i], "\n")
		byKey[r.Key] = k
		paths[k], names[k], sums[k] = rowPaths[i], r.Name, &rankSums{}
		order = append(order, k)
	}
	for _, m := range g.Members {
		r := j.Ranks[m]
		if r.Collapsed == nil {
			continue
		}
		for i, lk := range loops.LoopKeys(&r.Graph, r.Collapsed) {
			s := sums[byKey[lk]]
			if s == nil {
				continue
			}
			st := &r.Collapsed.Loops[i].Stats
			v, cv := r.variation.loop(i + 1)
			s.add(r.Rank.Rank, rankItem{time: float64(st.Time), iter: float64(st.Iterations), calls: float64(st.Calls),
				bytes: float64(st.Bytes), mpi: float64(st.NodeTime), own: float64(st.Time - st.NodeTime), variation: v, ownVariation: cv})
		}
	}
	return order, paths, names, sums
}

// loopItems aligns the loops of the groups of match m (index gi).
func (d *JobDiff) loopItems(a, b *Job, gi int, m GroupMatch) []DiffItem {
	type sideLoops struct {
		order []string
		paths map[string][]string
		names map[string]string
		sums  map[string]*rankSums
		div   float64
	}
	get := func(j *Job, g int) *sideLoops {
		if g < 0 {
			return &sideLoops{}
		}
		s := &sideLoops{div: 1}
		s.order, s.paths, s.names, s.sums = groupLoops(j, g)
		if d.PerRank {
			s.div = float64(len(j.Groups[g].Members))
		}
		return s
	}
	sa, sb := get(a, m.A), get(b, m.B)
	keys := slices.Clone(sa.order)
	for _, k := range sb.order {
		if sa.sums[k] == nil {
			keys = append(keys, k)
		}
	}
	items := make([]DiffItem, 0, len(keys))
	for _, k := range keys {
		it := DiffItem{Kind: ItemLoop, Group: gi}
		var xa, xb *rankSums
		if x := sa.sums[k]; x != nil && len(x.ranks) > 0 {
			xa, it.A = x, x.side(sa.div, true)
			it.A.Loop, it.Path = sa.names[k], sa.paths[k]
		}
		if x := sb.sums[k]; x != nil && len(x.ranks) > 0 {
			xb, it.B = x, x.side(sb.div, true)
			it.B.Loop, it.Path = sb.names[k], sb.paths[k]
		}
		if it.A == nil && it.B == nil {
			continue
		}
		it.Name = strings.Join(it.Path, " > ")
		it.compare(xa, xb, d.noiseFloor(), !d.PerRank)
		items = append(items, it)
	}
	return items
}

// callItems aligns the call sites of the jobs by call and site label.
func (d *JobDiff) callItems(a, b *Job) []DiffItem {
	type key struct{ call, site string }
	sums := func(j *Job) (map[key]*rankSums, []key) {
		out := make(map[key]*rankSums, len(j.CallSites))
		var order []key
		for _, s := range j.CallSites {
			k := key{s.Call, s.Site}
			out[k] = &rankSums{}
			order = append(order, k)
		}
		for _, r := range j.Ranks {
			// varSum sums the nodes' variations times their time,
			// varTime the time of those whose variation is known.
			type sum struct{ time, calls, bytes, varSum, varTime float64 }
			per := map[key]*sum{}
			g := &r.Graph
			for i := range g.Nodes {
				n := &g.Nodes[i]
				var label string
				if s := n.Key.Site; s >= 0 && s < len(g.Sites) {
					label = g.Sites[s].Label()
				}
				k := key{n.Key.Call, label}
				if out[k] == nil {
					continue
				}
				x := per[k]
				if x == nil {
					x = &sum{}
					per[k] = x
				}
				x.time += float64(n.Time.Total)
				x.calls += float64(n.Count)
				x.bytes += float64(n.Bytes.Total)
				if v := r.variation.node(i); v >= 0 {
					x.varSum += v * float64(n.Time.Total)
					x.varTime += float64(n.Time.Total)
				}
			}
			for k, x := range per {
				v := -1.0
				if x.varTime > 0 {
					v = x.varSum / x.varTime
				}
				out[k].add(r.Rank.Rank, rankItem{time: x.time, calls: x.calls, bytes: x.bytes, own: x.time, variation: v, ownVariation: v})
			}
		}
		return out, order
	}
	suma, ordA := sums(a)
	sumb, ordB := sums(b)
	keys := slices.Clone(ordA)
	for _, k := range ordB {
		if suma[k] == nil {
			keys = append(keys, k)
		}
	}
	divA, divB := 1.0, 1.0
	if d.PerRank {
		divA, divB = float64(len(a.Ranks)), float64(len(b.Ranks))
	}
	mpiA, _, _ := a.Summary.Totals()
	mpiB, _, _ := b.Summary.Totals()
	items := make([]DiffItem, 0, len(keys))
	for _, k := range keys {
		it := DiffItem{Kind: ItemCall, Group: -1, Call: k.call, Site: k.site, Name: k.call, Launcher: launcherCall(k.call)}
		if k.site != "" {
			it.Name += " at " + k.site
		}
		xa, xb := suma[k], sumb[k]
		if xa != nil && len(xa.ranks) > 0 {
			it.A = xa.side(divA, false)
			if !flowgraph.IsInit(k.call) {
				it.A.MPIPct = 100 * xa.time / math.Max(float64(mpiA), 1)
			}
		} else {
			xa = nil
		}
		if xb != nil && len(xb.ranks) > 0 {
			it.B = xb.side(divB, false)
			if !flowgraph.IsInit(k.call) {
				it.B.MPIPct = 100 * xb.time / math.Max(float64(mpiB), 1)
			}
		} else {
			xb = nil
		}
		if it.A == nil && it.B == nil {
			continue
		}
		it.compare(xa, xb, d.noiseFloor(), !d.PerRank)
		items = append(items, it)
	}
	return items
}

// verdict is the item's Verdict, once the rest is set.
func (it *DiffItem) verdict() string {
	switch {
	case it.Status != StatusMatched:
		return it.Status
	case it.Launcher && flowgraph.IsInit(it.Call):
		return "start-up"
	case it.Launcher:
		return "shut-down"
	case it.Shift != nil && it.Shift.Stands && it.WithinNoise:
		return "changed on rank " + strconv.Itoa(it.Shift.Rank)
	case it.WithinNoise:
		return "noise"
	case it.IterationWithinNoise:
		return "changed, per iteration noise"
	case it.Shift != nil && it.Shift.Stands:
		return "changed, most on rank " + strconv.Itoa(it.Shift.Rank)
	}
	return "changed"
}

// launcherCall tells the calls whose time is the launcher's, not the
// program's: MPI_Init waits for every process to be started and wired up,
// MPI_Finalize for the last rank to arrive and the connections to close,
// so two runs of one program differ there by the machine's state.
func launcherCall(call string) bool { return flowgraph.IsInit(call) || call == "MPI_Finalize" }

// noiseFloor is the least change of an item's time on a rank that is no
// noise (a hundredth of a rank's mean time after MPI_Init, the larger of
// the two jobs'): two runs of one program differ by that much, even where
// the ranks wait for each other and so hardly spread (the halo at 2
// ranks: 0.5% apart, spread 0.2%), and a third of a microsecond more in
// MPI_Comm_size on one rank is no finding.
func (d *JobDiff) noiseFloor() float64 {
	perRank := func(j *DiffJob) float64 { return float64(j.WallTime) / float64(max(j.Blocks, 1)) }
	return 0.01 * max(perRank(&d.A), perRank(&d.B))
}

// sameWork tells whether the item makes as many calls per rank that has
// it (sameCalls), and per iteration (sameCPI), in both sums: equal within
// a hundredth, or within their spread over the ranks (polls repeat as the
// messages come). The LAMMPS input loop of 31 iterations holds the whole
// run in one: its time per iteration varies 9x within a run, yet twice
// the steps are no noise.
func sameWork(xa, xb *rankSums) (sameCalls, sameCPI bool) {
	if xa == nil || xb == nil || len(xa.ranks) == 0 || len(xb.ranks) == 0 {
		return false, false
	}
	same := func(a, b, spread float64) bool { return math.Abs(b-a) <= max(0.01*max(a, b), spread) }
	sameCalls = same(xa.calls/float64(len(xa.ranks)), xb.calls/float64(len(xb.ranks)),
		max(xa.maxCalls-xa.minCalls, xb.maxCalls-xb.minCalls))
	if xa.iter > 0 && xb.iter > 0 {
		sameCPI = same(xa.calls/xa.iter, xb.calls/xb.iter, max(xa.maxCPI-xa.minCPI, xb.maxCPI-xb.minCPI))
	}
	return sameCalls, sameCPI
}

// shift pairs the own parts of an item on the ranks that have it in both
// sums and returns the largest change; nil unless two ranks pair.
func shift(xa, xb *rankSums, floor float64) *RankShift {
	if xa == nil || xb == nil {
		return nil
	}
	var changes []RankShift
	for r, a := range xa.own {
		if b, ok := xb.own[r]; ok {
			changes = append(changes, RankShift{Rank: r, Change: b - a, Before: a, Noise: max(xa.ownVariation(r)*a, xb.ownVariation(r)*b)})
		}
	}
	if len(changes) < 2 {
		return nil
	}
	slices.SortFunc(changes, func(x, y RankShift) int {
		if c := cmp.Compare(math.Abs(y.Change), math.Abs(x.Change)); c != 0 {
			return c
		}
		return cmp.Compare(x.Rank, y.Rank)
	})
	top := changes[0]
	third := 0.0
	switch {
	case len(changes) > 2:
		third = math.Abs(changes[2].Change)
	case top.Change*changes[1].Change > 0:
		// Two ranks that changed the same way: the program changed
		// (LAMMPS at 2 ranks, twice the steps), not a rank.
		third = math.Abs(changes[1].Change)
	}
	c := math.Abs(top.Change)
	top.Stands = c > floor && c > top.Noise && c > 0.1*max(top.Before, top.Before+top.Change) && c > 2*third
	return &top
}

// compare sets the item's status, change, ratios, noise (at least floor,
// noiseFloor's) and shift (paired: the jobs have the same ranks) from its
// sides and their sums over the ranks (nil where the item is not).
func (it *DiffItem) compare(xa, xb *rankSums, floor float64, paired bool) {
	var va, vb DiffValues
	switch {
	case it.A != nil && it.B != nil:
		it.Status = StatusMatched
		va, vb = it.A.DiffValues, it.B.DiffValues
	case it.A != nil:
		it.Status = StatusGone
		va = it.A.DiffValues
	default:
		it.Status = StatusNew
		vb = it.B.DiffValues
	}
	it.Change = DiffValues{
		Time: vb.Time - va.Time, TimePerIteration: vb.TimePerIteration - va.TimePerIteration,
		Iterations: vb.Iterations - va.Iterations, Calls: vb.Calls - va.Calls, Bytes: vb.Bytes - va.Bytes,
		MPIPct: vb.MPIPct - va.MPIPct,
	}
	if va.Time > 0 && vb.Time > 0 {
		it.Ratio = vb.Time / va.Time
	}
	if va.TimePerIteration > 0 && vb.TimePerIteration > 0 {
		it.IterationRatio = vb.TimePerIteration / va.TimePerIteration
	}
	if paired {
		it.Shift = shift(xa, xb, floor)
	}
	// The variation within a run bounds the change of the same work
	// only: more calls (per iteration) are more work, not noise.
	sameCalls, sameCPI := sameWork(xa, xb)
	within := func(s *DiffSide, v float64, same bool) float64 {
		if s == nil || !same {
			return 0
		}
		return s.Variation * v
	}
	noise := max(xa.spread(), xb.spread(), floor, within(it.A, xa.meanPerRank(), sameCalls), within(it.B, xb.meanPerRank(), sameCalls))
	it.WithinNoise = it.Status == StatusMatched && math.Abs(xb.meanPerRank()-xa.meanPerRank()) <= noise
	// In the units of the sides' times (sums over the ranks, or means),
	// so that it reads against Change.Time.
	scale := 1.0
	for _, x := range []struct {
		s    *DiffSide
		sums *rankSums
	}{{it.A, xa}, {it.B, xb}} {
		if m := x.sums.meanPerRank(); x.s != nil && m > 0 {
			scale = max(scale, x.s.Time/m)
		}
	}
	it.Noise = noise * scale
	if it.Status == StatusMatched && va.TimePerIteration > 0 && vb.TimePerIteration > 0 {
		it.IterationNoise = max(xa.maxPer-xa.minPer, xb.maxPer-xb.minPer,
			within(it.A, va.TimePerIteration, sameCPI), within(it.B, vb.TimePerIteration, sameCPI))
		it.IterationWithinNoise = math.Abs(vb.TimePerIteration-va.TimePerIteration) <= it.IterationNoise
	}
	it.Verdict = it.verdict()
}
