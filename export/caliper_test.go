package export

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/analysis"
)

// caliperDoc is the Caliper json-split export, as Hatchet's reader takes
// it apart: the four sections, the rest being the run's metadata.
type caliperDoc struct {
	Data     [][]json.Number
	Columns  []string
	ColMeta  []map[string]any
	Nodes    []map[string]any
	Metadata map[string]any
}

func parseCaliper(t *testing.T, data []byte) caliperDoc {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &top), "valid JSON")
	var doc caliperDoc
	dec := func(key string, v any) {
		raw, ok := top[key]
		require.True(t, ok, "top-level key %q", key)
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		require.NoError(t, d.Decode(v), key)
		delete(top, key)
	}
	dec("data", &doc.Data)
	dec("columns", &doc.Columns)
	dec("column_metadata", &doc.ColMeta)
	dec("nodes", &doc.Nodes)
	doc.Metadata = map[string]any{}
	for k, raw := range top {
		var v any
		require.NoError(t, json.Unmarshal(raw, &v), k)
		doc.Metadata[k] = v
	}
	return doc
}

// rankTotals are the time of each rank (its threads added up) and each
// call's time, calls and bytes over the ranks, from the job's summary.
func rankTotals(job *analysis.Job) (map[int64]int64, map[string][3]int64) {
	ranks := map[int64]int64{}
	for _, r := range job.Summary.Ranks {
		ranks[int64(r.Rank)] += r.Init + r.MPI + r.Compute
	}
	calls := map[string][3]int64{}
	for _, c := range job.Calls {
		calls[c.Call] = [3]int64{c.Time.Total, c.Count, c.Bytes}
	}
	return ranks, calls
}

func TestCaliper(t *testing.T) {
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			job := treeJob(t, tc)
			tree := NewCallTree(job)
			var buf bytes.Buffer
			require.NoError(t, Caliper(&buf, tree))
			doc := parseCaliper(t, buf.Bytes())

			cols := append([]string{"path", "mpi.rank", "sum#time.duration", "inclusive#sum#time.duration", "calls", "bytes"}, job.Header.Counters...)
			assert.Equal(t, cols, doc.Columns)
			require.Len(t, doc.ColMeta, len(cols))
			for i, m := range doc.ColMeta {
				// Hatchet maps a column that is not a value through the
				// nodes: only the path may be one.
				assert.Equal(t, i != 0, m["is_value"], cols[i])
			}

			// Nodes: the tree, parents first, one root.
			require.Len(t, doc.Nodes, len(tree.Nodes))
			for i, n := range doc.Nodes {
				assert.Equal(t, "path", n["column"])
				assert.Equal(t, tree.Nodes[i].Name, n["label"])
				p, ok := n["parent"]
				if i == 0 {
					assert.False(t, ok, "the root has no parent")
					continue
				}
				require.True(t, ok, "only the root has no parent")
				pi, err := p.(json.Number).Int64()
				require.NoError(t, err)
				assert.Less(t, pi, int64(i), "parents before children")
				assert.Equal(t, int64(tree.Nodes[i].Parent), pi)
			}

			// Rows: valid node indices, one per node and rank, times
			// adding up to the ranks' and calls' totals.
			wantRank, wantCall := rankTotals(job)
			gotRank := map[int64]float64{}
			gotCall := map[string][3]float64{}
			seen := map[[2]int64]bool{}
			for _, row := range doc.Data {
				require.Len(t, row, len(cols))
				node, err := row[0].Int64()
				require.NoError(t, err)
				require.GreaterOrEqual(t, node, int64(0))
				require.Less(t, node, int64(len(doc.Nodes)))
				rank, err := row[1].Int64()
				require.NoError(t, err)
				assert.Contains(t, wantRank, rank)
				k := [2]int64{node, rank}
				assert.False(t, seen[k], "one row per node and rank: %v", k)
				seen[k] = true
				num := func(i int) float64 {
					v, err := row[i].Float64()
					require.NoError(t, err, cols[i])
					return v
				}
				excl, incl := num(2), num(3)
				assert.GreaterOrEqual(t, incl, excl)
				if node == 0 {
					assert.InEpsilon(t, float64(wantRank[rank])/1e9, incl, 1e-9, "rank %d inclusive at the root", rank)
				}
				gotRank[rank] += excl
				label := doc.Nodes[node]["label"].(string)
				if strings.HasPrefix(label, "MPI_") {
					c := gotCall[callOf(label)]
					c[0] += excl
					c[1] += num(4)
					c[2] += num(5)
					gotCall[callOf(label)] = c
				} else {
					assert.Zero(t, num(4), "calls only on MPI calls")
				}
				for i := 6; i < len(cols); i++ {
					if label != ComputeName {
						assert.Zero(t, num(i), "counters only on compute")
					}
				}
			}
			require.Len(t, gotRank, len(wantRank))
			for r, ns := range wantRank {
				assert.InEpsilon(t, float64(ns)/1e9, gotRank[r], 1e-9, "rank %d", r)
			}
			require.Len(t, gotCall, len(wantCall))
			for c, w := range wantCall {
				g := gotCall[c]
				if w[0] != 0 {
					assert.InEpsilon(t, float64(w[0])/1e9, g[0], 1e-9, c)
				}
				assert.Equal(t, float64(w[1]), g[1], c)
				assert.Equal(t, float64(w[2]), g[2], c)
			}

			// The job's description, as run metadata.
			want := map[string]any{"command": "./halo 500", "executable": "/opt/apps/halo", "ranks": float64(tc.ranks),
				"mpi_library": "Open MPI v4.1.4", "mpi_version": "3.1", "job_id": "gen", "profiler": "mpiflow",
				"start_time": "2023-11-14T22:13:20Z", "launchdate": float64(1_700_000_000),
				"wallclock": float64(job.Header.Wallclock) / 1e9, "incomplete": false,
				"hosts": float64(len(job.Header.DistinctHosts())), "counters": strings.Join(job.Header.Counters, ",")}
			assert.Equal(t, want, doc.Metadata)
		})
	}
}

