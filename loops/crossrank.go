package loops

import (
	"fmt"
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

// RankLoops is the collapsed graph of one rank (one thread of one rank).
type RankLoops struct {
	Rank      int
	Thread    int
	Graph     *flowgraph.Graph
	Collapsed *Collapsed
}
