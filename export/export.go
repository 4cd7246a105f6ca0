// Package export writes reconstructed event traces in formats that other
// tools read.
package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"mpiflow/flowgraph"
)

// CSVHeader is the first line written by CSV.
const CSVHeader = "rank,thread,index,call,site,start_ns,end_ns,duration_ns,compute_before_ns,bytes_mean\n"

// CSV writes the events of r, one a line, after CSVHeader when header is
// set. Times are ns since the job start. It streams: memory does not grow
// with the number of events.
func CSV(w io.Writer, r *flowgraph.Rank, header bool) error {
	return CSVWindow(w, r, header, Options{})
}

// CSVWindow is CSV restricted to the events that overlap the window of
// opt, from opt.Events or the reconstruction (opt.Ranks and opt.Progress
// are not looked at). compute_before_ns is still the gap to the previous
// event, even when that event is outside the window.
func CSVWindow(w io.Writer, r *flowgraph.Rank, header bool, opt Options) error {
	it, err := openEvents(r, opt)
	if err != nil {
		return err
	}
	defer closeEvents(it)
	from, to := opt.From, opt.To
	bw := bufio.NewWriterSize(w, 1<<16)
	if header {
		bw.WriteString(CSVHeader)
	}
	g := &r.Graph
	sites := make([]string, len(g.Sites))
	for i := range g.Sites {
		sites[i] = csvField(g.Sites[i].Label())
	}
	calls := make([]string, len(g.Nodes))
	bytesMean := make([]int64, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		calls[i] = csvField(n.Key.Call)
		if n.Count > 0 {
			bytesMean[i] = n.Bytes.Total / n.Count
		}
	}
	prefix := strconv.Itoa(r.Rank) + "," + strconv.Itoa(r.Thread) + ","
	var buf []byte
	var prevEnd int64
	for it.Next() {
		ev := it.Event()
		n := &g.Nodes[ev.Node]
		site := ""
		if n.Key.Site >= 0 {
			site = sites[n.Key.Site]
		}
		gap := int64(0)
		if ev.Index > 0 {
			gap = ev.Start - prevEnd
		}
		prevEnd = ev.End
		if s, e := r.Start+ev.Start, r.Start+ev.End; to > 0 && s >= to {
			break
		} else if e < from || (e == from && s < from) {
			continue
		}
		buf = append(buf[:0], prefix...)
		buf = strconv.AppendInt(buf, ev.Index, 10)
		buf = append(buf, ',')
		buf = append(buf, calls[ev.Node]...)
		buf = append(buf, ',')
		buf = append(buf, site...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Start+ev.Start, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Start+ev.End, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, ev.End-ev.Start, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, gap, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, bytesMean[ev.Node], 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r.Rank, err)
	}
	return bw.Flush()
}

// csvField quotes s when it holds a separator, quote or newline (RFC 4180).
func csvField(s string) string {
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}
