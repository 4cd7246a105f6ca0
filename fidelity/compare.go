package fidelity

import (
	"fmt"

	"mpiflow/flowgraph"
)

// RankResult is the comparison of one rank block's rebuilt events with its
// recorded ones.
type RankResult struct {
	Rank   int   `json:"rank"`
	Thread int   `json:"thread"`
	Events int64 `json:"events"` // rebuilt events
	// TruthEvents is the number of recorded events; TruthComplete is false
	// when the full trace was cut short (the rank died).
	TruthEvents   int64 `json:"truth_events"`
	TruthComplete bool  `json:"truth_complete"`
	// OrderIdentical holds when both have the same number of events and
	// the same node at every index; FirstMismatch is the first index where
	// they differ (-1 when identical).
	OrderIdentical bool  `json:"order_identical"`
	FirstMismatch  int64 `json:"first_mismatch"`
	// OrderUpToRuns holds when the two orders are the same once every
	// event that repeats the one before it is left out: only the lengths
	// of runs of one call (the tries of a poll) differ.
	OrderUpToRuns bool `json:"order_identical_up_to_runs"`
	// Bytes are what the block's parts take in the file, and Budget the
	// recording's budget and what was approximated to fit it (nil: no
	// budget).
	Bytes  flowgraph.FileBytes  `json:"bytes"`
	Budget *flowgraph.BudgetUse `json:"budget,omitempty"`
	// StartError and EndError are the absolute differences of the events'
	// start and end times (ns since the rank's first event), over the
	// indexes both have.
	StartError Percentiles `json:"start_error_ns"`
	EndError   Percentiles `json:"end_error_ns"`
	// MaxMPIShareErrorPP is the largest difference, in percentage points,
	// between the rebuilt and the recorded share of a time slice spent
	// inside MPI, found in slice WorstMPISlice.
	MaxMPIShareErrorPP float64 `json:"max_mpi_share_error_pp"`
	WorstMPISlice      int     `json:"worst_mpi_slice"`
	// MaxCallShareErrorPP is the same for the share of one call (by
	// name), the worst being WorstCall in slice WorstSlice.
	MaxCallShareErrorPP float64 `json:"max_call_share_error_pp"`
	WorstCall           string  `json:"worst_call"`
	WorstSlice          int     `json:"worst_slice"`

	start, end hist
}

// compareEvents walks the rebuilt and the recorded events in step: event
// order and start and end errors. Memory is the two sources' buffers and
// the error histograms.
func compareEvents(rebuilt, truth flowgraph.EventSource, res *RankResult) error {
	res.FirstMismatch = -1
	res.OrderUpToRuns = true
	var runs runOrder
	var nr, nt int64
	for {
		okR, okT := rebuilt.Next(), truth.Next()
		if okR {
			nr++
		}
		if okT {
			nt++
		}
		if !okR || !okT {
			// Count what is left of the longer one.
			for okR && rebuilt.Next() {
				nr++
			}
			for okT && truth.Next() {
				nt++
			}
			break
		}
		r, t := rebuilt.Event(), truth.Event()
		if r.Node != t.Node && res.FirstMismatch < 0 {
			res.FirstMismatch = r.Index
		}
		if res.OrderUpToRuns {
			res.OrderUpToRuns = runs.add(r.Node, t.Node)
		}
		res.start.add(r.Start - t.Start)
		res.end.add(r.End - t.End)
	}
	if err := rebuilt.Err(); err != nil {
		return fmt.Errorf("rebuild rank %d thread %d: %w", res.Rank, res.Thread, err)
	}
	if err := truth.Err(); err != nil {
		return err
	}
	if nr != nt && res.FirstMismatch < 0 {
		res.FirstMismatch = min(nr, nt)
	}
	res.OrderUpToRuns = res.OrderUpToRuns && nr == nt && len(runs.a) == 0 && len(runs.b) == 0
	res.Events, res.TruthEvents = nr, nt
	res.OrderIdentical = res.FirstMismatch < 0
	res.StartError, res.EndError = res.start.percentiles(), res.end.percentiles()
	return nil
}

// runOrder compares two event orders with every event that repeats the one
// before it left out, fed one event of each at a time.
type runOrder struct {
	lastA, lastB int
	a, b         []int // the nodes of either side not yet matched
	started      bool
}

// add adds the next event of each side and reports whether the orders
// still agree.
func (o *runOrder) add(a, b int) bool {
	if !o.started || a != o.lastA {
		o.a = append(o.a, a)
	}
	if !o.started || b != o.lastB {
		o.b = append(o.b, b)
	}
	o.lastA, o.lastB, o.started = a, b, true
	n := min(len(o.a), len(o.b))
	for i := range n {
		if o.a[i] != o.b[i] {
			return false
		}
	}
	o.a, o.b = append(o.a[:0], o.a[n:]...), append(o.b[:0], o.b[n:]...)
	return true
}
