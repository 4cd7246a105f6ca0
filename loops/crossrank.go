package loops

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"mpiflow/flowgraph"
)

// LoopKey identifies a loop across ranks: the call and call site of its
// header. Call sites are compared by object and offset, which survive
// address space randomization, or by address when the object is unknown.
// Self is set for a call repeated back to back (Loop.SelfLoop), which can
// share its header with an enclosing loop. Nth tells apart loops of one rank
// with otherwise equal keys (e.g. when nodes are also keyed by message
// size): 0 for the first in ID order.
type LoopKey struct {
	Call   string `json:"call"`
	Object string `json:"object,omitempty"`
	Addr   uint64 `json:"addr"` // offset in Object, or absolute address without Object
	Self   bool   `json:"self,omitempty"`
	Nth    int    `json:"nth,omitempty"`
}

// String formats the key as call@object+0xoffset[ self][#n].
func (k LoopKey) String() string {
	var b strings.Builder
	b.WriteString(k.Call)
	switch {
	case k.Object != "":
		fmt.Fprintf(&b, "@%s+%#x", k.Object, k.Addr)
	case k.Addr != 0:
		fmt.Fprintf(&b, "@%#x", k.Addr)
	}
	if k.Self {
		b.WriteString(" self")
	}
	if k.Nth > 0 {
		fmt.Fprintf(&b, "#%d", k.Nth)
	}
	return b.String()
}

// siteOf returns the rank-independent location of node v's call site.
func siteOf(g *flowgraph.Graph, v int) (obj string, addr uint64) {
	s := g.Nodes[v].Key.Site
	if s < 0 || s >= len(g.Sites) {
		return "", 0
	}
	cs := &g.Sites[s]
	if cs.Object != "" {
		return cs.Object, cs.Offset
	}
	return "", cs.Addr
}

// LoopKeys returns the key of every loop of c (index ID-1); g is the graph c
// was collapsed from.
func LoopKeys(g *flowgraph.Graph, c *Collapsed) []LoopKey {
	keys := make([]LoopKey, len(c.Loops))
	seen := make(map[LoopKey]int)
	for i := range c.Loops {
		h := c.Loops[i].Header
		obj, addr := siteOf(g, h)
		k := LoopKey{Call: g.Nodes[h].Key.Call, Object: obj, Addr: addr, Self: c.Loops[i].SelfLoop}
		k.Nth = seen[k]
		seen[k]++
		keys[i] = k
	}
	return keys
}

// nodeKeyString is a rank-independent text form of a node's key.
func nodeKeyString(g *flowgraph.Graph, v int) string {
	k := &g.Nodes[v].Key
	obj, addr := siteOf(g, v)
	return fmt.Sprintf("%s@%s+%#x b%d p%d c%d", k.Call, obj, addr, k.Bytes, k.Partner, k.Comm)
}

// levelKeys returns the text keys of the nodes of level id.
func levelKeys(g *flowgraph.Graph, c *Collapsed, keys []LoopKey, id int) []string {
	l := &c.Levels[id]
	out := make([]string, len(l.Nodes))
	for i, x := range l.Nodes {
		if x.Loop > 0 {
			out[i] = "loop " + keys[x.Loop-1].String()
		} else {
			out[i] = "call " + nodeKeyString(g, x.Node)
		}
	}
	return out
}

// Signature is a hash of the structure of the collapsed top level of a
// rank: the keys of its nodes (loop nodes by LoopKey) and the edges between
// them. Times and counts do not enter it, so ranks that run the same code
// path get the same signature.
func Signature(g *flowgraph.Graph, c *Collapsed) string {
	keys := LoopKeys(g, c)
	nk := levelKeys(g, c, keys, 0)
	lines := make([]string, 0, len(nk)+len(c.Levels[0].Edges))
	for _, k := range nk {
		lines = append(lines, "n "+k)
	}
	for _, e := range c.Levels[0].Edges {
		lines = append(lines, "e "+nk[e.Src]+" -> "+nk[e.Dst])
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, s := range lines {
		h.Write([]byte(s))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// RankLoops is the collapsed graph of one rank (one thread of one rank).
type RankLoops struct {
	Rank      int
	Thread    int
	Graph     *flowgraph.Graph
	Collapsed *Collapsed
}

// Group is a set of ranks whose collapsed top levels have the same
// Signature; Members index the slice given to GroupRanks, ascending.
type Group struct {
	Signature string `json:"signature"`
	Members   []int  `json:"members"`
}

// GroupRanks groups ranks by Signature, in order of each group's first
// member.
func GroupRanks(rs []RankLoops) []Group {
	var groups []Group
	bySig := make(map[string]int)
	for i := range rs {
		sig := Signature(rs[i].Graph, rs[i].Collapsed)
		k, ok := bySig[sig]
		if !ok {
			k = len(groups)
			bySig[sig] = k
			groups = append(groups, Group{Signature: sig})
		}
		groups[k].Members = append(groups[k].Members, i)
	}
	return groups
}

// LoopRef is one loop of one rank: Member indexes the slice given to
// MatchLoops, Loop is the loop ID in that rank.
type LoopRef struct {
	Member int `json:"member"`
	Loop   int `json:"loop"`
}

// Match is one loop matched across ranks by its key.
type Match struct {
	Key   LoopKey   `json:"key"`
	Loops []LoopRef `json:"loops"`
}

// MatchLoops matches the loops of several ranks by LoopKey, so that Loop 13
// of one rank can be compared with the same source loop of another, even if
// it got another number there. Matches are ordered by first appearance
// (member, then loop ID).
func MatchLoops(rs []RankLoops) []Match {
	var out []Match
	byKey := make(map[LoopKey]int)
	for i := range rs {
		for k, key := range LoopKeys(rs[i].Graph, rs[i].Collapsed) {
			m, ok := byKey[key]
			if !ok {
				m = len(out)
				byKey[key] = m
				out = append(out, Match{Key: key})
			}
			out[m].Loops = append(out[m].Loops, LoopRef{Member: i, Loop: k + 1})
		}
	}
	return out
}
