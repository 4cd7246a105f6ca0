package analysis

import (
	"fmt"

	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

// Spread is one quantity over the ranks, as IPM's banner gives it: its
// total, mean, least and largest value, with the ranks of the extremes
// (the first rank when several share one). Times are in seconds, shares in
// percent, sizes in bytes (Unit).
type Spread struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	Total   float64 `json:"total"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	MinRank int     `json:"min_rank"`
	MaxRank int     `json:"max_rank"`
}

// Spreads are the wall time, MPI time, MPI share, user and system CPU
// time, bytes sent and received, peak memory and, with the counters, IPC
// and Gflop/s (counterSpreads) of the selected ranks
// (their thread 0: CPU time and memory are the process's), times from the
// end of MPI_Init as in the call table; the MPI share's total is the job's
// (MPI time over wall time, as the banner's %mpi). Nil without ranks.
func (j *Job) Spreads() []Spread {
	var rs []flowgraph.RankStat
	for _, r := range j.Summary.Ranks {
		if r.Thread == 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	ns := func(v int64) float64 { return float64(v) / 1e9 }
	quantities := []struct {
		name, unit string
		get        func(r *flowgraph.RankStat) float64
	}{
		{"wall time", "s", func(r *flowgraph.RankStat) float64 { return ns(r.Wall) }},
		{"MPI time", "s", func(r *flowgraph.RankStat) float64 { return ns(r.MPI) }},
		{"MPI share", "%", func(r *flowgraph.RankStat) float64 { return Percent(r.MPI, r.Wall) }},
		{"user CPU time", "s", func(r *flowgraph.RankStat) float64 { return ns(r.UserTime) }},
		{"system CPU time", "s", func(r *flowgraph.RankStat) float64 { return ns(r.SysTime) }},
		{"bytes", "B", func(r *flowgraph.RankStat) float64 { return float64(r.Bytes) }},
		{"max RSS", "B", func(r *flowgraph.RankStat) float64 { return float64(r.MaxRSS) }},
	}
	ranks := make([]int, len(rs))
	for i := range rs {
		ranks[i] = rs[i].Rank
	}
	out := make([]Spread, len(quantities))
	for k, q := range quantities {
		out[k] = spreadOf(q.name, q.unit, ranks, func(i int) float64 { return q.get(&rs[i]) })
	}
	mpi, wall, _ := j.Summary.Totals()
	out[2].Total = Percent(mpi, wall)
	return append(out, j.counterSpreads()...)
}

// counterSpreads are the compute phases' instructions per cycle and
// floating-point rate (Gflop/s over their time) of each rank, when the
// recording has the counters (IPM's gflop/sec); the IPC's total is the
// job's, the rate's the sum over the ranks.
func (j *Job) counterSpreads() []Spread {
	cm := newCounterMap(j.Header.Counters)
	if cm.cyc < 0 && cm.fp < 0 {
		return nil
	}
	type sums = computeSums
	var ranks []int
	var per []sums
	for _, r := range j.Ranks {
		if r.Thread != 0 {
			continue
		}
		ranks, per = append(ranks, r.Rank.Rank), append(per, r.compute)
	}
	if len(per) == 0 {
		return nil
	}
	spread := func(name, unit string, get func(s *sums) float64) Spread {
		return spreadOf(name, unit, ranks, func(i int) float64 { return get(&per[i]) })
	}
	ratio := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a / b
	}
	var out []Spread
	if cm.ins >= 0 && cm.cyc >= 0 {
		q := spread("IPC of compute", "", func(s *sums) float64 { return ratio(float64(s.ctr[cm.ins]), float64(s.ctr[cm.cyc])) })
		var ins, cyc float64
		for _, s := range per {
			ins, cyc = ins+float64(s.ctr[cm.ins]), cyc+float64(s.ctr[cm.cyc])
		}
		q.Total = ratio(ins, cyc)
		out = append(out, q)
	}
	if cm.fp >= 0 {
		out = append(out, spread("Gflop/s of compute", "", func(s *sums) float64 { return ratio(float64(s.ctr[cm.fp]), float64(s.time)) }))
	}
	return out
}

// computeSums are the sums over the compute phases (edges) of a graph:
// their time, and each counter in the order of Header.Counters.
type computeSums struct {
	ctr  []int64
	time int64
}

// sumCompute returns the computeSums of g, recorded with counters
// counters.
func sumCompute(g *flowgraph.Graph, counters int) computeSums {
	s := computeSums{ctr: make([]int64, counters)}
	for i := range g.Edges {
		e := &g.Edges[i]
		s.time += e.Time.Total
		for k, v := range e.Counters {
			if k < len(s.ctr) {
				s.ctr[k] += v
			}
		}
	}
	return s
}

// spreadOf is the spread of the values value(i) of ranks[i] (not empty).
func spreadOf(name, unit string, ranks []int, value func(i int) float64) Spread {
	s := Spread{Name: name, Unit: unit, MinRank: ranks[0], MaxRank: ranks[0]}
	for i, r := range ranks {
		v := value(i)
		s.Total += v
		if i == 0 || v < s.Min {
			s.Min, s.MinRank = v, r
		}
		if i == 0 || v > s.Max {
			s.Max, s.MaxRank = v, r
		}
	}
	s.Mean = s.Total / float64(len(ranks))
	return s
}

// Format writes a value of s as the tables do: seconds to 3 significant
// digits, a share with 2 decimals, bytes in KiB, MiB, ..., rates and
// ratios to 3 significant digits.
func (s *Spread) Format(v float64) string {
	switch s.Unit {
	case "s":
		return units.Seconds(v)
	case "%":
		return fmt.Sprintf("%.2f%%", v)
	case "B":
		return units.Bytes(v)
	}
	return fmt.Sprintf("%.3g", v)
}
