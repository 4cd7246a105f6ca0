// Package fidelity measures how true the event trace rebuilt from an
// mpiflow job file is to the full trace recorded beside it
// (MPIFLOW_TRACE=1): per rank, the event order, the start and end time
// errors, the MPI and per-call time shares of regular time slices, and
// whether the aggregation (see package aggregate) finds the same best
// partitions on both.
package fidelity

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"mpiflow/aggregate"
	"mpiflow/flowgraph"
)

// DefaultPValues are the trade-off values at which the partitions are
// compared.
var DefaultPValues = []float64{0.1, 0.3, 0.5, 0.7, 0.9}

// Options select what Compare compares.
type Options struct {
	// Slices is the number of time slices of the share comparison and of
	// the aggregation models (aggregate.DefaultSlices if 0).
	Slices int
	// Ranks selects world ranks; nil selects all.
	Ranks map[int]bool
	// PValues are the p at which partitions are compared (DefaultPValues
	// if nil).
	PValues []float64
	// Workers bounds the goroutines building the models (GOMAXPROCS if
	// < 1).
	Workers int
}

// PartitionMatch tells whether the best partitions at P are the same on
// the rebuilt trace and on the recorded one, and if not, how much worse the
// rebuilt trace's partition is on the recorded trace than the best one.
type PartitionMatch struct {
	P       float64 `json:"p"`
	Same    bool    `json:"same"`
	Rebuilt int     `json:"rebuilt_aggregates"`
	Truth   int     `json:"truth_aggregates"`
	// QualityGap is the normalized quality of the recorded trace's best
	// partition minus that of the rebuilt trace's best partition, both
	// judged on the recorded trace: 0 when they are the same, >= 0 up to
	// rounding, in units of the full aggregate's gain and loss.
	QualityGap float64 `json:"quality_gap"`
	// Equivalent is Same, or a QualityGap of at most PartitionTolerance:
	// the rebuilt trace's partition is as good on the recorded trace as
	// the best one, up to what timing noise of a few microseconds moves.
	Equivalent bool `json:"equivalent"`
}

// PartitionTolerance is the largest QualityGap of an equivalent partition.
// Best partitions of real runs have near-ties that timing noise far below
// the rebuild's error decides: on LAMMPS (2 ranks, 3000 steps), moving
// every start and end of the recorded trace by a random 10 us or less
// changed the best partitions at p = 0.1 and 0.3 with gaps of 2.3e-6 and
// 6.3e-6 (by 50 us: up to 1.3e-4), and the rebuilt trace, whose median
// error there was 87 us, differed at p = 0.1 with the same 2.3e-6.
const PartitionTolerance = 1e-5

// Report is the comparison of a whole job (the selected ranks).
type Report struct {
	File   string       `json:"file"`
	Slices int          `json:"slices"`
	Ranks  []RankResult `json:"ranks"`
	// Events and OrderIdentical sum up the ranks; StartError and EndError
	// are over all their events.
	Events         int64       `json:"events"`
	OrderIdentical bool        `json:"order_identical"`
	OrderUpToRuns  bool        `json:"order_identical_up_to_runs"`
	StartError     Percentiles `json:"start_error_ns"`
	EndError       Percentiles `json:"end_error_ns"`
	// The largest share errors of all ranks and slices, and where.
	MaxMPIShareErrorPP  float64 `json:"max_mpi_share_error_pp"`
	WorstMPIRank        int     `json:"worst_mpi_rank"`
	WorstMPISlice       int     `json:"worst_mpi_slice"`
	MaxCallShareErrorPP float64 `json:"max_call_share_error_pp"`
	WorstCall           string  `json:"worst_call"`
	WorstRank           int     `json:"worst_rank"`
	WorstSlice          int     `json:"worst_slice"`
	// Aggregate compares the best partitions of the aggregation (the
	// `mpiflow aggregate` defaults: calls as states, rank -> host -> job
	// hierarchy) at each p.
	Aggregate []PartitionMatch `json:"aggregate"`
}

