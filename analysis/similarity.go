package analysis

import (
	"cmp"
	"encoding/binary"
	"slices"

	"mpiflow/flowgraph"
)

// DefaultSimilarity is the similarity a rank needs to its group's
// representative when Options.Similarity is 0: ranks that differ only by
// calls and transitions holding at most 10% of their time, calls and
// bytes share a group.
const DefaultSimilarity = 0.9

// maxLeaders bounds the groups a rank's structure is compared with, and
// medoidCandidates the members tried as a group's representative, so that
// grouping costs O(ranks x graph), not ranks^2.
const (
	maxLeaders       = 32
	medoidCandidates = 16
)

// Profile dimensions: the shares a distance compares.
const (
	dimTime  = iota // time in calls (MPI_Init aside) and compute phases
	dimCalls        // calls and transitions
	dimBytes        // bytes moved by calls
	dims
)

// profile is what grouping compares of a rank: its calls and transitions,
// keyed across ranks by call site (hashes of the keys of Elem), each with
// its share of the rank's total in every dimension, by ascending key.
// Loops are not compared: they follow from the transitions, and a rare
// transition can give a loop another header (on flowgen's HPCC shape,
// ranks whose calls and transitions differ by 0.3-2.8% of their time,
// calls and bytes have 50-100% of their loop time in loops of other keys).
type profile []feature

// feature is a call or transition of a profile: its key and its shares.
type feature struct {
	key uint64
	w   [dims]float64
}

// rankProfile returns the profile of g.
func rankProfile(g *flowgraph.Graph) profile {
	p := make(profile, 0, len(g.Nodes)+len(g.Edges))
	nodeHash := make([]uint64, len(g.Nodes))
	var key []byte
	for v := range g.Nodes {
		n := &g.Nodes[v]
		key = appendNodeKey(key[:0], g, v)
		nodeHash[v] = hashKey('n', key)
		f := feature{key: nodeHash[v]}
		if !flowgraph.IsInit(n.Key.Call) {
			f.w[dimTime] = float64(n.Time.Total)
		}
		f.w[dimCalls] = float64(n.Count)
		f.w[dimBytes] = float64(n.Bytes.Total)
		p = append(p, f)
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Src < 0 || e.Src >= len(g.Nodes) || e.Dst < 0 || e.Dst >= len(g.Nodes) {
			continue
		}
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], nodeHash[e.Src])
		binary.LittleEndian.PutUint64(b[8:], nodeHash[e.Dst])
		f := feature{key: hashKey('e', b[:])}
		f.w[dimTime] = float64(e.Time.Total)
		f.w[dimCalls] = float64(e.Count)
		p = append(p, f)
	}
	slices.SortFunc(p, func(a, b feature) int { return cmp.Compare(a.key, b.key) })
	// Features of one key are summed in place.
	var total [dims]float64
	n := 0
	for _, f := range p {
		if n > 0 && p[n-1].key == f.key {
			for d := range f.w {
				p[n-1].w[d] += f.w[d]
			}
		} else {
			p[n] = f
			n++
		}
		for d := range f.w {
			total[d] += f.w[d]
		}
	}
	p = p[:n]
	for i := range p {
		for d := range total {
			if total[d] > 0 {
				p[i].w[d] /= total[d]
			}
		}
	}
	return p
}

// hashKey is the 64-bit FNV-1a hash of kind and key.
func hashKey(kind byte, key []byte) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := (offset ^ uint64(kind)) * prime
	for _, c := range key {
		h = (h ^ uint64(c)) * prime
	}
	return h
}

// distance is how different the structures of two ranks are: in the
// dimension where they differ most, the mean over both of the share they
// hold on calls or transitions the other does not have. 0 when
// both have the same ones, 1 when they share none.
func distance(a, b *profile) float64 {
	var only [dims]float64
	pa, pb := *a, *b
	i, k := 0, 0
	for i < len(pa) || k < len(pb) {
		switch {
		case k == len(pb) || (i < len(pa) && pa[i].key < pb[k].key):
			for d := range only {
				only[d] += pa[i].w[d]
			}
			i++
		case i == len(pa) || pb[k].key < pa[i].key:
			for d := range only {
				only[d] += pb[k].w[d]
			}
			k++
		default:
			i++
			k++
		}
	}
	worst := 0.0
	for _, u := range only {
		worst = max(worst, u/2)
	}
	return worst
}

// similarGroups groups ranks whose distance to their group's first member
// (its leader) is at most maxDist, given the classes of ranks with the
// same structure (in order of their first member; members ascending);
// classes are never split. It returns the groups' members (ascending, in
// order of the first member), each group's representative (the medoid
// among at most medoidCandidates of its classes' first members) and
// every member's distance to it.
func similarGroups(classes [][]int, prof func(rank int) profile, maxDist float64) (groups [][]int, reps []int, dist [][]float64) {
	type group struct {
		classes []int // indexes into classes
		size    int
		leader  profile
	}
	if maxDist <= 0 {
		// The same structure only: no profile to build.
		for _, cl := range classes {
			groups = append(groups, cl)
			reps = append(reps, cl[0])
			dist = append(dist, make([]float64, len(cl)))
		}
		return groups, reps, dist
	}
	var gs []*group
	for ci, cl := range classes {
		p := prof(cl[0])
		best, bestD := -1, 0.0
		// The largest groups first (then the oldest), at most maxLeaders.
		order := make([]int, len(gs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(gs[b].size, gs[a].size) })
		for _, gi := range order[:min(len(order), maxLeaders)] {
			if d := distance(&p, &gs[gi].leader); d <= maxDist && (best < 0 || d < bestD) {
				best, bestD = gi, d
			}
		}
		if best < 0 {
			gs = append(gs, &group{leader: p})
			best = len(gs) - 1
		}
		gs[best].classes = append(gs[best].classes, ci)
		gs[best].size += len(cl)
	}
	for _, g := range gs {
		g.leader = nil // a profile is as large as the rank's graph
	}
	for _, g := range gs {
		var members []int
		for _, ci := range g.classes {
			members = append(members, classes[ci]...)
		}
		slices.Sort(members)
		rep := members[0]
		if len(g.classes) > 1 {
			rep = medoid(g.classes, classes, prof)
		}
		rp := prof(rep)
		ds := make([]float64, len(members))
		for k, m := range members {
			if m != rep && len(g.classes) > 1 {
				q := prof(m)
				ds[k] = distance(&rp, &q)
			}
		}
		groups = append(groups, members)
		reps = append(reps, rep)
		dist = append(dist, ds)
	}
	return groups, reps, dist
}

// medoid returns, of the first members of the classes cs (evenly chosen
// when more than medoidCandidates), the one with the smallest distance to
// all classes' first members weighted by class size.
func medoid(cs []int, classes [][]int, prof func(rank int) profile) int {
	n := min(len(cs), medoidCandidates)
	cands := make([]profile, n)
	cand := make(map[int]int, n) // class to candidate, whose profile is built
	for x := range cands {
		ci := cs[x*len(cs)/n]
		cands[x] = prof(classes[ci][0])
		cand[ci] = x
	}
	sums := make([]float64, n)
	for _, ci := range cs {
		var p profile
		if x, built := cand[ci]; built {
			p = cands[x]
		} else {
			p = prof(classes[ci][0])
		}
		for x := range cands {
			sums[x] += float64(len(classes[ci])) * distance(&cands[x], &p)
		}
	}
	best := 0
	for x := range sums {
		if sums[x] < sums[best] {
			best = x
		}
	}
	return classes[cs[best*len(cs)/n]][0]
}
