package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mpiflow/flowgraph"
)

// partialSuffix ends the per-rank files of ranks that never reached
// MPI_Finalize (interpose/csrc/partial.h).
const partialSuffix = ".partial.mpiflow"

// profiles lists the job files in dir, or with partial the per-rank
// partial files.
func profiles(dir string, partial bool) map[string]bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.mpiflow"))
	set := make(map[string]bool, len(m))
	for _, p := range m {
		if strings.HasSuffix(p, partialSuffix) == partial {
			set[p] = true
		}
	}
	return set
}

// partialJobs groups partial files by job: the name up to ".rank<N>"
// (<exe>.<job>), which is also the merged file's name.
func partialJobs(files []string) map[string][]string {
	jobs := map[string][]string{}
	for _, f := range files {
		base := strings.TrimSuffix(f, partialSuffix)
		i := strings.LastIndex(base, ".rank")
		if i < 0 {
			continue
		}
		jobs[base[:i]] = append(jobs[base[:i]], f)
	}
	for _, fs := range jobs {
		sort.Strings(fs)
	}
	return jobs
}

// mergePartials merges the partial files of each job into one job file in
// dir (flowgraph.Merge) and removes them; it returns the job files, and
// whether any of them is incomplete. A job whose files cannot be merged
// keeps them.
func mergePartials(files []string, dir string) ([]string, bool, error) {
	jobs := partialJobs(files)
	prefixes := make([]string, 0, len(jobs))
	for p := range jobs {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	var out []string
	incomplete := false
	for _, prefix := range prefixes {
		base := filepath.Join(dir, filepath.Base(prefix))
		dst := base + ".mpiflow"
		for i := 2; ; i++ {
			_, err := os.Lstat(dst)
			if os.IsNotExist(err) {
				break
			}
			if err != nil {
				return out, incomplete, fmt.Errorf("merge the partial files %s.rank*%s (kept): %w", prefix, partialSuffix, err)
			}
			dst = fmt.Sprintf("%s.%d.mpiflow", base, i)
		}
		if err := flowgraph.Merge(dst, jobs[prefix]); err != nil {
			return out, incomplete, fmt.Errorf("merge the partial files %s.rank*%s (kept): %w", prefix, partialSuffix, err)
		}
		for _, f := range jobs[prefix] {
			os.Remove(f)
		}
		f, err := flowgraph.Open(dst)
		if err != nil {
			return out, incomplete, err
		}
		incomplete = incomplete || f.Header.Incomplete
		f.Close()
		out = append(out, dst)
	}
	return out, incomplete, nil
}
