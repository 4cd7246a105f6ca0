package flowgraph

import (
	"fmt"
	"sort"
)

// Merge writes to dst one file holding every block of the files at srcs,
// such as the partial per-rank files that ranks write when they never reach
// MPI_Finalize. Blocks are read one at a time. The merged header is the
// first source's, with hosts filled in from all sources; the run is marked
// incomplete when any source is, when any rank's block is incomplete, or
// when ranks are missing.
func Merge(dst string, srcs []string) error {
	if len(srcs) == 0 {
		return fmt.Errorf("merge into %s: no input files", dst)
	}
	type block struct {
		f *File
		e IndexEntry
	}
	var blocks []block
	var h Header
	seen := make(map[[2]int]string)
	for i, path := range srcs {
		f, err := Open(path)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		defer f.Close()
		fh := f.Header
		if i == 0 {
			h = fh
			h.Hosts = nil
		} else if fh.JobID != h.JobID {
			return fmt.Errorf("merge: %s is from job %q, %s from job %q", path, fh.JobID, srcs[0], h.JobID)
		}
		h.Incomplete = h.Incomplete || fh.Incomplete
		h.NumRanks = max(h.NumRanks, fh.NumRanks)
		h.Wallclock = max(h.Wallclock, fh.Wallclock)
		for len(h.Hosts) < len(fh.Hosts) {
			h.Hosts = append(h.Hosts, "")
		}
		for r, host := range fh.Hosts {
			if host != "" {
				h.Hosts[r] = host
			}
		}
		for _, e := range f.Index {
			k := [2]int{e.Rank, e.Thread}
			if prev, dup := seen[k]; dup {
				return fmt.Errorf("merge: rank %d thread %d is in both %s and %s", e.Rank, e.Thread, prev, path)
			}
			seen[k] = path
			blocks = append(blocks, block{f, e})
		}
	}
	sort.SliceStable(blocks, func(i, j int) bool {
		a, b := blocks[i].e, blocks[j].e
		return a.Rank < b.Rank || a.Rank == b.Rank && a.Thread < b.Thread
	})
	ranks := make(map[int]bool)
	for _, b := range blocks {
		ranks[b.e.Rank] = true
	}
	if len(ranks) < h.NumRanks {
		h.Incomplete = true
	}
	w, err := Create(dst)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		r, err := b.f.ReadRank(b.f.FindRank(b.e.Rank, b.e.Thread))
		if err != nil {
			w.Abort()
			return fmt.Errorf("merge: %w", err)
		}
		if !r.Complete {
			h.Incomplete = true
		}
		if err := w.WriteRank(r); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close(h)
}