// Compare compares the rebuilt trace of the selected ranks of f with the
// full traces beside f.Path (see flowgraph.TracePath). Both sides are read
// event by event, each twice (once for the events, once for the models);
// memory is the graphs, the error histograms and the models.
func Compare(f *flowgraph.File, opt Options) (*Report, error) {
	if opt.Slices == 0 {
		opt.Slices = aggregate.DefaultSlices
	}
	if opt.PValues == nil {
		opt.PValues = DefaultPValues
	}
	ranks, err := f.ReadRanks(opt.Ranks)
	if err != nil {
		return nil, err
	}
	if len(ranks) == 0 {
		return nil, fmt.Errorf("%s: no rank selected", f.Path)
	}
	rep := &Report{File: f.Path, Slices: opt.Slices, OrderIdentical: true, OrderUpToRuns: true}
	// Every trace must be there before anything long starts.
	for _, r := range ranks {
		t, err := OpenTruth(f.Path, r)
		if err != nil {
			return nil, err
		}
		t.Close()
	}
	var start, end hist
	for _, r := range ranks {
		res := RankResult{Rank: r.Rank, Thread: r.Thread, Budget: r.Graph.Budget}
		if i := f.FindRank(r.Rank, r.Thread); i >= 0 {
			res.Bytes = f.BlockBytes(i, r)
		}
		t, err := OpenTruth(f.Path, r)
		if err != nil {
			return nil, err
		}
		err = compareEvents(r.Graph.Events(), t, &res)
		res.TruthComplete = t.Complete()
		t.Close()
		if err != nil {
			return nil, err
		}
		start.merge(&res.start)
		end.merge(&res.end)
		rep.Events += res.Events
		rep.OrderIdentical = rep.OrderIdentical && res.OrderIdentical
		rep.OrderUpToRuns = rep.OrderUpToRuns && res.OrderUpToRuns
		rep.Ranks = append(rep.Ranks, res)
	}
	rep.StartError, rep.EndError = start.percentiles(), end.percentiles()

	src, err := aggregate.NewRankSource(&f.Header, ranks, aggregate.FlowOptions{})
	if err != nil {
		return nil, err
	}
	rebuilt, err := aggregate.Build(src, opt.Slices, opt.Workers)
	if err != nil {
		return nil, fmt.Errorf("%s: model of the rebuilt trace: %w", f.Path, err)
	}
	truth, err := aggregate.Build(&truthSource{RankSource: src, job: f.Path, ranks: ranks}, opt.Slices, opt.Workers)
	if err != nil {
		return nil, fmt.Errorf("%s: model of the full traces: %w", f.Path, err)
	}
	rep.compareShares(rebuilt, truth)
	h, err := aggregate.NewHierarchy(src.DefaultSpec(), src.Resources())
	if err != nil {
		return nil, err
	}
	if rep.Aggregate, err = comparePartitions(rebuilt, truth, h, opt.PValues); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return rep, nil
}

// truthSource is the rebuilt trace's state source with the full traces'
// events instead of the reconstruction: same resources, states and span.
type truthSource struct {
	*aggregate.RankSource
	job   string
	ranks []*flowgraph.Rank
}

func (s *truthSource) Open(i int) (aggregate.Reader, error) {
	if i < 0 || i >= len(s.ranks) {
		return nil, fmt.Errorf("no resource %d (the source has %d)", i, len(s.ranks))
	}
	t, err := OpenTruth(s.job, s.ranks[i])
	if err != nil {
		return nil, err
	}
	rd, err := s.EventReader(i, s.ranks[i], t)
	if err != nil {
		t.Close()
		return nil, err
	}
	return &truthReader{Reader: rd, t: t}, nil
}

// truthReader closes the trace file with the reader.
type truthReader struct {
	aggregate.Reader
	t *Truth
}

func (r *truthReader) Close() error {
	return errors.Join(r.Reader.Close(), r.t.Close())
}

