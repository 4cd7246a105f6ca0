// Package analysis loads an mpiflow job once and computes what every view
// shows: the selected ranks with their call sites resolved, call and rank
// statistics, the collapsed loops with their levels and metric values,
// and the groups of ranks of similar structure with their loop trees and
// mean levels. The CLI tables, JSON, DOT graphs and the HTML report
// present this model, so they show the same numbers and names; colours
// and layout are theirs.
package analysis

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mpiflow/flowgraph"
	"mpiflow/internal/parallel"
	"mpiflow/loops"
)

// Options select what Load reads and computes.
type Options struct {
	// Ranks selects ranks by number (all when nil).
	Ranks map[int]bool
	// NoLoops skips the loop analysis (levels, groups, trees).
	NoLoops bool
	// NoResolve keeps call sites as the recording left them (object and
	// offset) instead of looking them up in the objects' debug
	// information.
	NoResolve bool
	// NoSequences drops each rank's sequences (Edge.Seq), and its anchors
	// but the first and the last, once its loops are found, so that memory
	// follows the file rather than the events; the ranks' events can then
	// not be walked (Graph.Events), but Job.Whole reads a rank whole. For the
	// views that do not rebuild the trace (stats, loops, graphs).
	NoSequences bool
	// NoGraphs, with NoSequences, drops each rank's graph tables (nodes,
	// edges, call sites) and its collapse once the job's statistics, its
	// levels and what grouping compares are taken from them, and reads
	// the ranks whose blocks are large one at a time, so that memory holds
	// one large graph at a time rather than all: a million call sites
	// take hundreds of MB decoded. Rank.Graph then keeps its other fields,
	// and Job.Whole reads a rank with its call sites unresolved. For the
	// views that show statistics, levels and loop tables (stats, loops,
	// graph).
	NoGraphs bool
	// NoSiteTable leaves Job.CallSites empty: a row per call and call
	// site, as many as the program has sites, for the views that do not
	// show them.
	NoSiteTable bool
	// Variation finds how much each loop's time per iteration and each
	// call site's time per call vary within the run, from the timing
	// intervals of a few ranks (variationRanks) as their loops are found:
	// the noise bound of Diff.
	Variation bool
	// Similarity is how similar a rank's structure must be to its
	// group's representative (0 to 1; 0 means DefaultSimilarity, 1 groups
	// only ranks of the same structure).
	Similarity float64
	// Workers bounds parallel work (GOMAXPROCS if < 1).
	Workers int
	// LargeBlock is the size in the file over which NoGraphs reads a
	// rank's block alone (0: largeBlock).
	LargeBlock int64
	// Progress, if set, is called with the stage ("reading ranks",
	// "finding loops") and how much of it is done.
	Progress func(stage string, done, total int)
}

// Job is the analysis of the selected ranks of one job file.
type Job struct {
	Path   string
	Header flowgraph.Header
	// Ranks are the selected blocks (one per rank and thread) in file
	// order.
	Ranks []*Rank
	// Threads tells whether some block is not thread 0, so that labels
	// name threads.
	Threads bool
	// Summary holds the call and rank statistics from the end of
	// MPI_Init; Calls are its calls by descending time.
	Summary *flowgraph.Summary
	Calls   []flowgraph.CallStat
	// CallSites are the calls per call site over the selected ranks, by
	// descending time (see SiteStat).
	CallSites []SiteStat
	// Comm is the point-to-point traffic rank by rank (see CommMatrix).
	Comm *CommMatrix
	// Sizes are the calls that moved data (MPI_Init aside) with their
	// time by message size, in the order of Calls.
	Sizes []CallSizes
	// FileBytes are the bytes of the selected blocks by part, and of the
	// rest of the file.
	FileBytes flowgraph.FileBytes
	// Budget sums up the recording budget of the selected blocks.
	Budget BudgetSummary
	// Metrics are the metrics of the level elements' values.
	Metrics []string
	// ResolveErr is the first call site resolution problem, nil if every
	// object could be read.
	ResolveErr error
	// Groups are the ranks of similar loop structure, in order of their
	// first member; LoopTable averages the loop summaries of all
	// ranks (without the loop analysis: empty).
	Groups    []Group
	LoopTable loops.TableRow
	// Regions are the regions of MPI_Pcontrol (IPM's), each after the one
	// it was entered in; empty when no rank entered one.
	Regions []Region
	// Similarity is the one the groups were made with (Options).
	Similarity float64
	// noSeqs tells that the ranks' sequences were dropped (Whole).
	noSeqs bool
	// variation tells that findLoops finds the ranks' variation
	// (Options.Variation).
	variation bool
}

