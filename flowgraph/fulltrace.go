package flowgraph

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mpiflow/internal/inputfile"
)

// Full-trace files (MPIFLOW_TRACE=1) hold every event of one rank, written
// by the interposer next to the job file as <job>.rank<N>.mftrace. They are
// the ground truth that reconstruction is tested against and the baseline
// that the event flow graph's size is compared with. Layout:
//
//	header  "MPIFLOWT", uint32 version, uint32 rank (big-endian)
//	events  per event: uvarint(node+1), varint(enter - previous exit)
//	        (zigzag; the first event's is its enter time), uvarint(exit-enter)
//	end     uvarint(0), uvarint(number of nodes), per node: uvarint(name
//	        length), name, uvarint(site address), varint(key bytes),
//	        uvarint(key partner+1), uvarint(key comm+1); then "MFTE"
//
// Node numbers are those of the rank's graph in the job file. A trace cut
// short (the rank died) has events but no node table.

const (
	traceMagic   = "MPIFLOWT"
	traceEnd     = "MFTE"
	traceVersion = 1
	maxTraceName = 1 << 10
)

// TraceEvent is one event of a full trace. Times are the recorder's clock
// in ns.
type TraceEvent struct {
	Node        int
	Enter, Exit int64
}

// TraceNode is a node of a full trace: its call and key fields (Site is the
// call site's address; fields not in the key are 0 or -1 as in NodeKey).
type TraceNode struct {
	Call    string
	Site    uint64
	Bytes   int64
	Partner int
	Comm    int
}

// TraceReader reads a full trace event by event, so a trace of any length
// can be processed in bounded memory.
type TraceReader struct {
	r        *bufio.Reader
	name     string
	Rank     int
	prevExit int64
	n        int64
	ev       TraceEvent
	nodes    []TraceNode
	done     bool
	complete bool
	err      error
}

// NewTraceReader reads the header of a full trace from r; name is used in
// errors.
func NewTraceReader(name string, r io.Reader) (*TraceReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var h [16]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, fmt.Errorf("%s: %w: trace header: %v", name, ErrFormat, err)
	}
	if string(h[:8]) != traceMagic {
		return nil, fmt.Errorf("%s: %w: not a full trace (magic %q)", name, ErrFormat, h[:8])
	}
	if v := binary.BigEndian.Uint32(h[8:]); v == 0 || v > traceVersion {
		return nil, fmt.Errorf("%s: %w: trace version %d, this mpiflow reads 1 to %d", name, ErrFormat, v, traceVersion)
	}
	return &TraceReader{r: br, name: name, Rank: int(binary.BigEndian.Uint32(h[12:]))}, nil
}

// Next reads the next event; it returns false at the end of the events or
// on error (see Err).
func (t *TraceReader) Next() bool {
	if t.done {
		return false
	}
	tag, err := binary.ReadUvarint(t.r)
	if err != nil {
		t.done = true
		if !errors.Is(err, io.EOF) {
			t.fail("event %d: %v", t.n, err)
		}
		return false // cut short: no node table, Complete stays false
	}
	if tag == 0 {
		t.done = true
		t.readNodes()
		return false
	}
	gap, err1 := binary.ReadVarint(t.r)
	dur, err2 := binary.ReadUvarint(t.r)
	if err1 != nil || err2 != nil || tag > 1<<31 || dur > 1<<62 {
		t.done = true
		t.fail("event %d: truncated or corrupt", t.n)
		return false
	}
	enter := t.prevExit + gap
	t.ev = TraceEvent{Node: int(tag - 1), Enter: enter, Exit: enter + int64(dur)}
	t.prevExit = t.ev.Exit
	t.n++
	return true
}

func (t *TraceReader) fail(format string, args ...any) {
	t.err = fmt.Errorf("%s: %w: %s", t.name, ErrFormat, fmt.Sprintf(format, args...))
}

