package analysis

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"

	"mpiflow/flowgraph"
	"mpiflow/mpicall"
)

// CallRow is one row of the call table of `mpiflow stats` and of the
// report: a call's statistics over the selected ranks with its mean and
// its shares of the MPI and wall time after MPI_Init.
type CallRow struct {
	flowgraph.CallStat
	// Avg is the mean time of one call in ns (integer division, as the
	// table prints it).
	Avg int64
	// MPIPct and WallPct are the call's time in % of the summed MPI
	// time and of the summed wall time of the ranks; zero for MPI_Init.
	MPIPct, WallPct float64
	// StartUp marks MPI_Init and MPI_Init_thread, whose time is outside
	// the measured span (as in IPM) and so outside the shares.
	StartUp bool
}

// CallTable returns the rows of the call table, in the order of Calls
// (by descending total time).
func (j *Job) CallTable() []CallRow {
	mpi, wall, _ := j.Summary.Totals()
	rows := make([]CallRow, len(j.Calls))
	for i, c := range j.Calls {
		r := CallRow{CallStat: c, StartUp: flowgraph.IsInit(c.Call)}
		if c.Count > 0 {
			r.Avg = c.Time.Total / c.Count
		}
		if !r.StartUp {
			r.MPIPct, r.WallPct = Percent(c.Time.Total, mpi), Percent(c.Time.Total, wall)
		}
		rows[i] = r
	}
	return rows
}