// BudgetSummary sums up what the blocks' sequences and timing took against
// the recording's budget (MPIFLOW_BUDGET) and the poll runs whose length
// was approximated to fit it (flowgraph.BudgetUse).
type BudgetSummary struct {
	Blocks      int   `json:"blocks"` // blocks recorded with a budget
	Budget      int64 `json:"budget"` // bytes a block (the largest of them)
	Over        int   `json:"over"`   // blocks over it even so
	Runs        int64 `json:"runs"`
	Approximate int64 `json:"approximate"`
	ErrMax      int64 `json:"err_max"` // the largest error of a run length, in events
	// Arranged timing intervals keep their counts but not the order of
	// their branches; Moved events hold another call than recorded.
	Arranged int64 `json:"arranged_intervals"`
	Moved    int64 `json:"moved_events"`
}

func (b *BudgetSummary) add(u *flowgraph.BudgetUse) {
	if u == nil {
		return
	}
	b.Blocks++
	b.Budget = max(b.Budget, u.Budget)
	if !u.Fits() {
		b.Over++
	}
	b.Runs += u.Runs
	b.Approximate += u.Approximate
	b.ErrMax = max(b.ErrMax, u.ErrMax)
	b.Arranged += u.Arranged
	b.Moved += u.Moved
}

// Rank is one selected block with its analysis.
type Rank struct {
	*flowgraph.Rank
	// Label names the block for people: "rank 3", or "rank 3.1" for
	// thread 1 when the job has threads.
	Label string
	// CallTime is the time per call inside MPI from the end of MPI_Init.
	CallTime map[string]int64
	// Levels are the levels of the collapsed graph indexed by loop ID (0
	// the top level), or the whole graph as one level when the loop
	// analysis failed (LoopErr).
	Levels    []Level
	Collapsed *loops.Collapsed
	LoopErr   error
	// Loops condenses the collapse for the overview table.
	Loops loops.RankSummary
	// Group indexes Job.Groups.
	Group int
	// InitEnd is the end of MPI_Init (or MPI_Init_thread) on the job's
	// time axis, 0 if the rank does not start with it.
	InitEnd int64
	// regions are its regions until New sums them up (Job.Regions).
	regions []*rankRegion
	// tree is what the loop tree of its group takes of its loops, nil
	// when its loop analysis failed; profile is what grouping compares,
	// taken before its graph is dropped (Options.NoGraphs) and nil once
	// the ranks are grouped.
	tree    *loops.RankTree
	profile profile
	// compute sums up its compute phases when the job has counters
	// (counterSpreads).
	compute computeSums
	// variation is how much its loops and nodes vary within the run
	// (Options.Variation), nil when not known.
	variation *rankVariation
}

// Group is a set of ranks whose graphs have a similar structure: at most
// 1 - Options.Similarity of their time, calls or bytes is on calls or
// transitions (keyed by call site) that the group's representative does
// not have, or the representative's on ones they do not have (the mean
// of both). With a similarity of 1, the members have the same structure on
// every level (calls, call sites, loops and edges, not values).
type Group struct {
	// Signature is a hash of the representative's structure; Structures
	// counts the different structures of the members.
	Signature  string
	Structures int
	// Members index Job.Ranks, ascending; Rep is the representative
	// (the member closest to the others, one of Members) and Distances
	// the distance of each member to it (0 to 1, 1 - similarity).
	Members   []int
	Rep       int
	Distances []float64
	// Table averages the members' loop summaries; Tree is the loop tree
	// of the representative, then the loops only other members have,
	// with statistics over the members that have each loop.
	Table loops.TableRow
	Tree  []loops.TreeRow
	// Levels are the representative's levels with values, iterations,
	// calls and shares averaged over the members that have each element.
	Levels []Level
}

// Load opens the job file at path and analyzes it.
func Load(path string, opt Options) (*Job, error) {
	f, err := flowgraph.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return New(f, opt)
}

