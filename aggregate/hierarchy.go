package aggregate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Node is one node of a resource hierarchy.
type Node struct {
	Name     string
	Parent   int // -1 for the root
	Children []int
	// Resource is the model resource of a leaf, -1 for an inner node.
	Resource int
	Depth    int // 0 for the root
	Leaves   int // number of resources below (1 for a leaf)
}

// Hierarchy is a tree over the resources of a model: every resource is
// exactly one leaf. Nodes[0] is the root and nodes are stored in pre-order,
// so a node's children come after it.
type Hierarchy struct {
	Nodes []Node
}

// Path is the names from the root to node n, joined by "/".
func (h *Hierarchy) Path(n int) string {
	var parts []string
	for ; n >= 0; n = h.Nodes[n].Parent {
		parts = append(parts, h.Nodes[n].Name)
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// Height is the largest depth of a node.
func (h *Hierarchy) Height() int {
	d := 0
	for _, n := range h.Nodes {
		d = max(d, n.Depth)
	}
	return d
}

// Spec is the JSON form of a hierarchy that users write: a tree of named
// nodes whose leaves are MPI ranks, e.g.
//
//	{"name": "site", "children": [
//	  {"name": "cluster-a", "children": [
//	    {"name": "node1", "ranks": [0, 1]},
//	    {"name": "node2", "ranks": [2, 3]}]},
//	  {"name": "cluster-b", "ranks": [4, 5, 6, 7]}]}
//
// A node may list ranks, children or both; every rank of the trace must
// appear exactly once. Ranks are numbers or strings "first-last" for
// ranges: "ranks": ["0-15", 32].
type Spec struct {
	Name     string   `json:"name"`
	Ranks    RankList `json:"ranks,omitempty"`
	Children []Spec   `json:"children,omitempty"`
}

// RankList is a list of ranks that decodes from JSON numbers and "a-b"
// range strings.
type RankList []int

// maxRange bounds one "a-b" range, so that a typo cannot exhaust memory.
const maxRange = 1 << 22

// UnmarshalJSON implements json.Unmarshaler.
func (l *RankList) UnmarshalJSON(b []byte) error {
	var items []any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&items); err != nil {
		return fmt.Errorf("ranks: want a list of ranks and \"first-last\" ranges, not %s", bytes.TrimSpace(b))
	}
	var out RankList
	for _, it := range items {
		switch v := it.(type) {
		case json.Number:
			r, err := strconv.Atoi(v.String())
			if err != nil || r < 0 {
				return fmt.Errorf("ranks: %s is not a rank", v)
			}
			out = append(out, r)
		case string:
			lo, hi, isRange := strings.Cut(v, "-")
			a, err1 := strconv.Atoi(strings.TrimSpace(lo))
			z, err2 := a, error(nil)
			if isRange {
				z, err2 = strconv.Atoi(strings.TrimSpace(hi))
			}
			if err1 != nil || err2 != nil || a < 0 || z < a {
				return fmt.Errorf("ranks: %q is not a rank or a range \"first-last\"", v)
			}
			if z-a >= maxRange {
				return fmt.Errorf("ranks: range %q holds more than %d ranks", v, maxRange)
			}
			for r := a; r <= z; r++ {
				out = append(out, r)
			}
		default:
			return fmt.Errorf("ranks: %v is not a rank or a range \"first-last\"", it)
		}
	}
	*l = out
	return nil
}

// ParseSpec decodes a JSON hierarchy; unknown fields are errors, so that a
// misspelt "children" does not silently drop a subtree.
func ParseSpec(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("hierarchy: %w", specError(err))
	}
	if dec.More() {
		return nil, errors.New("hierarchy: extra data after the root object")
	}
	if err := s.checkNames(s.Name); err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	return &s, nil
}

// specError says what a JSON decoding error means for a hierarchy file,
// without Go's type names.
func specError(err error) error {
	// Only the decoder's own errors: those of RankList say what they mean.
	te, _ := err.(*json.UnmarshalTypeError)
	se, _ := err.(*json.SyntaxError)
	switch {
	case errors.Is(err, io.EOF):
		return errors.New(`empty: want a JSON object such as {"name": "job", "ranks": ["0-3"]}`)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("cut short: the JSON ends inside the root object")
	case se != nil:
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, err)
	case te != nil && te.Field == "":
		return fmt.Errorf(`want a JSON object with "name", "ranks" and "children", not a JSON %s`, te.Value)
	case te != nil:
		return fmt.Errorf("%q: a JSON %s is not allowed there", te.Field, te.Value)
	}
	return err
}

// checkNames fails if two children of a node share a name: their paths,
// which label aggregates, would be ambiguous. An empty list of children
// becomes none, as it reads back from the JSON a Spec writes.
func (s *Spec) checkNames(path string) error {
	if len(s.Children) == 0 {
		s.Children = nil
	}
	seen := make(map[string]bool, len(s.Children))
	for i := range s.Children {
		c := &s.Children[i]
		if seen[c.Name] {
			return fmt.Errorf("two children of %q are named %q", path, c.Name)
		}
		seen[c.Name] = true
		if err := c.checkNames(path + "/" + c.Name); err != nil {
			return err
		}
	}
	return nil
}

