// Package flowgen generates synthetic MPI event sequences and the event flow
// graphs they produce, for tests and benchmarks: a random program of nested
// loops, data-dependent branches and MPI calls, executed with heavy-tailed,
// phase- and rank-dependent timings (see Options.Uniform). The calls can
// be had too (RunTruth, WriteJob): the ground truth of the graphs.
package flowgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"mpiflow/flowgraph"
)

// Options shape a generated program.
type Options struct {
	Seed     uint64
	Events   int64 // stop after this many events (the program restarts its main loop until then)
	Depth    int   // maximum loop nesting
	Sites    int   // distinct call sites to draw from
	MaxIter  int   // maximum iterations of one loop
	Branchy  bool  // add data-dependent branches
	Counters int   // counters per edge
	Anchors  int   // most timing intervals (no limit if < 2)
	// TimingBytes bounds the timing (0: flowgraph.DefaultTimingBytes).
	TimingBytes int
	SlowRanks   []int // ranks whose compute phases are 3x slower (for Run)
	// Uniform draws every duration uniformly with the same spread, as the
	// first generator did; its timing errors average out. By default
	// durations spread the way real runs spread them: calls and compute
	// phases are log-normal with medians that depend on the call site,
	// calls now and then wait much longer (Pareto tail), and the run goes
	// through Phases in which compute costs change and some ranks are
	// slower while the others wait for them in their waits and
	// collectives.
	Uniform bool
	// Phases is the number of phases of a run (4 if 0), of equal numbers
	// of events; not used with Uniform.
	Phases int
	// Polls makes about one call in four a poll: MPI_Test repeated until
	// it completes, a number of times drawn from a long-tailed (Pareto)
	// distribution, each try short and close to the last, as programs
	// that wait for messages by polling do.
	Polls bool
	// RankBranches makes branches depend on the rank too: on rank r a
	// branch whose number agrees with r modulo 4 always takes its body,
	// as where a rank's place in the grid decides, so ranks differ by a
	// few edges of small share.
	RankBranches bool
	// Budget, when > 0, makes each graph fit that many bytes of
	// sequences and timing (flowgraph.Graph.FitBudget), the timing at
	// most half of them (the recorder keeps more where the sequences
	// leave room: FitBudgetFrom).
	Budget int64
}

// maxTries bounds the tries of one poll.
const maxTries = 1 << 14

var calls = []string{"MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend", "MPI_Wait", "MPI_Waitall",
	"MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce", "MPI_Alltoall", "MPI_File_write_at_all"}

type stmt struct {
	site   int
	iters  int    // > 0: a loop over body
	branch bool   // a branch between body and alt
	id     int    // the branch's number in the program
	poll   bool   // a poll: the call at site, tried until it completes
	body   []stmt // loop or branch body
	alt    []stmt
}

// Program is a generated program; Execute runs it.
type Program struct {
	opt  Options
	main []stmt
	rng  *rand.Rand
	// rank, ranks and job are the rank that executes the program, the
	// job's number of ranks and the seed common to them, which decide
	// the slow ranks of a phase.
	rank, ranks int
	job         uint64
	waitPhase   []bool // per phase, whether some rank lags (set by Execute)
	branches    int    // branches generated so far
}

// New generates a program.
func New(opt Options) *Program {
	if opt.Depth <= 0 {
		opt.Depth = 3
	}
	if opt.Sites <= 0 {
		opt.Sites = 20
	}
	if opt.MaxIter <= 0 {
		opt.MaxIter = 10
	}
	if opt.Phases <= 0 {
		opt.Phases = 4
	}
	if half := int(opt.Budget / 2); opt.Budget > 0 && (opt.TimingBytes == 0 || opt.TimingBytes > half) {
		opt.TimingBytes = max(half, flowgraph.MinTimingBytes)
	}
	p := &Program{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)), ranks: 1, job: opt.Seed}
	p.main = p.block(opt.Depth)
	return p
}

func (p *Program) block(depth int) []stmt {
	n := 1 + p.rng.IntN(4)
	var b []stmt
	for range n {
		r := p.rng.IntN(10)
		switch {
		case depth > 0 && r < 3:
			b = append(b, stmt{site: -1, iters: 1 + p.rng.IntN(p.opt.MaxIter), body: p.block(depth - 1)})
		case depth > 0 && p.opt.Branchy && r < 5:
			p.branches++
			b = append(b, stmt{site: -1, branch: true, id: p.branches, body: p.block(depth - 1), alt: p.block(depth - 1)})
		default:
			s := stmt{site: p.rng.IntN(p.opt.Sites)}
			s.poll = p.opt.Polls && p.rng.IntN(4) == 0
			b = append(b, s)
		}
	}
	return b
}

