package flowgraph

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// EventSource yields the events of one rank in order, with times in ns
// since the rank's first event. EventIter is one (the reconstruction);
// readers of the recorded full trace are another, so the same consumers
// (exporters, models) can take either.
type EventSource interface {
	// Next advances to the next event and reports whether there is one.
	Next() bool
	// Event returns the current event.
	Event() Event
	// Err returns the first error met, after Next has returned false.
	Err() error
}

var _ EventSource = (*EventIter)(nil)

// TracePath is where the interposer writes the full trace of a rank's
// thread: next to the job file, <job>.rank<N>.mftrace for thread 0, else
// <job>.rank<N>.thread<T>.mftrace.
func TracePath(jobFile string, rank, thread int) string {
	base := strings.TrimSuffix(jobFile, ".mpiflow")
	if thread == 0 {
		return fmt.Sprintf("%s.rank%d.mftrace", base, rank)
	}
	return fmt.Sprintf("%s.rank%d.thread%d.mftrace", base, rank, thread)
}

// TraceWriter writes a full trace in the interposer's format (see
// TraceReader), for generated ground truths and tests.
type TraceWriter struct {
	w        *bufio.Writer
	prevExit int64
	buf      [3 * binary.MaxVarintLen64]byte
	err      error
}

// NewTraceWriter writes the header of the full trace of rank to w.
func NewTraceWriter(w io.Writer, rank int) *TraceWriter {
	t := &TraceWriter{w: bufio.NewWriterSize(w, 1<<16)}
	var h [16]byte
	copy(h[:], traceMagic)
	binary.BigEndian.PutUint32(h[8:], traceVersion)
	binary.BigEndian.PutUint32(h[12:], uint32(rank))
	_, t.err = t.w.Write(h[:])
	return t
}

// Add writes one event; node is its index in the rank's graph, and events
// must come in order with Enter >= 0 and Exit >= Enter.
func (t *TraceWriter) Add(e TraceEvent) error {
	if t.err != nil {
		return t.err
	}
	if e.Node < 0 || e.Exit < e.Enter {
		t.err = fmt.Errorf("trace event of node %d from %d to %d ns: bad node or times", e.Node, e.Enter, e.Exit)
		return t.err
	}
	n := binary.PutUvarint(t.buf[:], uint64(e.Node)+1)
	n += binary.PutVarint(t.buf[n:], e.Enter-t.prevExit)
	n += binary.PutUvarint(t.buf[n:], uint64(e.Exit-e.Enter))
	t.prevExit = e.Exit
	_, t.err = t.w.Write(t.buf[:n])
	return t.err
}

// Close writes the node table, which makes the trace complete, and
// flushes; it does not close the underlying writer.
func (t *TraceWriter) Close(nodes []TraceNode) error {
	if t.err != nil {
		return t.err
	}
	put := func(b []byte) {
		if t.err == nil {
			_, t.err = t.w.Write(b)
		}
	}
	uv := func(v uint64) { put(binary.AppendUvarint(nil, v)) }
	uv(0)
	uv(uint64(len(nodes)))
	for _, nd := range nodes {
		uv(uint64(len(nd.Call)))
		put([]byte(nd.Call))
		uv(nd.Site)
		put(binary.AppendVarint(nil, nd.Bytes))
		uv(uint64(int64(nd.Partner + 1)))
		uv(uint64(int64(nd.Comm + 1)))
	}
	put([]byte(traceEnd))
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}
