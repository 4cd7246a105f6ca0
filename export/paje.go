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
	"mpiflow/internal/paje"
)

// PajeComputeState is the state value of a rank between two MPI calls.
const PajeComputeState = "Compute"

// The ids of the Pajé events Paje writes.
const (
	pajeDefineContainerType = "0"
	pajeDefineStateType     = "1"
	pajeDefineEntityValue   = "2"
	pajeCreateContainer     = "3"
	pajeDestroyContainer    = "4"
	pajeSetState            = "5"
)

// pajeHeader defines the Pajé events Paje writes, with the field names
// PajeNG expects. Times are seconds since the job start.
func pajeHeader() string {
	return paje.Header([]paje.Def{
		{ID: pajeDefineContainerType, Name: "PajeDefineContainerType"},
		{ID: pajeDefineStateType, Name: "PajeDefineStateType"},
		{ID: pajeDefineEntityValue, Name: "PajeDefineEntityValue"},
		{ID: pajeCreateContainer, Name: "PajeCreateContainer"},
		{ID: pajeDestroyContainer, Name: "PajeDestroyContainer"},
		{ID: pajeSetState, Name: "PajeSetState"},
	})
}

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
	pw := &pajeWriter{bw: bufio.NewWriterSize(w, 1<<16), hostAlias: map[string]string{}}
	bw := pw.bw
	fmt.Fprintf(bw, "# mpiflow Paje trace of job %s: %s\n", pajeComment(f.Header.JobID), pajeComment(strings.Join(f.Header.Command, " ")))
	bw.WriteString(pajeHeader())
	bw.WriteString(pajeDefineContainerType + " CT_Job 0 Job\n" +
		pajeDefineContainerType + " CT_Host CT_Job Host\n" +
		pajeDefineContainerType + " CT_Rank CT_Host Rank\n" +
		pajeDefineStateType + " ST_MPI CT_Rank MPI\n")
	alias := pw.values(ranks)
	streams, total, err := pw.containers(f, ranks, alias, opt)
	for _, rs := range streams {
		if rs != nil {
			defer rs.s.Close()
		}
	}
	if err != nil {
		return st, err
	}
	st.Ranks = len(ranks)

	var last int64
	err = merge(streams, func(rs *recordStream, rec record) error {
		if rec.kind == recCall {
			st.Events++
			if opt.Progress != nil && st.Events%(1<<16) == 0 {
				opt.Progress(st.Events, total)
			}
		}
		last = max(last, rec.t)
		return pw.record(rs, rec)
	})
	if err != nil {
		return st, fmt.Errorf("%s: %w", f.Path, err)
	}
	pw.destroyAll(streams, last)
	if opt.Progress != nil {
		opt.Progress(total, total)
	}
	return st, bw.Flush()
}

// pajeWriter is the state of Paje: the output, the aliases of the hosts
// and ranks, and the value alias of every rank's nodes.
type pajeWriter struct {
	bw        *bufio.Writer
	hostAlias map[string]string
	hosts     []string   // in order of creation
	rankAlias []string   // per selected rank
	nodeValue [][]string // per selected rank and node, its value's alias
	buf       []byte
}

// values defines one entity value per call name over all ranks and
// returns their aliases; value aliases are short, so the per-event lines
// are too.
func (pw *pajeWriter) values(ranks []*flowgraph.Rank) map[string]string {
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
		fmt.Fprintf(pw.bw, "%s %s ST_MPI %s \"%s\"\n", pajeDefineEntityValue, alias[c], pajeString(c), pajeColor(c))
	}
	return alias
}

// containers creates the containers, all at time 0, and returns the
// record stream of every rank and their events in all. On an error, the
// streams opened so far are returned for the caller to close.
func (pw *pajeWriter) containers(f *flowgraph.File, ranks []*flowgraph.Rank, alias map[string]string, opt Options) ([]*recordStream, int64, error) {
	bw := pw.bw
	names := ResourceNames(f)
	blockName := map[[2]int]string{}
	for i, e := range f.Index {
		blockName[[2]int{e.Rank, e.Thread}] = names[i]
	}
	job := f.Header.JobID
	if job == "" {
		job = "job"
	}
	fmt.Fprintf(bw, "%s 0.000000000 job CT_Job 0 %s\n", pajeCreateContainer, pajeString(job))
	streams := make([]*recordStream, len(ranks))
	pw.rankAlias = make([]string, len(ranks))
	pw.nodeValue = make([][]string, len(ranks))
	var total int64
	for i, r := range ranks {
		host := r.Host
		if h := f.Header.Hosts; host == "" && r.Rank < len(h) {
			host = h[r.Rank]
		}
		if host == "" {
			host = "unknown host"
		}
		ha, ok := pw.hostAlias[host]
		if !ok {
			ha = "h" + strconv.Itoa(len(pw.hosts))
			pw.hostAlias[host] = ha
			pw.hosts = append(pw.hosts, host)
			fmt.Fprintf(bw, "%s 0.000000000 %s CT_Host job %s\n", pajeCreateContainer, ha, pajeString(host))
		}
		pw.rankAlias[i] = "r" + strconv.Itoa(i)
		fmt.Fprintf(bw, "%s 0.000000000 %s CT_Rank %s %s\n", pajeCreateContainer, pw.rankAlias[i], ha, pajeString(blockName[[2]int{r.Rank, r.Thread}]))
		pw.nodeValue[i] = make([]string, len(r.Graph.Nodes))
		for k, n := range r.Graph.Nodes {
			pw.nodeValue[i][k] = alias[n.Key.Call]
		}
		re, err := NewRankEvents(r, opt)
		if err != nil {
			return streams, total, err
		}
		streams[i] = &recordStream{s: re, id: i}
		total += r.Graph.NumEvents
	}
	return streams, total, nil
}

// record writes the line of one record of stream rs.
func (pw *pajeWriter) record(rs *recordStream, rec record) error {
	buf := pw.buf[:0]
	switch rec.kind {
	case recCall, recCompute:
		buf = append(buf, pajeSetState+" "...)
		buf = appendSeconds(buf, rec.t)
		buf = append(buf, " ST_MPI "...)
		buf = append(buf, pw.rankAlias[rs.id]...)
		if rec.kind == recCall {
			buf = append(buf, ' ')
			buf = append(buf, pw.nodeValue[rs.id][rec.node]...)
		} else {
			buf = append(buf, " v0"...) // Compute
		}
	case recEnd:
		buf = append(buf, pajeDestroyContainer+" "...)
		buf = appendSeconds(buf, rec.t)
		buf = append(buf, " CT_Rank "...)
		buf = append(buf, pw.rankAlias[rs.id]...)
	}
	buf = append(buf, '\n')
	pw.buf = buf
	_, err := pw.bw.Write(buf)
	return err
}

// destroyAll destroys at time last the ranks without any event in the
// window, the hosts and the job.
func (pw *pajeWriter) destroyAll(streams []*recordStream, last int64) {
	end := appendSeconds(nil, last)
	for i, rs := range streams {
		if !rs.ended {
			fmt.Fprintf(pw.bw, "%s %s CT_Rank %s\n", pajeDestroyContainer, end, pw.rankAlias[i])
		}
	}
	for _, h := range pw.hosts {
		fmt.Fprintf(pw.bw, "%s %s CT_Host %s\n", pajeDestroyContainer, end, pw.hostAlias[h])
	}
	fmt.Fprintf(pw.bw, "%s %s CT_Job job\n", pajeDestroyContainer, end)
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