func (t *TraceReader) readNodes() {
	n, err := binary.ReadUvarint(t.r)
	if err != nil || n > 1<<31 {
		t.fail("node table: bad count")
		return
	}
	nodes := make([]TraceNode, 0, min(n, 1<<16))
	for i := uint64(0); i < n; i++ {
		l, err := binary.ReadUvarint(t.r)
		if err != nil || l > maxTraceName {
			t.fail("node %d: bad name", i)
			return
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(t.r, name); err != nil {
			t.fail("node %d: %v", i, err)
			return
		}
		site, e1 := binary.ReadUvarint(t.r)
		by, e2 := binary.ReadVarint(t.r)
		pa, e3 := binary.ReadUvarint(t.r)
		co, e4 := binary.ReadUvarint(t.r)
		if err := errors.Join(e1, e2, e3, e4); err != nil || pa > 1<<31 || co > 1<<31 {
			t.fail("node %d: truncated or corrupt", i)
			return
		}
		nodes = append(nodes, TraceNode{Call: string(name), Site: site, Bytes: by, Partner: int(pa) - 1, Comm: int(co) - 1})
	}
	var end [4]byte
	if _, err := io.ReadFull(t.r, end[:]); err != nil || string(end[:]) != traceEnd {
		t.fail("no end marker")
		return
	}
	t.nodes = nodes
	t.complete = true
}

// Event is the event read by the last successful Next.
func (t *TraceReader) Event() TraceEvent { return t.ev }

// Err is the error that stopped Next, if any.
func (t *TraceReader) Err() error { return t.err }

// Nodes is the node table, available once Next has returned false on a
// complete trace.
func (t *TraceReader) Nodes() []TraceNode { return t.nodes }

// Complete reports whether the trace ended properly (the rank reached
// MPI_Finalize); valid once Next has returned false.
func (t *TraceReader) Complete() bool { return t.complete }

// FullTrace is a whole full trace in memory.
type FullTrace struct {
	Rank     int
	Nodes    []TraceNode
	Events   []TraceEvent
	Complete bool
}

// ReadFullTrace reads a whole full-trace file. Events that refer to nodes
// outside the node table are an error.
func ReadFullTrace(path string) (*FullTrace, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := NewTraceReader(path, f)
	if err != nil {
		return nil, err
	}
	ft := &FullTrace{Rank: t.Rank}
	for t.Next() {
		ft.Events = append(ft.Events, t.Event())
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	ft.Nodes, ft.Complete = t.Nodes(), t.Complete()
	if ft.Complete {
		for i, e := range ft.Events {
			if e.Node >= len(ft.Nodes) {
				return nil, fmt.Errorf("%s: %w: event %d refers to node %d of %d", path, ErrFormat, i, e.Node, len(ft.Nodes))
			}
		}
	}
	return ft, nil
}

// Graph builds the event flow graph of the trace with a Builder (with at
// most maxIntervals timing intervals, no limit if < 2, in the default
// timing budget), as the interposer would have recorded it: the same node
// and edge numbering, sequence runs, times and timing. Bytes,
// partners and communicator sizes are not in a full trace and stay zero.
func (ft *FullTrace) Graph(maxIntervals int) Graph {
	b := NewBuilder(0, maxIntervals)
	keys := map[int]NodeKey{}
	for _, e := range ft.Events {
		if _, ok := keys[e.Node]; !ok {
			// A trace cut short has no node table: number-only keys.
			n := TraceNode{Call: fmt.Sprintf("node%d", e.Node), Partner: -1, Comm: -1}
			if e.Node < len(ft.Nodes) {
				n = ft.Nodes[e.Node]
			}
			site := -1
			if n.Site != 0 {
				site = b.Site(CallSite{Addr: n.Site})
			}
			keys[e.Node] = NodeKey{Call: n.Call, Site: site, Bytes: n.Bytes, Partner: n.Partner, Comm: n.Comm}
		}
		b.Add(Call{Key: keys[e.Node], Enter: e.Enter, Exit: e.Exit, Partner: -1})
	}
	return b.Graph()
}
