package flowgraph

import (
	"fmt"
	"path/filepath"
	"sort"
)

// CallStat sums the nodes of one MPI call.
type CallStat struct {
	Call  string `json:"call"`
	Count int64  `json:"count"`
	Time  Stat   `json:"time_ns"`
	Bytes int64  `json:"bytes"`
}

// IsInit reports whether call is MPI_Init or MPI_Init_thread. Like IPM,
// summaries count time from the end of MPI_Init: its start-up cost says
// nothing about the application and would dwarf short runs.
func IsInit(call string) bool { return call == "MPI_Init" || call == "MPI_Init_thread" }

// RankStat summarizes one rank (or thread).
type RankStat struct {
	Rank     int   `json:"rank"`
	Thread   int   `json:"thread"`
	Wall     int64 `json:"wall_ns"`    // end of MPI_Init (or first event start) to last event end
	Init     int64 `json:"init_ns"`    // time inside MPI_Init, not part of Wall and MPI
	MPI      int64 `json:"mpi_ns"`     // time inside MPI calls
	Compute  int64 `json:"compute_ns"` // time between MPI calls
	Bytes    int64 `json:"bytes"`
	Events   int64 `json:"events"`
	UserTime int64 `json:"user_ns"`
	SysTime  int64 `json:"sys_ns"`
	MaxRSS   int64 `json:"max_rss"`
	Complete bool  `json:"complete"`
}

// Summary accumulates call and rank statistics over ranks.
type Summary struct {
	Calls map[string]*CallStat
	Ranks []RankStat
}

// NewSummary returns an empty summary.
func NewSummary() *Summary { return &Summary{Calls: make(map[string]*CallStat)} }

// Add adds one rank. Sums saturate at math.MaxInt64: every figure of a
// file read is at most that (Graph.Validate), but a job's sums over its
// nodes and ranks need not be.
func (s *Summary) Add(r *Rank) {
	g := &r.Graph
	rs := RankStat{Rank: r.Rank, Thread: r.Thread, Events: g.NumEvents, UserTime: r.UserTime,
		SysTime: r.SysTime, MaxRSS: r.MaxRSS, Complete: r.Complete}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		c := s.Calls[n.Key.Call]
		if c == nil {
			c = &CallStat{Call: n.Key.Call}
			s.Calls[n.Key.Call] = c
		}
		total := satAdd(c.Time.Total, n.Time.Total)
		c.Time.Merge(n.Time, c.Count, n.Count)
		c.Time.Total = total
		c.Count = satAdd(c.Count, n.Count)
		c.Bytes = satAdd(c.Bytes, n.Bytes.Total)
		rs.Bytes = satAdd(rs.Bytes, n.Bytes.Total)
		if IsInit(n.Key.Call) {
			rs.Init = satAdd(rs.Init, n.Time.Total)
		} else {
			rs.MPI = satAdd(rs.MPI, n.Time.Total)
		}
	}
	for i := range g.Edges {
		rs.Compute = satAdd(rs.Compute, g.Edges[i].Time.Total)
	}
	// Not below 0 where a clock stepped back (Graph.Validate).
	rs.Compute = max(rs.Compute, 0)
	if k := len(g.Anchors); k > 0 && g.Anchors[k-1].Event == g.NumEvents {
		// Not below 0 where the file's call times give MPI_Init more
		// than its timing gives the whole run (a damaged file: the
		// two are recorded apart).
		rs.Wall = max(g.Anchors[k-1].Time-rs.Init, 0)
	} else {
		rs.Wall = satAdd(rs.MPI, rs.Compute)
	}
	s.Ranks = append(s.Ranks, rs)
}

// TimeSum returns the sum of the call and compute times of all the
// graph's nodes and edges, in ns.
func (g *Graph) TimeSum() int64 {
	var d int64
	for i := range g.Nodes {
		d += g.Nodes[i].Time.Total
	}
	for i := range g.Edges {
		d += g.Edges[i].Time.Total
	}
	return d
}

// Duration returns the time from the start of the graph's first event to
// the end of its last, in ns: the time of the last anchor, which closes
// the graph (Anchor), or without anchors TimeSum.
func (g *Graph) Duration() int64 {
	if k := len(g.Anchors); k > 0 {
		return g.Anchors[k-1].Time
	}
	return g.TimeSum()
}

// End returns the end of the rank's last event in ns since the job's
// start.
func (r *Rank) End() int64 { return r.Start + r.Graph.Duration() }

// SortedCalls returns the calls by descending total time, then name.
func (s *Summary) SortedCalls() []CallStat {
	out := make([]CallStat, 0, len(s.Calls))
	for _, c := range s.Calls {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Time.Total != out[j].Time.Total {
			return out[i].Time.Total > out[j].Time.Total
		}
		return out[i].Call < out[j].Call
	})
	return out
}

// Totals returns the summed MPI time, wall time and bytes over all ranks,
// from the end of MPI_Init (saturating at math.MaxInt64).
func (s *Summary) Totals() (mpi, wall, bytes int64) {
	for _, r := range s.Ranks {
		mpi = satAdd(mpi, r.MPI)
		wall = satAdd(wall, r.Wall)
		bytes = satAdd(bytes, r.Bytes)
	}
	return
}

// DistinctHosts returns the distinct host names of the header, in order of first
// appearance; the empty names of ranks that left no data (a partial run) are
// no host.
func (h *Header) DistinctHosts() []string {
	seen := make(map[string]bool)
	var out []string
	for _, name := range h.Hosts {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// Label names a call site for people: function and file:line when resolved
// (the file's base name), the function alone without a source line, the
// file:line alone without a function, else the object's base name and the
// offset, else the raw address.
func (cs *CallSite) Label() string {
	switch {
	case cs.Function != "" && cs.File != "":
		return fmt.Sprintf("%s %s:%d", cs.Function, filepath.Base(cs.File), cs.Line)
	case cs.Function != "":
		return cs.Function
	case cs.File != "":
		return fmt.Sprintf("%s:%d", filepath.Base(cs.File), cs.Line)
	case cs.Object != "":
		return fmt.Sprintf("%s+%#x", filepath.Base(cs.Object), cs.Offset)
	default:
		return fmt.Sprintf("%#x", cs.Addr)
	}
}
