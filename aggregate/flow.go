package aggregate

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"mpiflow/flowgraph"
)

// ComputeState is the state of a rank between two MPI calls.
const ComputeState = "Compute"

// Call groups, the states of a grouped trace besides ComputeState.
const (
	GroupP2P        = "p2p"
	GroupCollective = "collective"
	GroupWait       = "wait"
	GroupIO         = "io"
	GroupOther      = "other"
)

var groupOrder = []string{ComputeState, GroupP2P, GroupCollective, GroupWait, GroupIO, GroupOther}

var collectives = map[string]bool{
	"barrier": true, "bcast": true, "reduce": true, "allreduce": true, "gather": true, "gatherv": true,
	"allgather": true, "allgatherv": true, "scatter": true, "scatterv": true, "alltoall": true,
	"alltoallv": true, "alltoallw": true, "reduce_scatter": true, "reduce_scatter_block": true,
	"scan": true, "exscan": true, "neighbor_allgather": true, "neighbor_allgatherv": true,
	"neighbor_alltoall": true, "neighbor_alltoallv": true, "neighbor_alltoallw": true,
}

var p2p = map[string]bool{
	"send": true, "recv": true, "isend": true, "irecv": true, "ssend": true, "issend": true,
	"bsend": true, "ibsend": true, "rsend": true, "irsend": true, "sendrecv": true,
	"sendrecv_replace": true, "probe": true, "iprobe": true, "mprobe": true, "improbe": true,
	"mrecv": true, "imrecv": true, "start": true, "startall": true,
	// One-sided communication moves data between two ranks too.
	"put": true, "get": true, "accumulate": true, "get_accumulate": true, "fetch_and_op": true,
	"compare_and_swap": true, "rput": true, "rget": true, "raccumulate": true, "rget_accumulate": true,
}

// CallGroup returns the group of an MPI call name: p2p (point-to-point and
// one-sided), collective (blocking or not), wait (MPI_Wait*, MPI_Test* and
// RMA synchronization), io (MPI_File_*) or other.
func CallGroup(call string) string {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(call, "MPI_"), "PMPI_"))
	switch {
	case strings.HasPrefix(name, "file_"):
		return GroupIO
	case strings.HasPrefix(name, "wait"), strings.HasPrefix(name, "test"),
		name == "win_fence", name == "win_wait", name == "win_complete", name == "win_flush",
		name == "win_flush_all", name == "win_unlock", name == "win_unlock_all":
		return GroupWait
	case collectives[name], strings.HasPrefix(name, "i") && collectives[name[1:]]:
		return GroupCollective
	case p2p[name]:
		return GroupP2P
	}
	return GroupOther
}

// FlowOptions tune a FlowSource.
type FlowOptions struct {
	// Group replaces each call name by its CallGroup.
	Group bool
	// Workers bounds the goroutines reading ranks (GOMAXPROCS if < 1).
	Workers int
}

// FlowSource is the state trace of an mpiflow file: each rank (thread) is
// a resource whose states are its MPI calls, reconstructed from the event
// flow graph, and ComputeState between them. Times are ns since
// Header.StartUnixNano.
type FlowSource struct {
	f          *flowgraph.File
	group      bool
	res        []Resource
	hosts      map[int]string
	states     []string
	stateOf    map[string]int
	start, end int64
}