// New analyzes the selected ranks of f, reading each once.
func New(f *flowgraph.File, opt Options) (*Job, error) {
	if opt.Workers < 1 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	j := &Job{Path: f.Path, Header: f.Header, Summary: flowgraph.NewSummary(), FileBytes: f.FrameBytes(),
		Metrics: Metrics(f.Header.Counters), noSeqs: opt.NoSequences, Similarity: opt.Similarity,
		variation: opt.Variation}
	if j.Similarity == 0 {
		j.Similarity = DefaultSimilarity
	}
	var sel []int
	for i, e := range f.Index {
		if opt.Ranks == nil || opt.Ranks[e.Rank] {
			sel = append(sel, i)
			j.Threads = j.Threads || e.Thread != 0
		}
	}
	if len(sel) == 0 {
		if len(f.Index) == 0 {
			return nil, fmt.Errorf("%s: no ranks in the file", f.Path)
		}
		return nil, fmt.Errorf("%s: no rank matches the selection (the file has ranks %s)", f.Path, rankList(f.Index))
	}
	var resolver *flowgraph.Resolver
	if !opt.NoResolve {
		resolver = flowgraph.NewResolver()
	}
	acc := jobAcc{sizes: sizeAcc{}, regions: regionAcc{counters: f.Header.Counters}}
	if err := j.read(f, sel, resolver, &opt, &acc); err != nil {
		return nil, err
	}
	j.Regions = acc.regions.sorted()
	j.Calls = j.Summary.SortedCalls()
	j.CallSites = acc.sites.sorted()
	j.Comm = acc.comm.finish(f.Header.NumRanks)
	j.Sizes = acc.sizes.sorted(j.Calls)
	if !opt.NoLoops {
		if err := j.analyzeLoops(&opt); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// jobAcc sums up the selected ranks in file order as they are read.
type jobAcc struct {
	sites   siteAcc
	comm    commAcc
	sizes   sizeAcc
	regions regionAcc
}

// add adds r, which takes b in the file, to the job (Ranks, its
// statistics), resolveErr the problem of resolving its sites; with
// Options.NoGraphs it then drops r's graph tables.
func (j *Job) add(acc *jobAcc, r *Rank, b flowgraph.FileBytes, resolveErr error, opt *Options) {
	acc.regions.add(r.Rank.Rank, r.regions)
	r.regions = nil
	if resolveErr != nil && j.ResolveErr == nil {
		j.ResolveErr = resolveErr
	}
	j.FileBytes.Add(b)
	j.Budget.add(r.Graph.Budget)
	j.Summary.Add(r.Rank)
	if !opt.NoSiteTable {
		acc.sites.add(r.Rank)
	}
	acc.comm.add(r.Rank)
	acc.sizes.add(r.Rank)
	r.Label = fmt.Sprintf("rank %d", r.Rank.Rank)
	if j.Threads {
		r.Label = fmt.Sprintf("rank %d.%d", r.Rank.Rank, r.Thread)
	}
	r.CallTime = callTimes(&r.Graph)
	if len(j.Header.Counters) > 0 {
		r.compute = sumCompute(&r.Graph, len(j.Header.Counters))
	}
	j.Ranks = append(j.Ranks, r)
	if dropGraphs(opt) {
		r.Graph.Nodes, r.Graph.Edges, r.Graph.Sites = nil, nil, nil
	}
}

// dropGraphs tells whether the ranks' graphs are dropped once read
// (Options.NoGraphs).
func dropGraphs(opt *Options) bool { return opt.NoGraphs && opt.NoSequences }

// largeBlock is the size in the file of a block read alone with
// Options.NoGraphs: the graphs of a program of a million call sites take
// 15 MB in the file and 400 MB decoded.
const largeBlock = 4 << 20

// largeBlockGC is the garbage collector's percentage (GOGC) while a large
// block is read alone: the default of 100 lets the heap grow to twice
// what is live, mostly the block's graph.
const largeBlockGC = 25

// lowerGC lowers the garbage collector's percentage to largeBlockGC,
// unless it is lower, and returns the function that restores it.
func lowerGC() (restore func()) {
	prev := debug.SetGCPercent(largeBlockGC)
	if prev >= 0 && prev < largeBlockGC {
		debug.SetGCPercent(prev)
	}
	return func() { debug.SetGCPercent(prev) }
}

// read reads the blocks sel of f in parallel and adds each to the job in
// file order (add), with what it takes in the file, its call sites
// resolved with resolver (if not nil); with NoSequences it also finds
// each one's loops, which name the resolved sites, and drops its
// sequences, so that at most Workers ranks' sequences are in memory.
func (j *Job) read(f *flowgraph.File, sel []int, resolver *flowgraph.Resolver, opt *Options, acc *jobAcc) error {
	ranks := make([]*Rank, len(sel))
	bytes := make([]flowgraph.FileBytes, len(sel))
	resolveErrs := make([]error, len(sel))
	var mu sync.Mutex // the resolver and the progress
	var order sync.Mutex
	next := 0 // the next rank to add, under order
	var large sync.RWMutex
	done := 0
	err := parallel.For(len(sel), opt.Workers, func(k int) error {
		if dropGraphs(opt) && f.Index[sel[k]].Length > cmp.Or(opt.LargeBlock, largeBlock) {
			large.Lock()
			defer large.Unlock()
			defer lowerGC()()
		} else {
			large.RLock()
			defer large.RUnlock()
		}
		read := f.ReadRank
		skeleton := opt.NoSequences && opt.NoLoops
		switch {
		case skeleton:
			read = f.Skeleton
		case opt.NoSequences:
			read = f.ReadLazy // the loops map the sequences they need
		}
		r, err := read(sel[k])
		if err != nil {
			return err
		}
		bytes[k] = f.BlockBytes(sel[k], r)
		if resolver != nil {
			mu.Lock()
			resolveErrs[k] = resolver.ResolveAll(r.Graph.Sites)
			mu.Unlock()
		}
		rk := &Rank{Rank: r, InitEnd: initEnd(r)}
		if rk.regions, err = readRegions(f, sel[k], r, skeleton); err != nil {
			return err
		}
		if opt.NoSequences {
			if !opt.NoLoops {
				rk.findLoops(&r.Graph, j.Header.Counters, j.walksVariation(k, len(sel)))
				if dropGraphs(opt) {
					// rk.Loops and rk.tree hold what grouping takes of
					// the collapse; freed first, it makes room for the
					// profile.
					rk.Collapsed = nil
					if j.Similarity < 1 && len(sel) > 1 {
						rk.profile = rankProfile(&r.Graph)
					}
				}
			}
			r.Graph.DropSequences()
		}
		order.Lock()
		ranks[k] = rk
		for ; next < len(sel) && ranks[next] != nil; next++ {
			j.add(acc, ranks[next], bytes[next], resolveErrs[next], opt)
		}
		order.Unlock()
		mu.Lock()
		defer mu.Unlock()
		done++
		report(opt.Progress, "reading ranks", done, len(sel))
		return nil
	})
	return err
}

// readRegions sums up the regions of r, block k of f: from its events,
// read again with its sequences when r is a skeleton (File.Skeleton).
func readRegions(f *flowgraph.File, k int, r *flowgraph.Rank, skeleton bool) ([]*rankRegion, error) {
	if regionNodes(&r.Graph) == nil {
		return nil, nil
	}
	g := &r.Graph
	if skeleton {
		w, err := f.ReadLazy(k)
		if err != nil {
			return nil, err
		}
		g = &w.Graph
		g.Sites = r.Graph.Sites
	}
	rs, err := rankRegions(g)
	if err != nil {
		return nil, fmt.Errorf("%s: rank %d thread %d: regions: %w", f.Path, r.Rank, r.Thread, err)
	}
	return rs, nil
}

// initEnd is the end of r's first event on the job's time axis if that is
// MPI_Init (or MPI_Init_thread), else 0. Called once, as MPI requires, its
// recorded end is the node's total time after the rank's start, which
// needs no sequence (and is exact, where the rebuilt first event can be
// some ns off).
func initEnd(r *flowgraph.Rank) int64 {
	g := &r.Graph
	if g.Initial < 0 || g.Initial >= len(g.Nodes) || !flowgraph.IsInit(g.Nodes[g.Initial].Key.Call) {
		return 0
	}
	if n := &g.Nodes[g.Initial]; n.Count == 1 {
		return r.Start + n.Time.Total
	}
	if it := g.Events(); it.Next() {
		return r.Start + it.Event().End
	}
	return 0
}

func report(fn func(string, int, int), stage string, done, total int) {
	if fn != nil {
		fn(stage, done, total)
	}
}

// rankList formats the ranks of an index as "0-3,8".
func rankList(idx []flowgraph.IndexEntry) string {
	var rs []int
	for _, e := range idx {
		rs = append(rs, e.Rank)
	}
	slices.Sort(rs)
	return RankRanges(slices.Compact(rs))
}

// callTimes sums the time inside each call from the end of MPI_Init.
func callTimes(g *flowgraph.Graph) map[string]int64 {
	out := make(map[string]int64)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !flowgraph.IsInit(n.Key.Call) {
			out[n.Key.Call] += n.Time.Total
		}
	}
	return out
}

// analyzeLoops collapses every rank, builds its levels and groups the ranks.
func (j *Job) analyzeLoops(opt *Options) error {
	counters := j.Header.Counters
	var mu sync.Mutex
	done := 0
	err := parallel.For(len(j.Ranks), opt.Workers, func(i int) error {
		r := j.Ranks[i]
		if !opt.NoSequences { // else read found them
			r.findLoops(&r.Graph, counters, j.walksVariation(i, len(j.Ranks)))
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		report(opt.Progress, "finding loops", done, len(j.Ranks))
		return nil
	})
	if err != nil {
		return err
	}
	j.GroupRanks()
	return nil
}

// HasLoops tells whether the ranks' loops are found: unless loaded with
// Options.NoLoops, or once FindLoops found them all.
func (j *Job) HasLoops() bool { return len(j.Groups) > 0 }

// FindLoops finds the loops of Ranks[i] in whole, that rank with its
// sequences (Whole), for a job loaded with Options.NoLoops; GroupRanks
// groups the ranks once every rank's loops are found. It may run for
// several ranks at once.
func (j *Job) FindLoops(i int, whole *flowgraph.Rank) {
	j.Ranks[i].findLoops(&whole.Graph, j.Header.Counters, j.walksVariation(i, len(j.Ranks)))
}

// variationRanks is how many ranks of a job, evenly spread, have their
// variation within the run found (Options.Variation): the variation is the
// machine's and the item's, alike on the ranks that run it, and walking a
// rank's timing intervals costs half as much as finding its loops.
const variationRanks = 4

// walksVariation tells whether the k-th of n selected ranks has its
// variation found: with Options.Variation, variationRanks of them evenly
// spread, the first included.
func (j *Job) walksVariation(k, n int) bool {
	if !j.variation {
		return false
	}
	return n <= variationRanks || k == 0 || k*variationRanks/n != (k-1)*variationRanks/n
}

// findLoops finds the loops of r in g, its graph or the rank read whole,
// and what its group's summary and loop tree take of them; with
// variation, how much its loops and nodes vary within the run.
func (r *Rank) findLoops(g *flowgraph.Graph, counters []string, variation bool) {
	r.Levels, r.Collapsed, r.LoopErr = RankLevels(g, counters)
	if variation {
		r.variation = variationOf(g, r.Collapsed)
	}
	if r.Collapsed == nil {
		n := len(g.Nodes)
		r.Loops = loops.RankSummary{Rank: r.Rank.Rank, Thread: r.Thread, Nodes: n, TopNodes: n}
		r.tree = nil
		return
	}
	rl := loops.RankLoops{Rank: r.Rank.Rank, Thread: r.Thread, Graph: g, Collapsed: r.Collapsed}
	r.Loops = loops.Summarize(rl)
	t := rl.Tree()
	r.tree = &t
}

// GroupRanks summarizes each rank's loops and groups the ranks by
// similarity (Group), once every rank's loops are found.
func (j *Job) GroupRanks() {
	// Ranks of one structure form a class; classes whose structures are
	// similar form a group.
	bySig := make(map[string]int)
	var classes [][]int
	sigs := make([]string, len(j.Ranks))
	var all []loops.RankSummary
	for i, r := range j.Ranks {
		sigs[i] = signature(structure(r.Levels))
		c, ok := bySig[sigs[i]]
		if !ok {
			c = len(classes)
			bySig[sigs[i]] = c
			classes = append(classes, nil)
		}
		classes[c] = append(classes[c], i)
		r.Loops.Signature = sigs[i]
		all = append(all, r.Loops)
	}
	j.LoopTable = loops.Table(all)
	prof := func(i int) profile {
		if p := j.Ranks[i].profile; p != nil {
			return p
		}
		return rankProfile(&j.Ranks[i].Graph)
	}
	members, reps, dists := similarGroups(classes, prof, 1-j.Similarity)
	for _, r := range j.Ranks {
		r.profile = nil
	}
	j.Groups = make([]Group, len(members))
	for gi, ms := range members {
		g := &j.Groups[gi]
		g.Members, g.Rep, g.Distances = ms, reps[gi], dists[gi]
		g.Signature = sigs[g.Rep]
		sums := make([]loops.RankSummary, len(ms))
		// The representative first: the drawing and the loop tree are
		// its own, with values over the members.
		order := append([]int{g.Rep}, slices.DeleteFunc(slices.Clone(ms), func(m int) bool { return m == g.Rep })...)
		levels := make([][]Level, len(ms))
		structures := map[string]bool{}
		for k, m := range order {
			j.Ranks[m].Group = gi
			sums[k] = j.Ranks[m].Loops
			levels[k] = j.Ranks[m].Levels
			structures[sigs[m]] = true
		}
		g.Structures = len(structures)
		g.Table = loops.Table(sums)
		g.Levels = meanLevels(levels)
		if j.Ranks[g.Rep].tree != nil {
			rs := make([]loops.RankTree, len(j.Ranks))
			for _, m := range ms {
				if t := j.Ranks[m].tree; t != nil {
					rs[m] = *t
				}
			}
			g.Tree = loops.GroupTree(rs, order)
		}
	}
}

// Members formats the ranks of a group compactly: consecutive ranks of
// thread 0 as ranges ("0-3,8"), other threads as rank.thread ("2.1").
func (j *Job) Members(g int) string {
	ms := j.Groups[g].Members
	var parts []string
	for i := 0; i < len(ms); {
		r := j.Ranks[ms[i]]
		k := i
		if r.Thread == 0 {
			for k+1 < len(ms) {
				a, b := j.Ranks[ms[k]], j.Ranks[ms[k+1]]
				if b.Thread != 0 || b.Rank.Rank != a.Rank.Rank+1 {
					break
				}
				k++
			}
		}
		switch {
		case r.Thread != 0:
			parts = append(parts, strconv.Itoa(r.Rank.Rank)+"."+strconv.Itoa(r.Thread))
		case k > i:
			parts = append(parts, strconv.Itoa(r.Rank.Rank)+"-"+strconv.Itoa(j.Ranks[ms[k]].Rank.Rank))
		default:
			parts = append(parts, strconv.Itoa(r.Rank.Rank))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}

// Recorded returns the recorded blocks of the selected ranks, in the
// order of Ranks.
func (j *Job) Recorded() []*flowgraph.Rank {
	rs := make([]*flowgraph.Rank, len(j.Ranks))
	for i, r := range j.Ranks {
		rs[i] = r.Rank
	}
	return rs
}

// Whole returns Ranks[i] with its sequences: as loaded, or read again
// from the job's file when Options.NoSequences dropped them (Reread), its
// call sites those of Ranks[i] (resolved as the job's), or the file's when
// Options.NoGraphs dropped them.
func (j *Job) Whole(i int) (*flowgraph.Rank, error) {
	if !j.noSeqs {
		return j.Ranks[i].Rank, nil
	}
	r, err := j.Reread(i)
	if err != nil {
		return nil, err
	}
	if sites := j.Ranks[i].Graph.Sites; sites != nil { // else dropped (NoGraphs)
		r.Graph.Sites = sites
	}
	return r, nil
}

// Reread reads Ranks[i] again from the job's file, whole: with the
// sequences that NoSequences dropped, in the form the file stores them
// (File.ReadLazy), which timing intervals walk as they are and an event
// walk maps.
func (j *Job) Reread(i int) (*flowgraph.Rank, error) {
	f, err := flowgraph.Open(j.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := j.Ranks[i]
	k := f.FindRank(r.Rank.Rank, r.Thread)
	if k < 0 {
		return nil, fmt.Errorf("%s: rank %d thread %d is no longer in the file", j.Path, r.Rank.Rank, r.Thread)
	}
	return f.ReadLazy(k)
}

// FindRank returns the index in Ranks of rank and thread, -1 if not there.
func (j *Job) FindRank(rank, thread int) int {
	return slices.IndexFunc(j.Ranks, func(r *Rank) bool { return r.Rank.Rank == rank && r.Thread == thread })
}

// RankRanges formats ascending rank numbers as "0-3,8,10-11".
func RankRanges(rs []int) string { return loops.Ranges(rs) }
