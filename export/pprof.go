package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Sample types of the pprof export, in the order of a sample's values;
// the job's counters (flowgraph.Header.Counters) follow them, each a
// count.
const (
	PprofTime  = "time"  // nanoseconds
	PprofCalls = "calls" // MPI calls
	PprofBytes = "bytes" // bytes the calls moved
)

// Pprof returns the call tree t as a pprof profile (github.com/google/pprof,
// which go tool pprof, speedscope and Pyroscope read): one sample per rank
// (and thread) and tree node it has values on, its locations the node's
// path in the tree, leaf first, labelled "rank" and "thread". Sample types
// are time (ns), calls and bytes, then one per counter of the job; time is
// the default.
//
// A frame's function is named as the tree names the node (TreeNode.Name),
// but for MPI calls: their function is the call ("MPI_Send", the tree's
// name being its system name), and their file and line are the call
// site's, so that go tool pprof -top lists the MPI calls with the times
// of mpiflow stats, -lines the call sites. Loops carry their header's file
// and line.
func Pprof(t *CallTree) *profile.Profile {
	h := &t.Header
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: PprofTime, Unit: "nanoseconds"},
			{Type: PprofCalls, Unit: "count"},
			{Type: PprofBytes, Unit: "bytes"},
		},
		DefaultSampleType: PprofTime,
		PeriodType:        &profile.ValueType{Type: PprofTime, Unit: "nanoseconds"},
		Period:            1,
		TimeNanos:         h.StartUnixNano,
		DurationNanos:     h.Wallclock,
		Comments:          pprofComments(t),
	}
	for _, c := range h.Counters {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: c, Unit: "count"})
	}
	// One mapping that says the functions are known, so that pprof does
	// not look for the program to symbolize them.
	m := &profile.Mapping{ID: 1, File: t.Nodes[0].File, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	// One function per distinct name, file and system name, one
	// location per tree node.
	type fnKey struct{ name, system, file string }
	funcs := map[fnKey]*profile.Function{}
	locs := make([]*profile.Location, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		k := fnKey{n.Name, n.Name, n.File}
		if n.Kind == TreeCall {
			k.name = n.Call
		}
		f := funcs[k]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: k.name, SystemName: k.system, Filename: k.file}
			funcs[k] = f
			p.Function = append(p.Function, f)
		}
		locs[i] = &profile.Location{ID: uint64(i + 1), Mapping: m, Line: []profile.Line{{Function: f, Line: int64(n.Line)}}}
	}
	p.Location = locs
	nvals := 3 + len(h.Counters)
	for bi := range t.Blocks {
		b := &t.Blocks[bi]
		labels := map[string][]string{"rank": {strconv.Itoa(b.Rank)}, "thread": {strconv.Itoa(b.Thread)}}
		for _, v := range b.Values {
			kind := t.Nodes[v.Node].Kind
			if kind != TreeCall && kind != TreeCompute {
				continue // nothing of their own
			}
			vals := make([]int64, nvals)
			vals[0], vals[1], vals[2] = v.Time, v.Calls, v.Bytes
			copy(vals[3:], v.Counters)
			path := t.Path(v.Node)
			s := &profile.Sample{Location: make([]*profile.Location, len(path)), Value: vals, Label: labels}
			for k, n := range path {
				s.Location[k] = locs[n]
			}
			p.Sample = append(p.Sample, s)
		}
	}
	return p
}

// WritePprof writes the pprof profile of t (Pprof), gzipped as pprof
// writes its own.
func WritePprof(w io.Writer, t *CallTree) error {
	return Pprof(t).Write(w)
}

// pprofComments describes the job, for pprof -comments.
func pprofComments(t *CallTree) []string {
	h := &t.Header
	out := []string{"mpiflow profile of job " + h.JobID + ": " + strings.Join(h.Command, " ")}
	if h.Executable != "" {
		out = append(out, "executable: "+h.Executable)
	}
	out = append(out, fmt.Sprintf("ranks: %d, blocks: %d", h.NumRanks, len(t.Blocks)))
	if h.MPILibrary != "" {
		out = append(out, "mpi library: "+h.MPILibrary+" (MPI "+h.MPIVersion+")")
	}
	if h.StartUnixNano != 0 {
		out = append(out, "start: "+time.Unix(0, h.StartUnixNano).UTC().Format(time.RFC3339Nano))
	}
	out = append(out, "wallclock: "+time.Duration(h.Wallclock).String())
	if h.Incomplete {
		out = append(out, "incomplete run: some ranks did not reach MPI_Finalize")
	}
	return out
}
