package analysis

import (
	"cmp"
	"slices"
	"strings"

	"mpiflow/flowgraph"
	"mpiflow/mpicall"
)

// Message directions of point-to-point calls.
const (
	dirSend = iota
	dirRecv
)

// maxMsgEnds bounds the ends recorded per rank, direction and partner.
const maxMsgEnds = 20_000

// completes tells whether call is a blocking wait (MPI_Wait, _Waitall,
// _Waitany, _Waitsome, large-count forms alike): where a nonblocking
// receive posted before it completes at the latest. (A test may complete
// nothing, so tests are not taken.)
func completes(call string) bool {
	switch strings.TrimSuffix(call, "_c") {
	case "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome":
		return true
	}
	return false
}

// p2pDir is the direction of a point-to-point call that names one
// partner, -1 for other calls (MPI_Sendrecv has two partners).
func p2pDir(call string) int {
	switch mpicall.Direction(call) {
	case mpicall.DirSend:
		return dirSend
	case mpicall.DirRecv:
		return dirRecv
	}
	return -1
}

// nodePartner is the partner of every call of node n: the partner in the
// node key, or the only one recorded; -1 if there are several.
func nodePartner(n *flowgraph.Node) int {
	if n.Key.Partner >= 0 {
		return n.Key.Partner
	}
	if len(n.Partners) == 1 && n.OtherPartners == 0 {
		return n.Partners[0].Rank
	}
	return -1
}

// MessageEnds records the ends of a rank's point-to-point messages as its
// events are walked in order (Event): per direction and partner, the times
// of the first maxMsgEnds sends (start) or receives (end). Messages are
// recorded between threads 0 only. A partner some of whose messages went
// through a call site with several partners is ambiguous: its k-th message
// cannot be told.
type MessageEnds struct {
	rank int
	// Per node: its direction (-1: none), partner, whether it is a
	// receive that is only posted, and whether it is a blocking wait.
	dir, partner       []int
	nonblocking, waits []bool
	ends               [2]map[int][]int64
	ambiguous          [2]map[int]bool
	// posted are the ends of nonblocking receives (partner, index) whose
	// message is taken to arrive at the end of the next blocking wait.
	posted []postedRecv
}

type postedRecv struct{ partner, k int }

// NewMessageEnds classifies the nodes of rank r for recording its
// messages' ends.
func NewMessageEnds(r *flowgraph.Rank) *MessageEnds {
	g := &r.Graph
	m := &MessageEnds{rank: r.Rank, dir: make([]int, len(g.Nodes)), partner: make([]int, len(g.Nodes)),
		nonblocking: make([]bool, len(g.Nodes)), waits: make([]bool, len(g.Nodes))}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		m.dir[i], m.partner[i] = p2pDir(n.Key.Call), nodePartner(n)
		m.nonblocking[i] = n.Key.Call == "MPI_Irecv" || n.Key.Call == "MPI_Imrecv"
		m.waits[i] = completes(n.Key.Call)
		if r.Thread != 0 {
			m.dir[i] = -1 // messages are drawn between threads 0
		}
		if d := m.dir[i]; d >= 0 && m.partner[i] < 0 {
			for _, pc := range n.Partners {
				if m.ambiguous[d] == nil {
					m.ambiguous[d] = map[int]bool{}
				}
				m.ambiguous[d][pc.Rank] = true
			}
			m.dir[i] = -1
		}
	}
	return m
}

// Event records the event of node from start to end, in the caller's
// time unit.
func (m *MessageEnds) Event(node int, start, end int64) {
	if m.waits[node] {
		for _, p := range m.posted {
			m.ends[dirRecv][p.partner][p.k] = end
		}
		m.posted = m.posted[:0]
	}
	d := m.dir[node]
	if d < 0 {
		return
	}
	if m.ends[d] == nil {
		m.ends[d] = map[int][]int64{}
	}
	p := m.partner[node]
	if e := m.ends[d][p]; len(e) < maxMsgEnds {
		at := start
		if d == dirRecv {
			at = end
		}
		if m.nonblocking[node] {
			m.posted = append(m.posted, postedRecv{p, len(e)})
		}
		m.ends[d][p] = append(e, at)
	}
}

// Takes tells whether the events of node may end a message or complete
// posted receives: they must then be passed to Event one by one.
func (m *MessageEnds) Takes(node int) bool { return m.waits[node] || m.dir[node] >= 0 }

// Pending tells whether an event of node now would record a message end
// or complete posted receives.
func (m *MessageEnds) Pending(node int) bool {
	d := m.dir[node]
	return d >= 0 && len(m.ends[d][m.partner[node]]) < maxMsgEnds || m.waits[node] && len(m.posted) > 0
}

// Message is a point-to-point message between two ranks of a PairMessages
// list (indices Src, Dst): its send's start and its receive's end.
type Message struct{ Src, Send, Dst, Recv int64 }

// MessagePairs are the messages PairMessages could pair, by send start,
// and what it left out.
type MessagePairs struct {
	Msgs []Message
	// Ambiguous is true when some messages went through call sites with
	// several partners (or their counts differ between the ends).
	Ambiguous bool
	// Backwards counts the pairs whose receive ended before the send
	// started.
	Backwards int
}

// PairMessages joins the k-th send from rank a to rank b with the k-th
// receive of b from a (MPI's order for one communicator and tag) for the
// ranks of list (the first entry of a rank stands for it) whose ends are
// all known; pairs whose receive ends before the send starts are
// impossible, left out and counted.
func PairMessages(list []*MessageEnds) MessagePairs {
	row := map[int]int{}
	for i, m := range list {
		if _, ok := row[m.rank]; !ok {
			row[m.rank] = i
		}
	}
	var out MessagePairs
	for a, ra := range row {
		ma := list[ra]
		for b, sends := range ma.ends[dirSend] {
			rb, ok := row[b]
			if !ok {
				continue
			}
			recvs := list[rb].ends[dirRecv][a]
			if ma.ambiguous[dirSend][b] || list[rb].ambiguous[dirRecv][a] || len(recvs) != len(sends) {
				out.Ambiguous = true
				continue
			}
			for k := range sends {
				if recvs[k] < sends[k] {
					// The k-th receive ended before the k-th send
					// started: tags or receives of another kind
					// (MPI_Sendrecv) order them otherwise.
					out.Backwards++
					continue
				}
				out.Msgs = append(out.Msgs, Message{int64(ra), sends[k], int64(rb), recvs[k]})
			}
		}
	}
	for _, m := range list {
		if len(m.ambiguous[dirSend])+len(m.ambiguous[dirRecv]) > 0 {
			out.Ambiguous = true
		}
	}
	// The whole message is the key: the pairs come in map order.
	slices.SortFunc(out.Msgs, func(x, y Message) int {
		return cmp.Or(cmp.Compare(x.Send, y.Send), cmp.Compare(x.Src, y.Src), cmp.Compare(x.Dst, y.Dst), cmp.Compare(x.Recv, y.Recv))
	})
	return out
}
