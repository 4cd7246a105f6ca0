package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"mpiflow/flowgraph"
)

// Chrome writes the reconstructed MPI calls of the selected ranks of f as
// Chrome trace event JSON, which Perfetto and chrome://tracing open: one
// process per rank (pid = world rank, tid = thread) named by a
// process_name metadata event, and one complete event ("ph": "X") per MPI
// call with ts and dur in µs. Compute phases are the gaps between calls.
//
// Ranks are written one after the other, so memory holds one rank's graph;
// the format does not need events in global time order.
func Chrome(w io.Writer, f *flowgraph.File, opt Options) (Stats, error) {
	cw := &chromeWriter{bw: bufio.NewWriterSize(w, 1<<16), first: true, named: map[int]bool{}}
	bw := cw.bw
	names := ResourceNames(f)
	meta, _ := json.Marshal(map[string]any{"job": f.Header.JobID, "command": f.Header.Command,
		"start_unix_ns": f.Header.StartUnixNano, "mpi_library": f.Header.MPILibrary})
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":`)
	bw.Write(meta)
	bw.WriteString(",\"traceEvents\":[\n")
	total := int64(len(f.Index))
	for i, e := range f.Index {
		if opt.Progress != nil {
			opt.Progress(int64(i)*progressUnit, total*progressUnit)
		}
		if opt.Ranks != nil && !opt.Ranks[e.Rank] {
			continue
		}
		r, err := f.ReadRank(i)
		if err != nil {
			return cw.st, err
		}
		cw.st.Ranks++
		if err := cw.writeRank(f, i, r, names[i], opt); err != nil {
			return cw.st, err
		}
	}
	if cw.st.Ranks == 0 {
		return cw.st, fmt.Errorf("%s: no rank selected", f.Path)
	}
	if opt.Progress != nil {
		opt.Progress(total*progressUnit, total*progressUnit)
	}
	bw.WriteString("\n]}\n")
	return cw.st, bw.Flush()
}

// chromeWriter is the state of Chrome: the output, whether an event was
// written yet, the processes named and the counts.
type chromeWriter struct {
	bw    *bufio.Writer
	first bool
	named map[int]bool
	buf   []byte
	st    Stats
}

// sep separates an event from the one before.
func (cw *chromeWriter) sep() {
	if !cw.first {
		cw.bw.WriteString(",\n")
	}
	cw.first = false
}

// writeRank writes the metadata and the events of rank r, block i of f,
// named name.
func (cw *chromeWriter) writeRank(f *flowgraph.File, i int, r *flowgraph.Rank, name string, opt Options) error {
	bw := cw.bw
	pid := strconv.Itoa(r.Rank)
	tid := strconv.Itoa(r.Thread)
	if !cw.named[r.Rank] {
		cw.named[r.Rank] = true
		label := "rank " + pid
		if r.Host != "" {
			label += " (" + r.Host + ")"
		}
		cw.sep()
		fmt.Fprintf(bw, `{"name":"process_name","ph":"M","pid":%s,"tid":%s,"args":{"name":%s}}`, pid, tid, jsonString(label))
		cw.sep()
		fmt.Fprintf(bw, `{"name":"process_sort_index","ph":"M","pid":%s,"tid":%s,"args":{"sort_index":%s}}`, pid, tid, pid)
	}
	cw.sep()
	fmt.Fprintf(bw, `{"name":"thread_name","ph":"M","pid":%s,"tid":%s,"args":{"name":%s}}`, pid, tid, jsonString(name))
	heads, tails := chromeNodes(&r.Graph, pid, tid)
	s, err := NewRankEvents(r, opt)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		sp, ok, err := s.Next()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if !ok {
			return nil
		}
		rankProgress(opt, i, len(f.Index), r, sp.Index)
		cw.sep()
		buf := append(cw.buf[:0], heads[sp.Node]...)
		buf = appendMicros(buf, sp.Start)
		buf = append(buf, `,"dur":`...)
		buf = appendMicros(buf, sp.End-sp.Start)
		buf = append(buf, tails[sp.Node]...)
		cw.buf = buf
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		cw.st.Events++
	}
}

// chromeNodes formats everything per node of g once, the part of an
// event before its time and the part after its duration: the events
// only append numbers.
func chromeNodes(g *flowgraph.Graph, pid, tid string) (heads, tails []string) {
	heads = make([]string, len(g.Nodes))
	tails = make([]string, len(g.Nodes))
	for k := range g.Nodes {
		n := &g.Nodes[k]
		heads[k] = `{"name":` + jsonString(n.Key.Call) + `,"cat":"MPI","ph":"X","pid":` + pid + `,"tid":` + tid + `,"ts":`
		args := `,"args":{"bytes":` + strconv.FormatInt(MeanBytes(n), 10)
		if n.Key.Site >= 0 {
			args += `,"site":` + jsonString(g.Sites[n.Key.Site].Label())
		}
		if p, ok := Partner(n); ok {
			args += `,"partner":` + strconv.Itoa(p)
		}
		tails[k] = args + "}}"
	}
	return heads, tails
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// MeanBytes is the node's key bytes when bytes are part of the key, else
// the mean bytes per call (an approximation for nodes that merge calls of
// different sizes).
func MeanBytes(n *flowgraph.Node) int64 {
	if n.Key.Bytes > 0 {
		return n.Key.Bytes
	}
	if n.Count == 0 {
		return 0
	}
	return n.Bytes.Total / n.Count
}

// Partner is the node's key partner when partners are part of the key,
// else its only partner if it has exactly one; ok is false when the graph
// does not know a single partner.
func Partner(n *flowgraph.Node) (int, bool) {
	if n.Key.Partner >= 0 {
		return n.Key.Partner, true
	}
	if len(n.Partners) == 1 && n.OtherPartners == 0 {
		return n.Partners[0].Rank, true
	}
	return 0, false
}

// appendMicros appends ns as µs with three decimals, exactly.
func appendMicros(b []byte, ns int64) []byte {
	return appendFixed(b, ns, 1000, 3)
}

// appendSeconds appends ns as seconds with nine decimals, exactly.
func appendSeconds(b []byte, ns int64) []byte {
	return appendFixed(b, ns, 1_000_000_000, 9)
}

// appendFixed appends v/unit as a decimal with digits decimals, where
// unit = 10^digits, without going through floats.
func appendFixed(b []byte, v, unit int64, digits int) []byte {
	if v < 0 {
		b = append(b, '-')
		// -MinInt64 overflows; a time that far out is corrupt anyway.
		v = -v
	}
	b = strconv.AppendInt(b, v/unit, 10)
	b = append(b, '.')
	frac := v % unit
	for d := unit / 10; d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}