// Execute runs the program, calling emit for each call in order with
// synthetic timings, until opt.Events calls were made. slow scales the
// compute time between calls.
func (p *Program) Execute(slow float64, emit func(flowgraph.Call)) {
	rng := rand.New(rand.NewPCG(p.opt.Seed+1, 7))
	p.setWaitPhases()
	var n int64
	var t int64 = 1_000_000
	var ctr []int64
	if p.opt.Counters > 0 {
		ctr = make([]int64, p.opt.Counters)
	}
	// emit1 makes one call, if the program may make more.
	emit1 := func(site int, call string, compute, inMPI int64) bool {
		if n >= p.opt.Events {
			return false
		}
		t += compute
		enter := t
		var ce, cx []int64
		if ctr != nil {
			for k := range ctr {
				ctr[k] += int64(1000 * (k + 1))
			}
			ce = append([]int64(nil), ctr...)
		}
		t += inMPI
		if ctr != nil {
			for k := range ctr {
				ctr[k] += int64(10 * (k + 1))
			}
			cx = append([]int64(nil), ctr...)
		}
		emit(flowgraph.Call{
			Key:           flowgraph.NodeKey{Call: call, Site: site, Partner: -1, Comm: -1},
			Enter:         enter,
			Exit:          t,
			Bytes:         int64(8 << (site % 10)),
			Partner:       site % 4,
			CommSize:      4,
			CountersEnter: ce,
			CountersExit:  cx,
		})
		n++
		return true
	}
	var run func(b []stmt) bool
	run = func(b []stmt) bool {
		for i := range b {
			s := &b[i]
			switch {
			case s.iters > 0:
				for range s.iters {
					if !run(s.body) {
						return false
					}
				}
			case s.branch:
				body := s.body
				if (!p.opt.RankBranches || (s.id+p.rank)%4 != 0) && rng.IntN(3) == 0 {
					body = s.alt
				}
				if !run(body) {
					return false
				}
			case n >= p.opt.Events:
				return false
			case s.poll:
				tries := min(int(1/math.Pow(1-rng.Float64(), 1/1.1)), maxTries)
				for k := range tries {
					compute, inMPI := int64(50+rng.IntN(150)), int64(150+rng.IntN(300))
					if k == 0 && n < p.opt.Events {
						compute, _ = p.realistic(rng, s.site, n, slow)
					}
					if !emit1(s.site, "MPI_Test", compute, inMPI) {
						return false
					}
				}
			default:
				var compute, inMPI int64
				if p.opt.Uniform {
					compute = int64(float64(100+rng.IntN(2000)*(1+s.site%3)) * slow)
					inMPI = int64(50 + rng.IntN(500)*(1+s.site%5))
				} else {
					compute, inMPI = p.realistic(rng, s.site, n, slow)
				}
				if !emit1(s.site, calls[s.site%len(calls)], compute, inMPI) {
					return false
				}
			}
		}
		return true
	}
	for n < p.opt.Events {
		before := n
		if !run(p.main) || n == before {
			break
		}
	}
}

// phaseCompute scales the compute of every rank per phase (cyclically),
// so the run's profile changes over time.
var phaseCompute = []float64{1, 3, 0.5, 2}

// waits are the calls where a rank waits for slower ones.
var waits = map[string]bool{"MPI_Wait": true, "MPI_Waitall": true, "MPI_Allreduce": true, "MPI_Bcast": true,
	"MPI_Barrier": true, "MPI_Reduce": true, "MPI_Alltoall": true, "MPI_Recv": true}

// maxDuration bounds one drawn duration (1 s): the tails are heavy, not
// infinite.
const maxDuration = 1e9

// realistic draws the compute phase before event n, at site, and the
// time inside its call (see Options.Uniform).
func (p *Program) realistic(rng *rand.Rand, site int, n int64, slow float64) (compute, inMPI int64) {
	phase := int(n * int64(p.opt.Phases) / max(p.opt.Events, 1))
	lagging := p.lagging(phase)
	c := 1500 * float64(1+site%3) * phaseCompute[phase%len(phaseCompute)] * slow
	if lagging {
		c *= 3
	}
	m := 300 * float64(1+site%5) * math.Exp(1.2*rng.NormFloat64())
	if !lagging && p.waitPhase[phase] && waits[calls[site%len(calls)]] {
		// Waiting for the phase's slow ranks: about their extra compute.
		m += 2 * c * math.Exp(0.5*rng.NormFloat64())
	}
	if rng.IntN(200) == 0 {
		// A rare long wait (a late partner, the network, the OS).
		m += 20_000 / math.Pow(1-rng.Float64(), 1/1.5)
	}
	return int64(min(c*math.Exp(rng.NormFloat64()), maxDuration)), int64(min(m, maxDuration))
}

