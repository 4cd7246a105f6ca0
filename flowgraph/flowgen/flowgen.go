// Package flowgen generates synthetic MPI event sequences and the event flow
// graphs they produce, for tests and benchmarks: a random program of nested
// loops, data-dependent branches and MPI calls, executed with random timings.
package flowgen

import (
	"fmt"
	"math/rand/v2"

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
}

var calls = []string{"MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend", "MPI_Wait", "MPI_Waitall",
	"MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Reduce", "MPI_Alltoall", "MPI_File_write_at_all"}

type stmt struct {
	site   int
	iters  int    // > 0: a loop over body
	branch bool   // a branch between body and alt
	body   []stmt // loop or branch body
	alt    []stmt
}

// Program is a generated program; Execute runs it.
type Program struct {
	opt  Options
	main []stmt
	rng  *rand.Rand
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
	p := &Program{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))}
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
			b = append(b, stmt{site: -1, branch: true, body: p.block(depth - 1), alt: p.block(depth - 1)})
		default:
			b = append(b, stmt{site: p.rng.IntN(p.opt.Sites)})
		}
	}
	return b
}

// Execute runs the program, calling emit for each call in order with
// synthetic timings, until opt.Events calls were made. slow scales the
// compute time between calls.
func (p *Program) Execute(slow float64, emit func(flowgraph.Call)) {
	rng := rand.New(rand.NewPCG(p.opt.Seed+1, 7))
	var n int64
	var t int64 = 1_000_000
	var ctr []int64
	if p.opt.Counters > 0 {
		ctr = make([]int64, p.opt.Counters)
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
				if rng.IntN(3) == 0 {
					body = s.alt
				}
				if !run(body) {
					return false
				}
			default:
				if n >= p.opt.Events {
					return false
				}
				t += int64(float64(100+rng.IntN(2000)*(1+s.site%3)) * slow)
				enter := t
				var ce, cx []int64
				if ctr != nil {
					for k := range ctr {
						ctr[k] += int64(1000 * (k + 1))
					}
					ce = append([]int64(nil), ctr...)
				}
				t += int64(50 + rng.IntN(500)*(1+s.site%5))
				if ctr != nil {
					for k := range ctr {
						ctr[k] += int64(10 * (k + 1))
					}
					cx = append([]int64(nil), ctr...)
				}
				emit(flowgraph.Call{
					Key:           flowgraph.NodeKey{Call: calls[s.site%len(calls)], Site: s.site, Partner: -1, Comm: -1},
					Enter:         enter,
					Exit:          t,
					Bytes:         int64(8 << (s.site % 10)),
					Partner:       s.site % 4,
					CommSize:      4,
					CountersEnter: ce,
					CountersExit:  cx,
				})
				n++
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

// NewBuilder returns a Builder for the program's events, with every call
// site present: the Site of a generated key is its index in Graph.Sites.
func (p *Program) NewBuilder() *flowgraph.Builder {
	b := flowgraph.NewBuilderBudget(p.opt.Counters, flowgraph.TimingBudget{Bytes: p.opt.TimingBytes, Intervals: p.opt.Anchors})
	for i := range p.opt.Sites {
		b.Site(flowgraph.CallSite{Addr: uint64(0x401000 + 16*i), Object: "/usr/bin/app", Offset: uint64(0x1000 + 16*i)})
	}
	return b
}

// Graph executes the program into a graph.
func (p *Program) Graph(slow float64) flowgraph.Graph {
	b := p.NewBuilder()
	p.Execute(slow, b.Add)
	return b.Graph()
}

// Run generates a whole job of nranks ranks running the same program with
// different data (seeds), on nranks/ranksPerHost hosts.
func Run(opt Options, nranks, ranksPerHost int) (flowgraph.Header, []*flowgraph.Rank) {
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
	var ranks []*flowgraph.Rank
	for r := range nranks {
		h.Hosts = append(h.Hosts, fmt.Sprintf("node%03d", r/ranksPerHost))
		o := opt
		o.Seed = opt.Seed*1000 + uint64(r)
		slow := 1.0
		for _, s := range opt.SlowRanks {
			if s == r {
				slow = 3
			}
		}
		// Same program structure on every rank, different branch data.
		p := New(opt)
		p.opt.Seed = o.Seed
		g := p.Graph(slow)
		var wall int64
		if k := len(g.Anchors); k > 0 {
			wall = g.Anchors[k-1].Time
		}
		h.Wallclock = max(h.Wallclock, wall)
		ranks = append(ranks, &flowgraph.Rank{
			Rank: r, Host: h.Hosts[r], Complete: true, Start: int64(r) * 1000,
			UserTime: wall * 9 / 10, SysTime: wall / 20, MaxRSS: 50 << 20, Graph: g,
		})
	}
	return h, ranks
}