// NewFlowSource scans every rank of f once (graphs only, no event) for
// the time span, the call names and the hosts.
func NewFlowSource(f *flowgraph.File, opt FlowOptions) (*FlowSource, error) {
	n := len(f.Index)
	if n == 0 {
		return nil, fmt.Errorf("%s: no ranks", f.Path)
	}
	type scan struct {
		start, end int64
		calls      []string
		host       string
	}
	scans := make([]scan, n)
	err := parallel(n, opt.Workers, func(i int) error {
		r, err := f.ReadRank(i)
		if err != nil {
			return err
		}
		g := &r.Graph
		// The closing anchor holds the end of the last event; the sums of
		// all call and compute times give the same without anchors.
		var dur int64
		for _, nd := range g.Nodes {
			dur += nd.Time.Total
		}
		for _, e := range g.Edges {
			dur += e.Time.Total
		}
		if k := len(g.Anchors); k > 0 {
			dur = max(dur, g.Anchors[k-1].Time)
		}
		s := scan{start: r.Start, end: r.Start + dur, host: r.Host}
		for _, nd := range g.Nodes {
			s.calls = append(s.calls, nd.Key.Call)
		}
		scans[i] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	src := &FlowSource{f: f, group: opt.Group, hosts: map[int]string{}, stateOf: map[string]int{}}
	threads := map[int]int{}
	for _, e := range f.Index {
		threads[e.Rank]++
	}
	names := map[string]bool{}
	for i, s := range scans {
		e := f.Index[i]
		name := fmt.Sprintf("rank %d", e.Rank)
		if threads[e.Rank] > 1 {
			name = fmt.Sprintf("rank %d thread %d", e.Rank, e.Thread)
		}
		src.res = append(src.res, Resource{Name: name, Rank: e.Rank})
		if i == 0 || s.start < src.start {
			src.start = s.start
		}
		if i == 0 || s.end > src.end {
			src.end = s.end
		}
		if h := f.Header.Hosts; e.Rank >= 0 && e.Rank < len(h) && h[e.Rank] != "" {
			src.hosts[e.Rank] = h[e.Rank]
		} else if s.host != "" {
			src.hosts[e.Rank] = s.host
		}
		for _, c := range s.calls {
			names[src.stateName(c)] = true
		}
	}
	if src.group {
		for _, g := range groupOrder {
			if g == ComputeState || names[g] {
				src.states = append(src.states, g)
			}
		}
	} else {
		delete(names, ComputeState)
		src.states = append(src.states, ComputeState)
		var calls []string
		for c := range names {
			calls = append(calls, c)
		}
		slices.Sort(calls)
		src.states = append(src.states, calls...)
	}
	for i, s := range src.states {
		src.stateOf[s] = i
	}
	return src, nil
}

func (s *FlowSource) stateName(call string) string {
	if s.group {
		return CallGroup(call)
	}
	return call
}

// Resources implements Source.
func (s *FlowSource) Resources() []Resource { return s.res }

// States implements Source.
func (s *FlowSource) States() []string { return s.states }

// Span implements Source.
func (s *FlowSource) Span() (int64, int64) { return s.start, s.end }

// HostOf returns the host of a rank, "" if unknown.
func (s *FlowSource) HostOf(rank int) string { return s.hosts[rank] }

// DefaultSpec is the hierarchy rank -> host -> job of the file.
func (s *FlowSource) DefaultSpec() *Spec {
	return HostSpec(s.f.Header.JobID, s.res, s.HostOf)
}

// Open implements Source: it reads the rank's graph and reconstructs its
// events on the fly.
func (s *FlowSource) Open(i int) (Reader, error) {
	r, err := s.f.ReadRank(i)
	if err != nil {
		return nil, err
	}
	st := make([]int, len(r.Graph.Nodes))
	for k, nd := range r.Graph.Nodes {
		x, ok := s.stateOf[s.stateName(nd.Key.Call)]
		if !ok {
			return nil, fmt.Errorf("rank %d: call %q was not seen when the file was scanned", r.Rank, nd.Key.Call)
		}
		st[k] = x
	}
	return &flowReader{it: r.Graph.Events(), res: i, state: st, base: r.Start}, nil
}

// flowReader turns reconstructed events into states: the call itself, and
// ComputeState (state 0) from the end of the previous call.
type flowReader struct {
	it      *flowgraph.EventIter
	res     int
	state   []int
	base    int64
	prevEnd int64
	started bool
}

func (fr *flowReader) Read(buf []StateEvent) (int, error) {
	if len(buf) < 2 {
		// Each call can yield two states.
		return 0, io.ErrShortBuffer
	}
	n := 0
	for n+2 <= len(buf) && fr.it.Next() {
		ev := fr.it.Event()
		s, e := fr.base+ev.Start, fr.base+ev.End
		if fr.started && s > fr.prevEnd {
			buf[n] = StateEvent{Resource: fr.res, State: 0, Start: fr.prevEnd, End: s}
			n++
		}
		buf[n] = StateEvent{Resource: fr.res, State: fr.state[ev.Node], Start: s, End: e}
		n++
		fr.prevEnd, fr.started = e, true
	}
	if n > 0 {
		return n, nil
	}
	if err := fr.it.Err(); err != nil {
		return 0, err
	}
	return 0, io.EOF
}

func (fr *flowReader) Close() error { return nil }

// parallel calls f(0..n-1) on up to workers goroutines and returns the
// first error.
func parallel(n, workers int, f func(i int) error) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
