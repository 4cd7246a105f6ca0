package export

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Columns of the Caliper export's rows, as Caliper names them (Hatchet's
// reader renames mpi.rank to rank and the times to "time" and "time
// (inc)"); the job's counters (flowgraph.Header.Counters) follow, by their
// names.
const (
	CaliperPath          = "path"
	CaliperRank          = "mpi.rank"
	CaliperTime          = "sum#time.duration"           // exclusive, s
	CaliperTimeInclusive = "inclusive#sum#time.duration" // s
	CaliperCalls         = "calls"
	CaliperBytes         = "bytes"
)

// Caliper writes the call tree t as Caliper's json-split profile, which
// LLNL's Hatchet (GraphFrame.from_caliper_json) and Thicket read: "nodes"
// is the tree, each node a {"label", "column": "path", "parent"} (no
// parent for the root), parents before their children; "data" holds one
// row per rank and node the rank has: the node's index, the rank, its
// exclusive and inclusive time in seconds, calls, bytes and the counters
// (on compute nodes), described by "columns" and "column_metadata" (only
// the path is not a value). A rank's threads add up into its rows, as
// Hatchet indexes rows by node and rank. The job's description (CaliperMeta)
// is in further top-level keys, which Hatchet and Thicket take as the run's
// metadata.
func Caliper(w io.Writer, t *CallTree) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	cols := []string{CaliperPath, CaliperRank, CaliperTime, CaliperTimeInclusive, CaliperCalls, CaliperBytes}
	cols = append(cols, t.Header.Counters...)
	meta := make([]map[string]bool, len(cols))
	for i := range meta {
		meta[i] = map[string]bool{"is_value": i != 0}
	}
	bw.WriteString("{\n\"data\": [")
	var buf []byte
	first := true
	for _, b := range caliperRanks(t) {
		inc := t.Inclusive(&b)
		for i, v := range b.Values {
			buf = buf[:0]
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, "\n["...)
			buf = strconv.AppendInt(buf, int64(v.Node), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(b.Rank), 10)
			buf = append(buf, ',')
			buf = appendSeconds(buf, v.Time)
			buf = append(buf, ',')
			buf = appendSeconds(buf, inc[i])
			for _, x := range append([]int64{v.Calls, v.Bytes}, counters(v.Counters, len(t.Header.Counters))...) {
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, x, 10)
			}
			buf = append(buf, ']')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n],\n\"columns\": ")
	writeJSONValue(bw, cols)
	bw.WriteString(",\n\"column_metadata\": ")
	writeJSONValue(bw, meta)
	bw.WriteString(",\n\"nodes\": [")
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n{\"label\":")
		bw.WriteString(jsonString(n.Name))
		bw.WriteString(",\"column\":\"path\"")
		if n.Parent >= 0 {
			bw.WriteString(",\"parent\":")
			bw.WriteString(strconv.Itoa(n.Parent))
		}
		bw.WriteByte('}')
	}
	bw.WriteString("\n]")
	m := CaliperMeta(t)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		bw.WriteString(",\n")
		bw.WriteString(jsonString(k))
		bw.WriteString(": ")
		writeJSONValue(bw, m[k])
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// CaliperMeta is the job's description that the Caliper export gives as
// top-level keys (run metadata for Hatchet and Thicket), each a string,
// number or boolean so that Thicket's metadata table has one column per
// key: command, executable, ranks, mpi_library, mpi_version, job_id,
// start_time (RFC 3339, UTC), launchdate (Unix seconds, as Adiak gives
// it), wallclock (s), hosts (distinct), counters (comma-separated),
// incomplete, and the profiler.
func CaliperMeta(t *CallTree) map[string]any {
	h := &t.Header
	m := map[string]any{
		"profiler":    "mpiflow",
		"command":     strings.Join(h.Command, " "),
		"executable":  h.Executable,
		"ranks":       h.NumRanks,
		"mpi_library": h.MPILibrary,
		"mpi_version": h.MPIVersion,
		"job_id":      h.JobID,
		"wallclock":   float64(h.Wallclock) / 1e9,
		"hosts":       len(h.DistinctHosts()),
		"counters":    strings.Join(h.Counters, ","),
		"incomplete":  h.Incomplete,
	}
	if h.StartUnixNano != 0 {
		st := time.Unix(0, h.StartUnixNano).UTC()
		m["start_time"] = st.Format(time.RFC3339Nano)
		m["launchdate"] = st.Unix()
	}
	return m
}

// caliperRanks returns the blocks of t with the threads of each rank
// added up, in the order of their first block.
func caliperRanks(t *CallTree) []TreeBlock {
	var out []TreeBlock
	at := map[int]int{}
	for _, b := range t.Blocks {
		k, ok := at[b.Rank]
		if !ok {
			at[b.Rank] = len(out)
			out = append(out, TreeBlock{Rank: b.Rank, Values: b.Values})
			continue
		}
		out[k].Values = addValues(out[k].Values, b.Values)
	}
	return out
}

// addValues merges two lists of values by ascending node into a new one,
// adding those of the same node.
func addValues(a, b []TreeValue) []TreeValue {
	out := make([]TreeValue, 0, max(len(a), len(b)))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Node < b[j].Node:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Node < a[i].Node:
			out = append(out, b[j])
			j++
		default:
			v := a[i]
			v.Time += b[j].Time
			v.Calls += b[j].Calls
			v.Bytes += b[j].Bytes
			if len(b[j].Counters) > 0 {
				ctr := make([]int64, max(len(v.Counters), len(b[j].Counters)))
				copy(ctr, v.Counters)
				for k, x := range b[j].Counters {
					ctr[k] += x
				}
				v.Counters = ctr
			}
			out = append(out, v)
			i++
			j++
		}
	}
	return out
}

// counters returns c with n values (zeros where c has none).
func counters(c []int64, n int) []int64 {
	if len(c) == n {
		return c
	}
	out := make([]int64, n)
	copy(out, c)
	return out
}

func writeJSONValue(w *bufio.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(b)
}