// Percent returns part in % of whole, 0 when whole is 0.
func Percent(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// SiteStat sums the nodes of one call at one call site over the selected
// ranks. Call sites are told apart by their label (CallSite.Label), the
// name every view gives them.
type SiteStat struct {
	Call string `json:"call"`
	// Site is the call site's label; empty when the recording's node key
	// has no call site.
	Site string `json:"site"`
	// Signature is the full signature of the site's function when Site
	// shortens it.
	Signature string         `json:"signature,omitempty"`
	Count     int64          `json:"count"`
	Time      flowgraph.Stat `json:"time_ns"`
	Bytes     int64          `json:"bytes"`
	// Ranks is the number of distinct ranks that called it, RankList
	// those ranks ("0-3,8").
	Ranks    int    `json:"ranks"`
	RankList string `json:"rank_list"`
}

// Avg is the mean time of one call in ns (integer division).
func (s *SiteStat) Avg() int64 {
	if s.Count == 0 {
		return 0
	}
	return s.Time.Total / s.Count
}

// siteKey identifies a SiteStat while it is summed.
type siteKey struct{ call, site string }

// siteAcc sums call sites over ranks.
type siteAcc struct {
	idx   map[siteKey]int
	stats []SiteStat
	ranks [][]int // per stat, the ranks in order of addition
}

func (a *siteAcc) add(r *flowgraph.Rank) {
	if a.idx == nil {
		a.idx = make(map[siteKey]int)
	}
	g := &r.Graph
	for i := range g.Nodes {
		n := &g.Nodes[i]
		var label, sig string
		if s := n.Key.Site; s >= 0 && s < len(g.Sites) {
			label, sig = g.Sites[s].Label(), g.Sites[s].Signature
		}
		k := siteKey{n.Key.Call, label}
		x, ok := a.idx[k]
		if !ok {
			x = len(a.stats)
			a.idx[k] = x
			a.stats = append(a.stats, SiteStat{Call: n.Key.Call, Site: label})
			a.ranks = append(a.ranks, nil)
		}
		s := &a.stats[x]
		if s.Signature == "" {
			s.Signature = sig
		}
		s.Time.Merge(n.Time, s.Count, n.Count)
		s.Count += n.Count
		s.Bytes += n.Bytes.Total
		if rs := a.ranks[x]; len(rs) == 0 || rs[len(rs)-1] != r.Rank {
			a.ranks[x] = append(rs, r.Rank)
		}
	}
}

// sorted returns the call sites by descending total time, then call and
// site.
func (a *siteAcc) sorted() []SiteStat {
	for i := range a.stats {
		rs := a.ranks[i]
		slices.Sort(rs)
		rs = slices.Compact(rs)
		a.stats[i].Ranks, a.stats[i].RankList = len(rs), RankRanges(rs)
	}
	out := a.stats
	sort.SliceStable(out, func(i, j int) bool {
		x, y := &out[i], &out[j]
		if x.Time.Total != y.Time.Total {
			return x.Time.Total > y.Time.Total
		}
		if x.Call != y.Call {
			return x.Call < y.Call
		}
		return x.Site < y.Site
	})
	return out
}

// Traffic is a number of messages and their bytes.
type Traffic struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// CommCell is the traffic from one rank to another.
type CommCell struct {
	From int `json:"from"`
	To   int `json:"to"`
	Traffic
}

// CallTraffic is the traffic of one call.
type CallTraffic struct {
	Call string `json:"call"`
	Traffic
}

// CommMatrix is the point-to-point traffic of the selected ranks, sender
// (row) by destination (column), both world ranks.
//
// It counts the messages of the sends (MPI_Send, Bsend, Rsend, Ssend,
// their nonblocking forms Isend, Ibsend, Irsend, Issend and their
// large-count forms) at their call: one message per call to the call's
// recorded partner, the destination. Sendrecv, Sendrecv_replace and their
// nonblocking forms count one message to their destination with half of
// their recorded bytes, which sum what was sent and received. Each message
// is counted once, at its sender, so receives (wildcard or not) are not
// needed; persistent sends (Send_init ...) are not counted, as their
// messages go at MPI_Start, which records no partner.
//
// A node records how often it went to each partner (up to
// flowgraph.MaxPartners partners) and its bytes over all partners: a
// partner's bytes are its share of the calls times the node's mean size,
// exact when the node's calls all moved the same size (or the node has
// one partner), an estimate otherwise (Estimated).
type CommMatrix struct {
	// Size is the number of world ranks: rows and columns 0..Size-1.
	Size int `json:"size"`
	// Cells are the non-empty cells by sender, then destination.
	Cells []CommCell `json:"cells"`
	// Sent sums the cells by call.
	Sent []CallTraffic `json:"sent_by_call"`
	// Unattributed are sends without a known destination (more partners
	// than a node records, or MPI_PROC_NULL), not in Cells.
	Unattributed Traffic `json:"unattributed"`
	// Other is the traffic of the calls that move data but are not
	// sends (receives, collectives, one-sided, I/O), by descending bytes.
	Other []CallTraffic `json:"other"`
	// Estimated tells that some cell's bytes are estimated from a node's
	// mean message size, or halved from a Sendrecv's.
	Estimated bool `json:"estimated"`
	// SelectedRanks is the number of distinct ranks whose sends are
	// counted (rows that can be non-empty).
	SelectedRanks int `json:"selected_ranks"`
}

// commAcc builds a CommMatrix.
type commAcc struct {
	m     CommMatrix
	cells map[[2]int]*Traffic
	sent  map[string]*Traffic
	other map[string]*Traffic
	ranks map[int]bool
}

func (a *commAcc) add(r *flowgraph.Rank) {
	if a.cells == nil {
		a.cells, a.sent, a.other, a.ranks = map[[2]int]*Traffic{}, map[string]*Traffic{}, map[string]*Traffic{}, map[int]bool{}
	}
	a.ranks[r.Rank] = true
	for i := range r.Graph.Nodes {
		n := &r.Graph.Nodes[i]
		// How the recorded partner and bytes make messages: a send one
		// of the recorded bytes, a send-receive one of half of them (sent
		// + received) to the partner (dest).
		dir := mpicall.Direction(n.Key.Call)
		if dir != mpicall.DirSend && dir != mpicall.DirSendRecv {
			if n.Bytes.Total > 0 {
				addTraffic(a.other, n.Key.Call, n.Count, n.Bytes.Total)
			}
			continue
		}
		if n.Count == 0 {
			continue
		}
		bytes := float64(n.Bytes.Total)
		if dir == mpicall.DirSendRecv {
			bytes /= 2
			a.m.Estimated = a.m.Estimated || n.Bytes.Total > 0
		}
		addTraffic(a.sent, n.Key.Call, n.Count, int64(math.Round(bytes)))
		partners := n.Partners
		if len(partners) == 0 && n.Key.Partner >= 0 {
			partners = []flowgraph.PartnerCount{{Rank: n.Key.Partner, Count: n.Count}}
		}
		exact := n.Bytes.Min == n.Bytes.Max || (len(partners) == 1 && partners[0].Count == n.Count)
		left, leftBytes := n.Count, int64(math.Round(bytes))
		for _, p := range partners {
			if p.Rank < 0 || p.Count <= 0 {
				continue
			}
			b := int64(math.Round(bytes * float64(p.Count) / float64(n.Count)))
			if !exact && b > 0 {
				a.m.Estimated = true
			}
			c := a.cells[[2]int{r.Rank, p.Rank}]
			if c == nil {
				c = &Traffic{}
				a.cells[[2]int{r.Rank, p.Rank}] = c
			}
			c.Count += p.Count
			c.Bytes += b
			left -= p.Count
			leftBytes -= b
			a.m.Size = max(a.m.Size, p.Rank+1)
		}
		if left > 0 {
			a.m.Unattributed.Count += left
			a.m.Unattributed.Bytes += max(leftBytes, 0)
		}
	}
}

func addTraffic(m map[string]*Traffic, call string, count, bytes int64) {
	t := m[call]
	if t == nil {
		t = &Traffic{}
		m[call] = t
	}
	t.Count += count
	t.Bytes += bytes
}

// byBytes lists the traffic of m by descending bytes, then call.
func byBytes(m map[string]*Traffic) []CallTraffic {
	out := make([]CallTraffic, 0, len(m))
	for c, t := range m {
		out = append(out, CallTraffic{Call: c, Traffic: *t})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Call < out[j].Call
	})
	return out
}

