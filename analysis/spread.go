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
	out := make([]Spread, len(quantities))
	for k, q := range quantities {
		s := Spread{Name: q.name, Unit: q.unit, MinRank: rs[0].Rank, MaxRank: rs[0].Rank}
		for i := range rs {
			v := q.get(&rs[i])
			s.Total += v
			if i == 0 || v < s.Min {
				s.Min, s.MinRank = v, rs[i].Rank
			}
			if i == 0 || v > s.Max {
				s.Max, s.MaxRank = v, rs[i].Rank
			}
		}
		s.Mean = s.Total / float64(len(rs))
		out[k] = s
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
	type sums struct {
		ctr  []int64
		time int64
	}
	var ranks []int
	var per []sums
	for _, r := range j.Ranks {
		if r.Thread != 0 {
			continue
		}
		s := sums{ctr: make([]int64, len(j.Header.Counters))}
		for i := range r.Graph.Edges {
			e := &r.Graph.Edges[i]
			s.time += e.Time.Total
			for k, v := range e.Counters {
				if k < len(s.ctr) {
					s.ctr[k] += v
				}
			}
		}
		ranks, per = append(ranks, r.Rank.Rank), append(per, s)
	}
	if len(per) == 0 {
		return nil
	}
	spread := func(name, unit string, get func(s *sums) float64) Spread {
		q := Spread{Name: name, Unit: unit, MinRank: ranks[0], MaxRank: ranks[0]}
		for i := range per {
			v := get(&per[i])
			q.Total += v
			if i == 0 || v < q.Min {
				q.Min, q.MinRank = v, ranks[i]
			}
			if i == 0 || v > q.Max {
				q.Max, q.MaxRank = v, ranks[i]
			}
		}
		q.Mean = q.Total / float64(len(per))
		return q
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