// lagging tells whether the program's rank is one of the slow ranks of
// phase: about one rank in four, never in phase 0, decided by the job's
// seed so that every rank agrees.
func (p *Program) lagging(phase int) bool {
	return laggingRank(p.job, phase, p.rank)
}

func laggingRank(job uint64, phase, rank int) bool {
	if phase == 0 {
		return false
	}
	h := job*0x9e3779b97f4a7c15 ^ uint64(phase)*0xbf58476d1ce4e5b9 ^ uint64(rank)*0x94d049bb133111eb
	h ^= h >> 31
	h *= 0xd6e8feb86659fd93
	h ^= h >> 32
	return h%4 == 0
}

// setWaitPhases finds the phases in which some rank of the job lags.
func (p *Program) setWaitPhases() {
	p.waitPhase = make([]bool, p.opt.Phases)
	for ph := range p.waitPhase {
		for r := range p.ranks {
			p.waitPhase[ph] = p.waitPhase[ph] || laggingRank(p.job, ph, r)
		}
	}
}

// NewBuilder returns a Builder for the program's events, with every call
// site present: the Site of a generated key is its index in Graph.Sites.
func (p *Program) NewBuilder() *flowgraph.Builder {
	b := flowgraph.NewBuilderBudget(p.opt.Counters, flowgraph.TimingBudget{Bytes: p.opt.TimingBytes, Intervals: p.opt.Anchors})
	for i := range p.opt.Sites {
		b.Site(flowgraph.CallSite{Addr: siteAddr(i), Object: "/usr/bin/app", Offset: uint64(0x1000 + 16*i)})
	}
	return b
}

// siteAddr is the address of generated call site i.
func siteAddr(i int) uint64 { return uint64(0x401000 + 16*i) }

// Graph executes the program into a graph.
func (p *Program) Graph(slow float64) flowgraph.Graph {
	b := p.NewBuilder()
	p.Execute(slow, b.Add)
	return b.Graph()
}

// Run generates a whole job of nranks ranks running the same program with
// different data (seeds), on nranks/ranksPerHost hosts.
func Run(opt Options, nranks, ranksPerHost int) (flowgraph.Header, []*flowgraph.Rank) {
	return RunTruth(opt, nranks, ranksPerHost, nil)
}

// RunTruth is Run that also passes every call of every rank, rank after
// rank and in order, to truth (when not nil): the ground truth the graphs
// are built from, as a full trace (MPIFLOW_TRACE=1) records it.
func RunTruth(opt Options, nranks, ranksPerHost int, truth func(rank int, c flowgraph.Call)) (flowgraph.Header, []*flowgraph.Rank) {
	h := NewHeader(opt, nranks, ranksPerHost)
	var ranks []*flowgraph.Rank
	for r := range nranks {
		var f func(flowgraph.Call)
		if truth != nil {
			f = func(c flowgraph.Call) { truth(r, c) }
		}
		rk := RankOf(opt, &h, r, f)
		h.Wallclock = max(h.Wallclock, Wall(rk))
		ranks = append(ranks, rk)
	}
	return h, ranks
}

// NewHeader is the header of a generated job of nranks ranks on
// nranks/ranksPerHost hosts (4 ranks a host if ranksPerHost <= 0), its
// wallclock not yet set.
func NewHeader(opt Options, nranks, ranksPerHost int) flowgraph.Header {
	if ranksPerHost <= 0 {
		ranksPerHost = 4
	}
	h := flowgraph.Header{
		JobID:         "gen",
		Command:       []string{"./app", fmt.Sprint(opt.Seed)},
		StartUnixNano: 1_700_000_000_000_000_000,
		NumRanks:      nranks,
		MPILibrary:    "synthetic",
		ClockSource:   "generated",
		KeyFields:     []string{flowgraph.KeyCall, flowgraph.KeySite},
	}
	for i := range opt.Counters {
		h.Counters = append(h.Counters, fmt.Sprintf("CTR_%d", i))
	}
	for r := range nranks {
		h.Hosts = append(h.Hosts, fmt.Sprintf("node%03d", r/ranksPerHost))
	}
	return h
}