func (a *commAcc) finish(worldSize int) *CommMatrix {
	m := a.m
	m.Size = max(m.Size, worldSize)
	for k := range a.ranks {
		m.Size = max(m.Size, k+1)
	}
	m.SelectedRanks = len(a.ranks)
	m.Cells = make([]CommCell, 0, len(a.cells))
	for k, t := range a.cells {
		m.Cells = append(m.Cells, CommCell{From: k[0], To: k[1], Traffic: *t})
	}
	slices.SortFunc(m.Cells, func(x, y CommCell) int {
		if x.From != y.From {
			return x.From - y.From
		}
		return x.To - y.To
	})
	m.Sent = byBytes(a.sent)
	m.Other = byBytes(a.other)
	return &m
}

// Total is the traffic of all cells.
func (m *CommMatrix) Total() Traffic {
	var t Traffic
	for _, c := range m.Cells {
		t.Count += c.Count
		t.Bytes += c.Bytes
	}
	return t
}

// Blocks sums the cells into n x n blocks: block(rank) gives the block of
// a world rank (in [0, n); ranks outside are left out). The result is
// indexed [from block][to block].
func (m *CommMatrix) Blocks(n int, block func(rank int) int) [][]Traffic {
	out := make([][]Traffic, n)
	for i := range out {
		out[i] = make([]Traffic, n)
	}
	for _, c := range m.Cells {
		f, t := block(c.From), block(c.To)
		if f < 0 || f >= n || t < 0 || t >= n {
			continue
		}
		out[f][t].Count += c.Count
		out[f][t].Bytes += c.Bytes
	}
	return out
}

// SizeBucket is the calls of one call whose call site's mean message size
// (bytes over calls of a node) falls in one power-of-two range.
type SizeBucket struct {
	// Max is the range's upper bound in bytes: the bucket holds mean
	// sizes in (Max/2, Max], and means up to 1 for Max 1. Max is 0 for
	// the nodes that moved no data.
	Max   int64 `json:"max_bytes"`
	Count int64 `json:"count"`
	Time  int64 `json:"time_ns"`
}

// CallSizes is the time of one call by message size.
type CallSizes struct {
	Call string `json:"call"`
	// Buckets are the non-empty buckets by ascending Max.
	Buckets []SizeBucket `json:"buckets"`
	// Time and Count sum the buckets.
	Time  int64 `json:"time_ns"`
	Count int64 `json:"count"`
}

// sizeBucket returns the upper bound of the bucket of a mean message size.
func sizeBucket(mean float64) int64 {
	switch {
	case mean <= 0:
		return 0
	case mean <= 1:
		return 1
	case mean >= 1<<62:
		return 1 << 62
	}
	c := int64(math.Ceil(mean))
	return 1 << bits.Len64(uint64(c-1))
}

// sizeAcc sums the time of calls by message size.
type sizeAcc map[string]map[int64]*SizeBucket

func (a sizeAcc) add(r *flowgraph.Rank) {
	for i := range r.Graph.Nodes {
		n := &r.Graph.Nodes[i]
		if flowgraph.IsInit(n.Key.Call) || n.Count == 0 {
			continue
		}
		mx := sizeBucket(float64(n.Bytes.Total) / float64(n.Count))
		bs := a[n.Key.Call]
		if bs == nil {
			bs = map[int64]*SizeBucket{}
			a[n.Key.Call] = bs
		}
		b := bs[mx]
		if b == nil {
			b = &SizeBucket{Max: mx}
			bs[mx] = b
		}
		b.Count += n.Count
		b.Time += n.Time.Total
	}
}

// sorted returns the calls that moved data in the order of calls (the
// job's calls by time).
func (a sizeAcc) sorted(calls []flowgraph.CallStat) []CallSizes {
	var out []CallSizes
	for _, c := range calls {
		bs := a[c.Call]
		moved := false
		for mx := range bs {
			moved = moved || mx > 0
		}
		if !moved {
			continue
		}
		cs := CallSizes{Call: c.Call}
		for _, b := range bs {
			cs.Buckets = append(cs.Buckets, *b)
			cs.Time += b.Time
			cs.Count += b.Count
		}
		slices.SortFunc(cs.Buckets, func(x, y SizeBucket) int { return cmp.Compare(x.Max, y.Max) })
		out = append(out, cs)
	}
	return out
}