// compareShares finds, per rank and overall, the largest differences of
// the MPI share and of each call's share of a slice (state 0 of the
// models is aggregate.ComputeState, the others are calls).
func (rep *Report) compareShares(rebuilt, truth *aggregate.Model) {
	rep.MaxMPIShareErrorPP, rep.MaxCallShareErrorPP = -1, -1
	for ri := range rep.Ranks {
		res := &rep.Ranks[ri]
		res.MaxMPIShareErrorPP, res.MaxCallShareErrorPP = -1, -1
		for t := range rebuilt.Slices() {
			dur := float64(rebuilt.SliceDur(t))
			cr, ct := rebuilt.Cell(ri, t), truth.Cell(ri, t)
			var mr, mt int64
			for x := 1; x < len(cr); x++ {
				mr += cr[x]
				mt += ct[x]
				if d := pp(cr[x], ct[x], dur); d > res.MaxCallShareErrorPP {
					res.MaxCallShareErrorPP, res.WorstCall, res.WorstSlice = d, rebuilt.States[x], t
				}
			}
			if d := pp(mr, mt, dur); d > res.MaxMPIShareErrorPP {
				res.MaxMPIShareErrorPP, res.WorstMPISlice = d, t
			}
		}
		// No call state at all leaves the sentinels: nothing differs.
		res.MaxMPIShareErrorPP, res.MaxCallShareErrorPP = max(res.MaxMPIShareErrorPP, 0), max(res.MaxCallShareErrorPP, 0)
		if res.MaxCallShareErrorPP > rep.MaxCallShareErrorPP {
			rep.MaxCallShareErrorPP, rep.WorstCall, rep.WorstRank, rep.WorstSlice = res.MaxCallShareErrorPP, res.WorstCall, ri, res.WorstSlice
		}
		if res.MaxMPIShareErrorPP > rep.MaxMPIShareErrorPP {
			rep.MaxMPIShareErrorPP, rep.WorstMPIRank, rep.WorstMPISlice = res.MaxMPIShareErrorPP, ri, res.WorstMPISlice
		}
	}
	// Report ranks by their world rank, not their position.
	rep.WorstRank = rep.Ranks[rep.WorstRank].Rank
	rep.WorstMPIRank = rep.Ranks[rep.WorstMPIRank].Rank
}

// pp is the difference of two durations in percentage points of dur.
func pp(a, b int64, dur float64) float64 {
	return 100 * math.Abs(float64(a-b)) / dur
}

// comparePartitions computes the best partitions of both models at each p.
func comparePartitions(rebuilt, truth *aggregate.Model, h *aggregate.Hierarchy, ps []float64) ([]PartitionMatch, error) {
	ar, err := aggregate.New(rebuilt, h, aggregate.Options{})
	if err != nil {
		return nil, fmt.Errorf("aggregate the rebuilt trace: %w", err)
	}
	at, err := aggregate.New(truth, h, aggregate.Options{})
	if err != nil {
		return nil, fmt.Errorf("aggregate the full traces: %w", err)
	}
	var out []PartitionMatch
	for _, p := range ps {
		cr, err := ar.BestCells(p)
		if err != nil {
			return nil, err
		}
		ct, err := at.BestCells(p)
		if err != nil {
			return nil, err
		}
		m, err := judge(at, p, cr, ct)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// judge compares the rebuilt trace's best partition cr at p with the
// recorded trace's ct, judging both on the recorded trace's aggregator at.
func judge(at *aggregate.Aggregator, p float64, cr, ct []aggregate.Cell) (PartitionMatch, error) {
	m := PartitionMatch{P: p, Same: slices.Equal(cr, ct), Rebuilt: len(cr), Truth: len(ct), Equivalent: true}
	if m.Same {
		return m, nil
	}
	qr, err := at.Quality(p, cr)
	if err != nil {
		return m, fmt.Errorf("judge the rebuilt partition on the full traces: %w", err)
	}
	qt, err := at.Quality(p, ct)
	if err != nil {
		return m, err
	}
	m.QualityGap = qt - qr
	m.Equivalent = m.QualityGap <= PartitionTolerance
	return m, nil
}
