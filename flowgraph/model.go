// Package flowgraph defines the event flow graph of an MPI job, its on-disk
// format, and the lossless reconstruction of the ordered event sequence.
//
// An event flow graph has one node per distinct MPI call (by default keyed by
// call name and call site) and one edge per distinct transition between two
// consecutive calls; an edge therefore stands for a compute phase. Events of a
// rank are numbered 0, 1, 2, ... in the order they happened; every traversal
// of an edge from event i-1 to event i stores the sequence number i, so the
// exact sequence can be rebuilt by starting at the initial node and following,
// at each step, the out-edge that holds the next sequence number.
//
// All times are integer nanoseconds so that totals are exact.
package flowgraph

// FormatVersion is the version of the file format written by this package.
// Readers accept files of this version or older. Version 5 keeps the
// duration of the last event of a timing interval that ends by time apart
// where it stands out, as version 4 its last gap. Version 4 may store the
// sequences of graphs with irregular self-loops as positions, and timing
// intervals that end by time say their last gap; version 3 gives each
// timing interval its number of events; version 2 stores sequence numbers
// as nested progressions (Seq); version 1 stored arithmetic runs.
const FormatVersion = 5

// Key fields that a recording can use to split nodes. The default key is
// call and site.
const (
	KeyCall    = "call"
	KeySite    = "site"
	KeyBytes   = "bytes"
	KeyPartner = "partner"
	KeyComm    = "comm"
)

// Header describes one MPI job.
type Header struct {
	Version       int      `msgpack:"version" json:"version"`
	JobID         string   `msgpack:"job" json:"job_id"`
	Command       []string `msgpack:"cmd" json:"command"`
	StartUnixNano int64    `msgpack:"start" json:"start_unix_ns"`
	Wallclock     int64    `msgpack:"wall" json:"wallclock_ns"` // ns, MPI_Init to MPI_Finalize of the slowest rank
	NumRanks      int      `msgpack:"nranks" json:"ranks"`
	Hosts         []string `msgpack:"hosts" json:"hosts"` // indexed by world rank
	MPILibrary    string   `msgpack:"mpilib" json:"mpi_library"`
	MPIVersion    string   `msgpack:"mpiver" json:"mpi_version"`
	Counters      []string `msgpack:"counters" json:"counters"` // names of the counters in Edge.Counters
	ClockSource   string   `msgpack:"clock" json:"clock"`
	KeyFields     []string `msgpack:"key" json:"key_fields"` // which NodeKey fields are significant
	// Incomplete is set when at least one rank did not reach MPI_Finalize
	// and its data comes from a partial file.
	Incomplete bool `msgpack:"incomplete" json:"incomplete"`
	// Executable is the path of rank 0's program; Env the variables of
	// rank 0's environment that tune the run ("NAME=value", sorted: see
	// interpose's runEnv), as IPM's banner gives them. Empty in files of
	// older versions.
	Executable string   `msgpack:"exe,omitempty" json:"executable,omitempty"`
	Env        []string `msgpack:"env,omitempty" json:"env,omitempty"`
	// User is the name of the user who ran the job (rank 0's), as sites
	// file their jobs' logs; empty in files of older versions.
	User string `msgpack:"user,omitempty" json:"user,omitempty"`
}

// Rank is the data recorded by one thread of one MPI process.
type Rank struct {
	Rank     int    `msgpack:"rank"`
	Thread   int    `msgpack:"thread"`
	Host     string `msgpack:"host"`
	UserTime int64  `msgpack:"utime"`  // ns of user CPU time
	SysTime  int64  `msgpack:"stime"`  // ns of system CPU time
	MaxRSS   int64  `msgpack:"maxrss"` // bytes
	// Complete is false when this rank never reached MPI_Finalize.
	Complete bool `msgpack:"complete"`
	// Start is the time of event 0 in ns since Header.StartUnixNano, so
	// the ranks' relative times can be put on one time axis.
	Start int64 `msgpack:"start"`
	Graph Graph `msgpack:"graph"`
}

// Graph is the event flow graph of one rank (or one thread of a rank).
type Graph struct {
	Nodes []Node     `msgpack:"nodes"`
	Edges []Edge     `msgpack:"edges"`
	Sites []CallSite `msgpack:"sites"`
	// Initial is the index of the node of event 0 (-1 for an empty graph).
	Initial int `msgpack:"initial"`
	// NumEvents is the number of events (node visits) recorded.
	NumEvents int64 `msgpack:"nevents"`
	// Anchors are sparse, ordered time anchors (see Anchor). Files of
	// version 1 store them; for graphs with a Timing they are derived from
	// it (one per interval) and not stored.
	Anchors Anchors `msgpack:"anchors"`
	// Timing holds time sums per interval of events (absent in version 1
	// files).
	Timing Timing `msgpack:"timing"`
	// Budget, when not nil, says what the sequences and timing take
	// against the recording's byte budget and what was approximated to
	// fit it (FitBudget); nil without a budget (MPIFLOW_ORDER=exact).
	Budget *BudgetUse `msgpack:"budget,omitempty"`
	// read tells DecodeMsgpack what to do with the sequences
	// (File.Skeleton, File.ReadLazy); readAll again once decoded.
	read seqRead
	// lazy maps the sequences of a graph read by File.ReadLazy on demand
	// (EdgeSeq); nil once they are all mapped or dropped, and for other
	// graphs.
	lazy *posMap
}

