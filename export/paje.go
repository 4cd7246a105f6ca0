package export

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mpiflow/flowgraph"
)

// PajeComputeState is the state value of a rank between two MPI calls.
const PajeComputeState = "Compute"

// pajeHeader defines the Pajé events Paje writes, with the field names
// PajeNG expects. Times are seconds since the job start.
const pajeHeader = `%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineStateType 1
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineEntityValue 2
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeCreateContainer 3
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeDestroyContainer 4
%       Time date
%       Type string
%       Name string
%EndEventDef
%EventDef PajeSetState 5
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
`

// Paje writes the reconstructed trace of the selected ranks of f as a Pajé
// trace (read by PajeNG, ViTE, Framesoc/Ocelotl): containers job -> host
// -> rank, one state type "MPI" with one value per MPI call and Compute,
// and a PajeSetState at the start of every call and of every compute phase
// between calls. A rank container is destroyed when its last call ends,
// which ends its last state.
//
// Pajé needs non-decreasing times across the whole file, so the ranks'
// event iterators are merged with a heap: memory holds every selected
// rank's graph and one pending record per rank, never the events.
func Paje(w io.Writer, f *flowgraph.File, opt Options) (Stats, error) {
	var st Stats
	ranks, err := selected(f, opt)
	if err != nil {
		return st, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "# mpiflow Paje trace of job %s: %s\n", pajeComment(f.Header.JobID), pajeComment(strings.Join(f.Header.Command, " ")))
	bw.WriteString(pajeHeader)
	bw.WriteString("0 CT_Job 0 Job\n0 CT_Host CT_Job Host\n0 CT_Rank CT_Host Rank\n1 ST_MPI CT_Rank MPI\n")

	// One entity value per call name over all ranks; value aliases are
	// short, so the per-event lines are too.
	callSet := map[string]bool{}
	for _, r := range ranks {
		for _, n := range r.Graph.Nodes {
			callSet[n.Key.Call] = true
		}
	}
	delete(callSet, PajeComputeState)
	calls := []string{PajeComputeState}
	for c := range callSet {
		calls = append(calls, c)
	}
	slices.Sort(calls[1:])
	alias := map[string]string{}
	for i, c := range calls {
		alias[c] = "v" + strconv.Itoa(i)
		fmt.Fprintf(bw, "2 %s ST_MPI %s \"%s\"\n", alias[c], pajeString(c), pajeColor(c))
	}

	// Containers, all created at time 0.
	names := ResourceNames(f)
	blockName := map[[2]int]string{}
	for i, e := range f.Index {
		blockName[[2]int{e.Rank, e.Thread}] = names[i]
	}
	job := f.Header.JobID
	if job == "" {
		job = "job"
	}
	fmt.Fprintf(bw, "3 0.000000000 job CT_Job 0 %s\n", pajeString(job))
	hostAlias := map[string]string{}
	var hosts []string
	streams := make([]*recordStream, len(ranks))
	rankAlias := make([]string, len(ranks))
	nodeValue := make([][]string, len(ranks))
	var total int64
	for i, r := range ranks {
		host := r.Host
		if h := f.Header.Hosts; host == "" && r.Rank < len(h) {
			host = h[r.Rank]
		}
		if host == "" {
			host = "unknown host"
		}
		ha, ok := hostAlias[host]
		if !ok {
			ha = "h" + strconv.Itoa(len(hosts))
			hostAlias[host] = ha
			hosts = append(hosts, host)
			fmt.Fprintf(bw, "3 0.000000000 %s CT_Host job %s\n", ha, pajeString(host))
		}
		rankAlias[i] = "r" + strconv.Itoa(i)
		fmt.Fprintf(bw, "3 0.000000000 %s CT_Rank %s %s\n", rankAlias[i], ha, pajeString(blockName[[2]int{r.Rank, r.Thread}]))
		nodeValue[i] = make([]string, len(r.Graph.Nodes))
		for k, n := range r.Graph.Nodes {
			nodeValue[i][k] = alias[n.Key.Call]
		}
		re, err := NewRankEvents(r, opt)
		if err != nil {
			return st, err
		}
		defer re.Close()
		streams[i] = &recordStream{s: re, id: i}
		total += r.Graph.NumEvents
	}
	st.Ranks = len(ranks)

	var buf []byte
	var last int64
	err = merge(streams, func(rs *recordStream, rec record) error {
		buf = buf[:0]
		switch rec.kind {
		case recCall:
			buf = append(buf, "5 "...)
			buf = appendSeconds(buf, rec.t)
			buf = append(buf, " ST_MPI "...)
			buf = append(buf, rankAlias[rs.id]...)
			buf = append(buf, ' ')
			buf = append(buf, nodeValue[rs.id][rec.node]...)
			st.Events++
			if opt.Progress != nil && st.Events%(1<<16) == 0 {
				opt.Progress(st.Events, total)
			}
		case recCompute:
			buf = append(buf, "5 "...)
			buf = appendSeconds(buf, rec.t)
			buf = append(buf, " ST_MPI "...)
			buf = append(buf, rankAlias[rs.id]...)
			buf = append(buf, " v0"...)
		case recEnd:
			buf = append(buf, "4 "...)
			buf = appendSeconds(buf, rec.t)
			buf = append(buf, " CT_Rank "...)
			buf = append(buf, rankAlias[rs.id]...)
		}
		buf = append(buf, '\n')
		last = max(last, rec.t)
		_, err := bw.Write(buf)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("%s: %w", f.Path, err)
	}
	// Ranks without any event in the window are destroyed at the end.
	end := appendSeconds(nil, last)
	for i, rs := range streams {
		if !rs.ended {
			fmt.Fprintf(bw, "4 %s CT_Rank %s\n", end, rankAlias[i])
		}
	}
	for _, h := range hosts {
		fmt.Fprintf(bw, "4 %s CT_Host %s\n", end, hostAlias[h])
	}
	fmt.Fprintf(bw, "4 %s CT_Job job\n", end)
	if opt.Progress != nil {
		opt.Progress(total, total)
	}
	return st, bw.Flush()
}

// pajeString quotes s when it holds blanks; Pajé has no escapes, so
// double quotes and line breaks become single quotes and blanks, and
// other characters as in pajeComment.
func pajeString(s string) string {
	s = pajeComment(strings.ReplaceAll(s, `"`, "'"))
	if s == "" || strings.ContainsAny(s, " \t#") {
		return `"` + s + `"`
	}
	return s
}

// pajeComment makes s one line of ASCII: PajeNG's flex reader (pj_dump
// -f) stops at the first byte past ASCII, without an error, so other
// characters are written as Go escapes (\u00e9, \x80 for a byte that is
// not UTF-8), line breaks as blanks.
func pajeComment(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}

// pajeColor gives Compute a grey and every call a stable color derived
// from its name.
func pajeColor(call string) string {
	if call == PajeComputeState {
		return "0.75 0.75 0.75"
	}
	h := fnv.New32a()
	h.Write([]byte(call))
	v := h.Sum32()
	c := func(shift uint) string {
		return strconv.FormatFloat(0.2+0.8*float64((v>>shift)&0xff)/255, 'f', 2, 64)
	}
	return c(0) + " " + c(8) + " " + c(16)
}
