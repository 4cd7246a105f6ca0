package fidelity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"mpiflow/flowgraph"
	"mpiflow/internal/inputfile"
)

// ErrNoTrace is returned (wrapped) when a rank's full trace is missing.
var ErrNoTrace = errors.New("no full trace")

// Truth is the recorded full trace of one rank block, read as an event
// source: events numbered from 0, times in ns since the first event's enter
// (as the reconstruction gives them), node numbers those of the block's
// graph. InEdge is not known and stays -1. It reads event by event.
type Truth struct {
	path     string
	f        *os.File
	tr       *flowgraph.TraceReader
	graph    *flowgraph.Graph
	t0       int64
	n        int64
	ev       flowgraph.Event
	err      error
	complete bool
}

var _ flowgraph.EventSource = (*Truth)(nil)

// OpenTruth opens the full trace of block r of the job file jobFile, which
// the interposer wrote beside it (see flowgraph.TracePath).
func OpenTruth(jobFile string, r *flowgraph.Rank) (*Truth, error) {
	path := flowgraph.TracePath(jobFile, r.Rank, r.Thread)
	f, err := inputfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w of rank %d thread %d: record the run with MPIFLOW_TRACE=1 (or `mpiflow run --trace`)",
			path, ErrNoTrace, r.Rank, r.Thread)
	}
	if err != nil {
		return nil, fmt.Errorf("open full trace: %w", err)
	}
	tr, err := flowgraph.NewTraceReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if tr.Rank != r.Rank {
		f.Close()
		return nil, fmt.Errorf("%s: full trace of rank %d, expected rank %d", path, tr.Rank, r.Rank)
	}
	return &Truth{path: path, f: f, tr: tr, graph: &r.Graph}, nil
}

// Path is the full trace's file name.
func (t *Truth) Path() string { return t.path }

// Next implements flowgraph.EventSource.
func (t *Truth) Next() bool {
	if t.err != nil {
		return false
	}
	if !t.tr.Next() {
		t.finish()
		return false
	}
	e := t.tr.Event()
	if e.Node >= len(t.graph.Nodes) {
		t.err = fmt.Errorf("%s: event %d refers to node %d, the job file's graph has %d", t.path, t.n, e.Node, len(t.graph.Nodes))
		return false
	}
	if t.n == 0 {
		t.t0 = e.Enter
	}
	t.ev = flowgraph.Event{Index: t.n, Node: e.Node, InEdge: -1, Start: e.Enter - t.t0, End: e.Exit - t.t0}
	t.n++
	return true
}

// finish checks, at the end of a complete trace, that its node table is
// the graph's: a trace of another run would otherwise compare silently.
func (t *Truth) finish() {
	if t.err = t.tr.Err(); t.err != nil {
		return
	}
	t.complete = t.tr.Complete()
	if !t.complete {
		return
	}
	nodes := t.tr.Nodes()
	if len(nodes) != len(t.graph.Nodes) {
		t.err = fmt.Errorf("%s: %d nodes, the job file's graph has %d: not the trace of this run", t.path, len(nodes), len(t.graph.Nodes))
		return
	}
	for i, nd := range nodes {
		if nd.Call != t.graph.Nodes[i].Key.Call {
			t.err = fmt.Errorf("%s: node %d is %s, %s in the job file: not the trace of this run", t.path, i, nd.Call, t.graph.Nodes[i].Key.Call)
			return
		}
	}
}

// Event implements flowgraph.EventSource.
func (t *Truth) Event() flowgraph.Event { return t.ev }

// Err implements flowgraph.EventSource.
func (t *Truth) Err() error { return t.err }

// Complete reports whether the trace ended properly (the rank reached
// MPI_Finalize); valid once Next has returned false.
func (t *Truth) Complete() bool { return t.complete }

// Close closes the trace file.
func (t *Truth) Close() error { return t.f.Close() }