// RankOf generates rank r of the job of header h (see Run), passing its
// calls in order to truth when not nil. Ranks may be generated
// concurrently; the job's wallclock is the largest of their Wall.
func RankOf(opt Options, h *flowgraph.Header, r int, truth func(flowgraph.Call)) *flowgraph.Rank {
	slow := 1.0
	for _, s := range opt.SlowRanks {
		if s == r {
			slow = 3
		}
	}
	// Same program structure on every rank, different branch data.
	p := New(opt)
	p.opt.Seed = opt.Seed*1000 + uint64(r)
	p.rank, p.ranks = r, h.NumRanks
	b := p.NewBuilder()
	p.Execute(slow, func(c flowgraph.Call) {
		b.Add(c)
		if truth != nil {
			truth(c)
		}
	})
	g := b.Graph()
	if opt.Budget > 0 {
		g.FitBudget(opt.Budget)
	}
	rk := &flowgraph.Rank{Rank: r, Host: h.Hosts[r], Complete: true, Start: int64(r) * 1000, MaxRSS: 50 << 20, Graph: g}
	wall := Wall(rk)
	rk.UserTime, rk.SysTime = wall*9/10, wall/20
	return rk
}

// Wall is the time from a generated rank's first event to its last.
func Wall(r *flowgraph.Rank) int64 {
	if k := len(r.Graph.Anchors); k > 0 {
		return r.Graph.Anchors[k-1].Time
	}
	return 0
}

// HPCCShape is a program shaped as HPCC is at scale (scripts/genjob, make
// bench-scale): hundreds of call sites in nested loops, polls whose
// run lengths have a long tail, branches on data and on the rank, events
// calls a rank, each rank within a budget of 128 KiB (the recorder's
// default when the benchmarks of record were measured).
func HPCCShape(events int64) Options {
	return Options{Seed: 9, Events: events, Depth: 6, Sites: 400, MaxIter: 8, Branchy: true, Polls: true,
		RankBranches: true, Budget: 128 << 10}
}

// WriteJob writes a generated job (see Run) to path and, beside it, the
// full trace of every rank (see flowgraph.TracePath), as a run recorded
// with MPIFLOW_TRACE=1 leaves them.
func WriteJob(path string, opt Options, nranks, ranksPerHost int) (flowgraph.Header, []*flowgraph.Rank, error) {
	var tw traceWriters
	h, ranks := RunTruth(opt, nranks, ranksPerHost, func(rank int, c flowgraph.Call) {
		tw.add(path, rank, c)
	})
	tw.close()
	if tw.err != nil {
		return h, nil, tw.err
	}
	for r, rk := range ranks {
		// The traces number nodes in order of first call, as Builder
		// does; check it, since the node numbers must be the graph's.
		for i, n := range rk.Graph.Nodes {
			if n.Key != tw.keys[r][i] {
				return h, nil, fmt.Errorf("rank %d: node %d of the graph is not node %d of the trace", r, i, i)
			}
		}
	}
	return h, ranks, flowgraph.WriteFile(path, h, ranks)
}

// traceWriters writes the full traces of ranks given one after the other.
type traceWriters struct {
	f    *os.File
	w    *flowgraph.TraceWriter
	rank int
	node map[flowgraph.NodeKey]int
	keys [][]flowgraph.NodeKey // per rank, the key of each node
	err  error
}

func (tw *traceWriters) add(job string, rank int, c flowgraph.Call) {
	if tw.err != nil {
		return
	}
	if tw.w == nil || rank != tw.rank {
		tw.close()
		path := flowgraph.TracePath(job, rank, 0)
		if tw.f, tw.err = os.Create(path); tw.err != nil {
			tw.err = fmt.Errorf("create %s: %w", path, tw.err)
			return
		}
		tw.w, tw.rank, tw.node = flowgraph.NewTraceWriter(tw.f, rank), rank, map[flowgraph.NodeKey]int{}
		tw.keys = append(tw.keys, make([][]flowgraph.NodeKey, max(rank+1-len(tw.keys), 0))...)
	}
	n, ok := tw.node[c.Key]
	if !ok {
		n = len(tw.node)
		tw.node[c.Key] = n
		tw.keys[rank] = append(tw.keys[rank], c.Key)
	}
	tw.err = tw.w.Add(flowgraph.TraceEvent{Node: n, Enter: c.Enter, Exit: c.Exit})
}

// close ends the current rank's trace with its node table.
func (tw *traceWriters) close() {
	if tw.w == nil {
		return
	}
	var nodes []flowgraph.TraceNode
	for _, k := range tw.keys[tw.rank] {
		nodes = append(nodes, flowgraph.TraceNode{Call: k.Call, Site: siteAddr(k.Site), Bytes: k.Bytes, Partner: k.Partner, Comm: k.Comm})
	}
	err := tw.w.Close(nodes)
	if cerr := tw.f.Close(); err == nil {
		err = cerr
	}
	if tw.err == nil && err != nil {
		tw.err = fmt.Errorf("write %s: %w", tw.f.Name(), err)
	}
	tw.w = nil
}
