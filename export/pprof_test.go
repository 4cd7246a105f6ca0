package export

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPprof(t *testing.T) {
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			job := treeJob(t, tc)
			tree := NewCallTree(job)
			var buf bytes.Buffer
			require.NoError(t, WritePprof(&buf, tree))
			p, err := profile.Parse(&buf)
			require.NoError(t, err)
			require.NoError(t, p.CheckValid())

			types := []string{"time/nanoseconds", "calls/count", "bytes/bytes"}
			for _, c := range job.Header.Counters {
				types = append(types, c+"/count")
			}
			var got []string
			for _, st := range p.SampleType {
				got = append(got, st.Type+"/"+st.Unit)
			}
			assert.Equal(t, types, got)
			assert.Equal(t, "time", p.DefaultSampleType)
			assert.Equal(t, job.Header.StartUnixNano, p.TimeNanos)
			assert.Equal(t, job.Header.Wallclock, p.DurationNanos)
			assert.Contains(t, strings.Join(p.Comments, "\n"), "./halo 500")

			// Per call (the leaf function of its samples) the job's
			// totals; per block its total time.
			type key struct{ rank, thread string }
			perCall := map[string][3]int64{}
			perBlock := map[key]int64{}
			counters := make([]int64, len(job.Header.Counters))
			for _, s := range p.Sample {
				require.Len(t, s.Value, len(types))
				require.NotEmpty(t, s.Location)
				require.Len(t, s.Label["rank"], 1)
				require.Len(t, s.Label["thread"], 1)
				perBlock[key{s.Label["rank"][0], s.Label["thread"][0]}] += s.Value[0]
				for k := range counters {
					counters[k] += s.Value[3+k]
				}
				root := s.Location[len(s.Location)-1].Line[0].Function
				assert.Equal(t, "halo", root.Name, "the path ends at the program")
				leaf := s.Location[0].Line[0]
				name := leaf.Function.Name
				if name == ComputeName {
					assert.Zero(t, s.Value[1])
					continue
				}
				require.Regexp(t, `^MPI_\w+$`, name, "a leaf is a call or compute")
				assert.Equal(t, name, callOf(leaf.Function.SystemName), "the system name is the tree's")
				if leaf.Function.Filename != "" {
					assert.Equal(t, "/src/halo.c", leaf.Function.Filename)
					assert.Contains(t, leaf.Function.SystemName, "halo.c:"+strconv.FormatInt(leaf.Line, 10))
				}
				for _, l := range s.Location[1 : len(s.Location)-1] {
					assert.Regexp(t, `^loop MPI_`, l.Line[0].Function.Name, "loops between program and call")
				}
				v := perCall[name]
				for k := range v {
					v[k] += s.Value[k]
				}
				perCall[name] = v
			}
			require.Len(t, perCall, len(job.Calls))
			for _, c := range job.Calls {
				got := perCall[c.Call]
				assert.Equal(t, [3]int64{c.Time.Total, c.Count, c.Bytes}, got, c.Call)
				if c.Time.Total != 0 {
					assert.InEpsilon(t, float64(c.Time.Total), float64(got[0]), 1e-9, c.Call)
				}
			}
			require.Len(t, perBlock, len(job.Ranks))
			wantCtr := make([]int64, len(counters))
			for i, r := range job.Ranks {
				k := key{strconv.Itoa(r.Rank.Rank), strconv.Itoa(r.Thread)}
				assert.Equal(t, job.Summary.Ranks[i].MPI+job.Summary.Ranks[i].Init+job.Summary.Ranks[i].Compute, perBlock[k], r.Label)
				for _, e := range r.Graph.Edges {
					for k, c := range e.Counters {
						wantCtr[k] += c
					}
				}
			}
			assert.Equal(t, wantCtr, counters)
		})
	}
}

// TestPprofTool reads the export with go tool pprof: -top by time lists
// every MPI call with its total time over the ranks.
func TestPprofTool(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	job := treeJob(t, treeCases[1])
	path := filepath.Join(t.TempDir(), "job.pb.gz")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WritePprof(f, NewCallTree(job)))
	require.NoError(t, f.Close())
	cmd := exec.Command(goBin, "tool", "pprof", "-top", "-sample_index=time", "-unit=ns", "-nodefraction=0", "-nodecount=1000000", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("no such tool")) {
		t.Skip("go tool pprof is not available")
	}
	require.NoError(t, err, "%s", out)
	// "   flat  flat%   sum%        cum   cum%  name"
	row := regexp.MustCompile(`(?m)^\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.+?)\s*$`)
	flat := map[string]int64{}
	for _, m := range row.FindAllStringSubmatch(string(out), -1) {
		v, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err)
		flat[m[3]] = v
	}
	for _, c := range job.Calls {
		require.Contains(t, flat, c.Call, "%s", out)
		assert.Equal(t, c.Time.Total, flat[c.Call], c.Call)
	}
	var compute int64
	for _, r := range job.Summary.Ranks {
		compute += r.Compute
	}
	assert.Equal(t, compute, flat[ComputeName])
}