// LoadSpec reads a JSON hierarchy file.
func LoadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read hierarchy %s: %w", path, err)
	}
	s, err := ParseSpec(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// HostSpec is the default hierarchy rank -> host -> job: hostOf gives the
// host of a rank ("" for unknown), hosts come in order of their first rank.
func HostSpec(job string, res []Resource, hostOf func(rank int) string) *Spec {
	if job == "" {
		job = "job"
	}
	root := &Spec{Name: job}
	byHost := map[string]int{}
	seen := map[int]bool{}
	for _, r := range res {
		if seen[r.Rank] {
			continue
		}
		seen[r.Rank] = true
		h := hostOf(r.Rank)
		if h == "" {
			h = "unknown host"
		}
		i, ok := byHost[h]
		if !ok {
			i = len(root.Children)
			byHost[h] = i
			root.Children = append(root.Children, Spec{Name: h})
		}
		root.Children[i].Ranks = append(root.Children[i].Ranks, r.Rank)
	}
	return root
}

// FlatSpec is the two-level hierarchy of all ranks under one root.
func FlatSpec(name string, res []Resource) *Spec {
	out := &Spec{Name: name}
	seen := map[int]bool{}
	for _, r := range res {
		if !seen[r.Rank] {
			seen[r.Rank] = true
			out.Ranks = append(out.Ranks, r.Rank)
		}
	}
	return out
}

// NewHierarchy checks spec against the resources of a model and builds the
// hierarchy. A rank with one resource becomes a leaf named after the
// resource; a rank with several (threads) becomes a node "rank N" over one
// leaf per resource.
func NewHierarchy(spec *Spec, res []Resource) (*Hierarchy, error) {
	if spec == nil {
		return nil, errors.New("hierarchy: empty")
	}
	byRank := map[int][]int{}
	for i, r := range res {
		byRank[r.Rank] = append(byRank[r.Rank], i)
	}
	b := hbuilder{res: res, byRank: byRank, where: map[int]string{}}
	if err := b.add(spec, -1, 0, ""); err != nil {
		return nil, fmt.Errorf("hierarchy: %w", err)
	}
	var missing []int
	for rank := range byRank {
		if _, ok := b.where[rank]; !ok {
			missing = append(missing, rank)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		more := ""
		if len(missing) > 10 {
			more = fmt.Sprintf(" and %d more", len(missing)-10)
			missing = missing[:10]
		}
		return nil, fmt.Errorf("hierarchy: ranks %v%s of the trace are not in the hierarchy (every rank must appear exactly once)", missing, more)
	}
	h := &Hierarchy{Nodes: b.nodes}
	for i := len(h.Nodes) - 1; i > 0; i-- {
		h.Nodes[h.Nodes[i].Parent].Leaves += h.Nodes[i].Leaves
	}
	return h, nil
}

type hbuilder struct {
	res    []Resource
	nodes  []Node
	byRank map[int][]int
	where  map[int]string // rank -> path of the node that lists it
}

func (b *hbuilder) node(name string, parent, depth, res int) int {
	b.nodes = append(b.nodes, Node{Name: name, Parent: parent, Resource: res, Depth: depth})
	i := len(b.nodes) - 1
	if parent >= 0 {
		b.nodes[parent].Children = append(b.nodes[parent].Children, i)
	}
	if res >= 0 {
		b.nodes[i].Leaves = 1
	}
	return i
}

func (b *hbuilder) leafName(r int) string {
	if n := b.res[r].Name; n != "" {
		return n
	}
	return fmt.Sprintf("rank %d", b.res[r].Rank)
}

func (b *hbuilder) add(s *Spec, parent, depth int, path string) error {
	if s.Name == "" {
		if path == "" {
			return errors.New("the root node has no name")
		}
		return fmt.Errorf("a child of %q has no name", path)
	}
	if path != "" {
		path += "/"
	}
	path += s.Name
	if len(s.Ranks) == 0 && len(s.Children) == 0 {
		return fmt.Errorf("node %q has neither ranks nor children", path)
	}
	me := b.node(s.Name, parent, depth, -1)
	for _, rank := range s.Ranks {
		rs, ok := b.byRank[rank]
		if !ok {
			return fmt.Errorf("node %q lists rank %d, which is not in the trace", path, rank)
		}
		if prev, dup := b.where[rank]; dup {
			return fmt.Errorf("rank %d appears twice: in %q and in %q", rank, prev, path)
		}
		b.where[rank] = path
		if len(rs) == 1 {
			b.node(b.leafName(rs[0]), me, depth+1, rs[0])
			continue
		}
		rn := b.node(fmt.Sprintf("rank %d", rank), me, depth+1, -1)
		for _, r := range rs {
			b.node(b.leafName(r), rn, depth+2, r)
		}
	}
	for i := range s.Children {
		if err := b.add(&s.Children[i], me, depth+1, path); err != nil {
			return err
		}
	}
	return nil
}