// caliperReader builds what Hatchet's Caliper json-split reader builds
// from a file: the sections, the renamed columns, the graph from the
// nodes' parents, and (with pandas) the data frame of rows joined to the
// nodes; it prints the time per rank and the time, calls and bytes per
// MPI call (the label up to " at ") as JSON. It exits with 3 when asked
// for pandas and pandas is missing.
const caliperReader = `
import json, sys
want_pandas = sys.argv[2] == "pandas"
if want_pandas:
    try:
        import pandas as pd
    except ImportError:
        sys.exit(3)
with open(sys.argv[1]) as f:
    obj = json.load(f)
data, cols, meta, nodes = obj["data"], obj["columns"], obj["column_metadata"], obj["nodes"]
metadata = {k: v for k, v in obj.items() if k not in ("data", "columns", "column_metadata", "nodes")}
assert "source.function#callpath.address" not in cols and "path" in cols
rename = {"path": "nid", "mpi.rank": "rank", "sum#time.duration": "time", "inclusive#sum#time.duration": "time (inc)"}
cols = [rename.get(c, c) for c in cols]
metrics = [c for c, m in zip(cols, meta) if c != "rank" and m["is_value"] is True]
assert [c for c, m in zip(cols, meta) if m["is_value"] is False] == ["nid"]
children = {}
roots = []
for idx, n in enumerate(nodes):
    assert n["column"] == "path"
    if "parent" not in n:
        roots.append(idx)
    else:
        assert n["parent"] < idx
        children.setdefault(n["parent"], []).append(idx)
call = lambda nid: nodes[nid]["label"].split(" at ")[0]
out = {"roots": len(roots), "metrics": metrics, "metadata": sorted(metadata), "ranks": {}, "calls": {}}
if want_pandas:
    df = pd.DataFrame(data, columns=cols)
    assert df.set_index(["nid", "rank"]).index.is_unique
    df = df.merge(pd.DataFrame({"nid": range(len(nodes)), "name": [n["label"] for n in nodes]}), on="nid")
    for rank, t in df.groupby("rank")["time"].sum().items():
        out["ranks"][str(rank)] = float(t)
    mpi = df[df["name"].str.startswith("MPI_")].copy()
    mpi["call"] = mpi["name"].str.split(" at ").str[0]
    for c, g in mpi.groupby("call"):
        out["calls"][c] = [float(g["time"].sum()), int(g["calls"].sum()), int(g["bytes"].sum())]
else:
    i = {c: k for k, c in enumerate(cols)}
    for row in data:
        r = str(row[i["rank"]])
        out["ranks"][r] = out["ranks"].get(r, 0.0) + row[i["time"]]
        nid = row[i["nid"]]
        if nodes[nid]["label"].startswith("MPI_"):
            v = out["calls"].setdefault(call(nid), [0.0, 0, 0])
            v[0] += row[i["time"]]; v[1] += row[i["calls"]]; v[2] += row[i["bytes"]]
json.dump(out, sys.stdout)
`

// TestCaliperPython reads the export as Hatchet's reader does, with
// Python's json and, where Debian's python3-pandas is installed, pandas:
// the totals per rank and per call are the job's.
func TestCaliperPython(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	job := treeJob(t, treeCases[2]) // threads and counters
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, Caliper(f, NewCallTree(job)))
	require.NoError(t, f.Close())
	script := filepath.Join(dir, "reader.py")
	require.NoError(t, os.WriteFile(script, []byte(caliperReader), 0o644))
	wantRank, wantCall := rankTotals(job)
	for _, mode := range []string{"json", "pandas"} {
		t.Run(mode, func(t *testing.T) {
			out, err := exec.Command(python, script, path, mode).Output()
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
				t.Skip("python3 has no pandas (Debian: python3-pandas)")
			}
			require.NoError(t, err, "%s", out)
			var got struct {
				Roots    int
				Metrics  []string
				Metadata []string
				Ranks    map[string]float64
				Calls    map[string][3]float64
			}
			require.NoError(t, json.Unmarshal(out, &got))
			assert.Equal(t, 1, got.Roots)
			assert.Equal(t, append([]string{"time", "time (inc)", "calls", "bytes"}, job.Header.Counters...), got.Metrics)
			assert.Contains(t, got.Metadata, "command")
			require.Len(t, got.Ranks, len(wantRank))
			for r, ns := range wantRank {
				assert.InEpsilon(t, float64(ns)/1e9, got.Ranks[jsonInt(r)], 1e-9, "rank %d", r)
			}
			require.Len(t, got.Calls, len(wantCall))
			for c, w := range wantCall {
				g := got.Calls[c]
				if w[0] != 0 {
					assert.InEpsilon(t, float64(w[0])/1e9, g[0], 1e-9, c)
				}
				assert.Equal(t, float64(w[1]), g[1], c)
				assert.Equal(t, float64(w[2]), g[2], c)
			}
		})
	}
}

func jsonInt(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