// NodeKey identifies a node. Fields not named in Header.KeyFields are zero
// (Site, Partner and Comm use -1 for "not part of the key").
type NodeKey struct {
	Call    string `msgpack:"call"`
	Site    int    `msgpack:"site"` // index into Graph.Sites, -1 if none
	Bytes   int64  `msgpack:"bytes"`
	Partner int    `msgpack:"partner"`
	Comm    int    `msgpack:"comm"`
}

// Stat accumulates a count-weighted total, minimum and maximum.
type Stat struct {
	Total int64 `msgpack:"t" json:"total"`
	Min   int64 `msgpack:"lo" json:"min"`
	Max   int64 `msgpack:"hi" json:"max"`
}

// Add records one observation v, given how many were recorded before it.
func (s *Stat) Add(v int64, before int64) {
	if before == 0 || v < s.Min {
		s.Min = v
	}
	if before == 0 || v > s.Max {
		s.Max = v
	}
	s.Total += v
}

// Merge adds the observations of o to s.
func (s *Stat) Merge(o Stat, sCount, oCount int64) {
	if oCount == 0 {
		return
	}
	if sCount == 0 || o.Min < s.Min {
		s.Min = o.Min
	}
	if sCount == 0 || o.Max > s.Max {
		s.Max = o.Max
	}
	s.Total += o.Total
}

// MaxPartners bounds Node.Partners; further partners are counted in
// Node.OtherPartners.
const MaxPartners = 64

// PartnerCount is a communication partner (world rank) and how often it was used.
type PartnerCount struct {
	Rank  int   `msgpack:"r"`
	Count int64 `msgpack:"n"`
}

// Node is one distinct MPI call of a rank.
type Node struct {
	Key      NodeKey        `msgpack:"key"`
	Count    int64          `msgpack:"n"`
	Time     Stat           `msgpack:"time"`  // ns spent inside the call
	Bytes    Stat           `msgpack:"bytes"` // bytes moved per call
	Partners []PartnerCount `msgpack:"partners"`
	// OtherPartners counts calls to partners beyond MaxPartners.
	OtherPartners int64 `msgpack:"otherp"`
	CommSize      int   `msgpack:"commsize"` // largest communicator size seen
}

// MeanTime is the average duration of one call in ns.
func (n *Node) MeanTime() float64 {
	if n.Count == 0 {
		return 0
	}
	return float64(n.Time.Total) / float64(n.Count)
}

// Edge is one distinct transition src -> dst, i.e. a compute phase.
type Edge struct {
	Src   int   `msgpack:"src"`
	Dst   int   `msgpack:"dst"`
	Count int64 `msgpack:"n"`
	Time  Stat  `msgpack:"time"` // ns between the end of src and the start of dst
	// Counters holds one sum per Header.Counters entry.
	Counters []int64 `msgpack:"ctr"`
	// Seq holds the sequence numbers of every traversal (the index of the
	// destination event), in ascending order. Files store them per edge
	// (format version 1, partial files) or all together (see graphWire).
	Seq Seq `msgpack:"seq,omitempty"`
}

// MeanTime is the average duration of one traversal in ns.
func (e *Edge) MeanTime() float64 {
	if e.Count == 0 {
		return 0
	}
	return float64(e.Time.Total) / float64(e.Count)
}

// CallSite is the return address of an MPI call and where it lives.
type CallSite struct {
	Addr   uint64 `msgpack:"addr"`
	Object string `msgpack:"obj"` // path of the executable or shared object
	Offset uint64 `msgpack:"off"` // offset of Addr inside Object
	// Resolved location; empty until resolved (see Resolve).
	Function string `msgpack:"fn"` // demangled and shortened, e.g. "ns::Class::method"
	File     string `msgpack:"file"`
	Line     int    `msgpack:"line"`
	// Signature is the function's full demangled signature when Function
	// shortens it, e.g. "ns::Class::method(int) const".
	Signature string `msgpack:"sig,omitempty"`
	// Region and Level are the arguments of MPI_Pcontrol at a site of
	// that call: IPM's regions are entered with level 1 and left with -1,
	// by name (Region is empty when the call passed none).
	Region string `msgpack:"region,omitempty" json:",omitempty"`
	Level  int    `msgpack:"level,omitempty" json:",omitempty"`
}

// Anchor ties an event index to real time. Time is the start of event Event
// in ns since the rank's first event, and MPITime the ns spent inside MPI by
// all events before it. An anchor with Event == NumEvents marks the end of
// the last event.
type Anchor struct {
	Event   int64 `msgpack:"e"`
	Time    int64 `msgpack:"t"`
	MPITime int64 `msgpack:"m"`
}

// Anchors is an ascending list of anchors.
type Anchors []Anchor

// Ends returns the first and the last anchor (as many as there are, up to
// two): what the run's start and end need of them.
func (as Anchors) Ends() Anchors {
	if len(as) <= 2 {
		return as
	}
	return Anchors{as[0], as[len(as)-1]}
}
