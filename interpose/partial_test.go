package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// partialCase is one recording to write as a partial file.
type partialCase struct {
	key       string
	budget    int // most timing intervals
	bytes     int // timing budget, 0: the default
	events    int
	ncounters int
	seed      uint64
	buflen    int
}

// recordCase records a generated call sequence with the C recorder.
func recordCase(t testing.TB, tc partialCase) (*recorder, []recEvent) {
	t.Helper()
	rng := rand.New(rand.NewPCG(tc.seed, 1))
	var evs []recEvent
	if tc.events > 0 {
		evs = genEvents(rng, tc.events)
	}
	if tc.ncounters > 0 {
		cum := make([]int64, tc.ncounters)
		for i := range evs {
			in, out := make([]int64, tc.ncounters), make([]int64, tc.ncounters)
			for c := range cum {
				cum[c] += rng.Int64N(1000)
				in[c] = cum[c]
				cum[c] += rng.Int64N(100)
				out[c] = cum[c]
			}
			evs[i].CountersEnter, evs[i].CountersExit = in, out
		}
	}
	r, err := newRecorderBudget(tc.key, flowgraph.TimingBudget{Bytes: tc.bytes, Intervals: tc.budget}, tc.ncounters)
	require.NoError(t, err)
	for _, e := range evs {
		r.add(e)
	}
	return r, evs
}

func baseInfo(rank, size, thread int) partialInfo {
	return partialInfo{
		Rank: rank, Size: size, Thread: thread,
		Host: fmt.Sprintf("node%02d", rank), JobID: "4242", Exe: "halo",
		Argv:      []string{"./halo", "-n", "500"},
		StartUnix: 1_700_000_000_000_000_000, InitReal: 1_700_000_000_000_000_500, InitMono: 400, Wall: 123456,
		MPILib: "Open MPI v4.1.6", MPIVer: "3.1", Clock: "clock_gettime(CLOCK_MONOTONIC)",
		Names: testNames,
	}
}

// expectedRank is what the Go conversion writes for r (as finalize would,
// minus the dladdr lookup of sites), through the Go msgpack encoder.
func expectedRank(t *testing.T, r *recorder, in partialInfo) *flowgraph.Rank {
	t.Helper()
	rk := &flowgraph.Rank{Rank: in.Rank, Thread: in.Thread, Host: in.Host, Complete: in.Complete, Graph: r.graph(in.Names)}
	start := in.StartUnix
	if start == 0 {
		start = in.InitReal
	}
	if rk.Graph.NumEvents > 0 {
		rk.Start = in.InitReal + (r.recT0() - in.InitMono) - start
	}
	for i, s := range in.Sites {
		if i < len(rk.Graph.Sites) && s.Obj != "" {
			rk.Graph.Sites[i].Object, rk.Graph.Sites[i].Offset = s.Obj, s.Off
		}
	}
	b, _, err := flowgraph.EncodeRank(rk)
	require.NoError(t, err)
	want, err := flowgraph.DecodeRank(b)
	require.NoError(t, err)
	return want
}

// readPartial opens a partial file and returns its header and only block.
func readPartial(t *testing.T, path string) (flowgraph.Header, *flowgraph.Rank) {
	t.Helper()
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Index, 1)
	rk, err := f.ReadRank(0)
	require.NoError(t, err)
	return f.Header, rk
}

// callSequence reconstructs the calls of g in order.
func callSequence(t *testing.T, g *flowgraph.Graph) []string {
	t.Helper()
	var out []string
	it := g.Events()
	for it.Next() {
		out = append(out, g.Nodes[it.Event().Node].Key.Call)
	}
	require.NoError(t, it.Err())
	return out
}

func eventCalls(evs []recEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, testNames[e.Call])
	}
	return out
}

// checkPartial writes the partial file of one case and compares it with
// the Go conversion and with the recorded events.
func checkPartial(t *testing.T, tc partialCase) {
	r, evs := recordCase(t, tc)
	defer r.free()
	in := baseInfo(3, 8, 0)
	in.BufLen = tc.buflen
	if tc.ncounters > 0 {
		in.Counters = strings.TrimSuffix(strings.Repeat("c,", tc.ncounters), ",")
	}
	dir := t.TempDir()
	path, err := r.writePartial(in, dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "halo.4242.rank3.partial.mpiflow"), path)
	h, got := readPartial(t, path)

	want := expectedRank(t, r, in)
	if tc.bytes > 0 {
		// At MPI_Finalize the last interval is merged in if it does not
		// fit, while a partial file holds it as it stands: the times
		// agree at the end.
		gt, wt := got.Graph.Anchors, want.Graph.Anchors
		require.NotEmpty(t, gt)
		assert.Equal(t, wt[len(wt)-1], gt[len(gt)-1])
		assert.LessOrEqual(t, got.Graph.Timing.Spacing(), want.Graph.Timing.Spacing())
		got.Graph.Timing, got.Graph.Anchors = want.Graph.Timing, want.Graph.Anchors
	}
	assert.Equal(t, want, got)
	assert.False(t, got.Complete)
	assert.Equal(t, int64(len(evs)), got.Graph.NumEvents)
	assert.Equal(t, eventCalls(evs), callSequence(t, &got.Graph))

	assert.True(t, h.Incomplete)
	assert.Equal(t, flowgraph.FormatVersion, h.Version)
	assert.Equal(t, "4242", h.JobID)
	assert.Equal(t, in.Argv, h.Command)
	assert.Equal(t, in.StartUnix, h.StartUnixNano)
	assert.Equal(t, in.Wall, h.Wallclock)
	assert.Equal(t, 8, h.NumRanks)
	assert.Equal(t, []string{"", "", "", "node03", "", "", "", ""}, h.Hosts)
	assert.Equal(t, in.MPILib, h.MPILibrary)
	assert.Equal(t, in.MPIVer, h.MPIVersion)
	assert.Equal(t, in.Clock, h.ClockSource)
	assert.Equal(t, keyFields(r.keyFlags()), h.KeyFields)
	if tc.ncounters > 0 {
		assert.Len(t, h.Counters, tc.ncounters)
	} else {
		assert.Nil(t, h.Counters)
	}
	// no temporary file is left behind
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1)
}

func TestPartialMatchesConversion(t *testing.T) {
	tests := []partialCase{
		{key: "", events: 0, seed: 1},
		{key: "", events: 1, seed: 2},
		{key: "call,site", budget: 4, events: 3000, seed: 3},
		{key: "call", budget: 7, events: 5000, seed: 4},
		{key: "call,site,bytes,partner,comm", budget: 16, events: 5000, seed: 5},
		{key: "call,partner", budget: 2, events: 20000, seed: 6, buflen: 4096},
		{key: "", budget: 0, events: 3000, ncounters: 3, seed: 7},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.key, tt.events), func(t *testing.T) { checkPartial(t, tt) })
	}
}

// TestPartialRandom varies key, timing budget, event count, counters and
// buffer size over many seeds.
func TestPartialRandom(t *testing.T) {
	keys := []string{"", "call", "call,bytes", "call,partner,comm", "call,site,bytes,partner,comm"}
	rng := rand.New(rand.NewPCG(99, 99))
	for seed := uint64(0); seed < 60; seed++ {
		tc := partialCase{
			key:       keys[rng.IntN(len(keys))],
			budget:    rng.IntN(40),
			events:    rng.IntN(4000),
			ncounters: rng.IntN(3),
			seed:      seed,
		}
		if rng.IntN(2) == 0 {
			tc.buflen = 4096 + rng.IntN(100)
		}
		if rng.IntN(3) == 0 {
			tc.bytes = 1<<10 + rng.IntN(4<<10) // merged, and capped with wide keys
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkPartial(t, tc) })
	}
}

// TestPartialStrings checks long strings (msgpack str8, str16 and str32),
// resolved sites, thread file names and the process id as job id.
func TestPartialStrings(t *testing.T) {
	r, evs := recordCase(t, partialCase{key: "call,site", events: 500, seed: 11})
	defer r.free()
	in := baseInfo(1, 2, 2)
	in.JobID = ""
	in.Names = []string{strings.Repeat("A", 40), strings.Repeat("B", 300), strings.Repeat("C", 70000), "MPI_Allreduce", "MPI_Wait", "MPI_Finalize"}
	in.Host = strings.Repeat("h", 255)
	in.Argv = []string{strings.Repeat("x", 100000), "", "ü"}
	in.Sites = []partialSite{{Obj: "/usr/lib/libfoo.so", Off: 0x1234}, {}, {Obj: strings.Repeat("/d", 200), Off: 1 << 40}}
	in.Rusage = true
	dir := t.TempDir()
	path, err := r.writePartial(in, dir)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("halo.%d.rank1.t2.partial.mpiflow", os.Getpid()), filepath.Base(path))
	h, got := readPartial(t, path)
	assert.Equal(t, in.Argv, h.Command)
	assert.Equal(t, fmt.Sprint(os.Getpid()), h.JobID)
	assert.Equal(t, []string{"", in.Host}, h.Hosts)
	assert.Positive(t, got.MaxRSS)
	assert.GreaterOrEqual(t, got.UserTime+got.SysTime, int64(0))
	want := expectedRank(t, r, in)
	want.UserTime, want.SysTime, want.MaxRSS = got.UserTime, got.SysTime, got.MaxRSS
	assert.Equal(t, want, got)
	require.GreaterOrEqual(t, len(got.Graph.Sites), 3)
	assert.Equal(t, "/usr/lib/libfoo.so", got.Graph.Sites[0].Object)
	assert.Equal(t, "", got.Graph.Sites[1].Object)
	assert.Equal(t, uint64(1<<40), got.Graph.Sites[2].Offset)
	var calls []string
	for _, e := range evs {
		calls = append(calls, in.Names[e.Call])
	}
	assert.Equal(t, calls, callSequence(t, &got.Graph))
}

// TestPartialFailed checks recorders that ran out of memory.
func TestPartialFailed(t *testing.T) {
	t.Run("consistent", func(t *testing.T) {
		r, evs := recordCase(t, partialCase{events: 2000, budget: 8, seed: 12})
		defer r.free()
		r.setFailed()
		in := baseInfo(0, 1, 0)
		path, err := r.writePartial(in, t.TempDir())
		require.NoError(t, err)
		_, got := readPartial(t, path)
		assert.Equal(t, expectedRank(t, r, in), got)
		assert.Equal(t, eventCalls(evs), callSequence(t, &got.Graph))
	})
	t.Run("sequence number lost", func(t *testing.T) {
		for seed := uint64(20); seed < 30; seed++ {
			r, evs := recordCase(t, partialCase{events: 1000 + int(seed), budget: 4, seed: seed})
			require.NoError(t, r.dropLastSeq())
			// The partial file and the graph written at finalize drop
			// the event whose transition was lost, alike.
			g := r.graph(testNames)
			require.NoError(t, g.Validate())
			path, err := r.writePartial(baseInfo(0, 1, 0), t.TempDir())
			require.NoError(t, err)
			_, got := readPartial(t, path)
			n := len(evs) - 1
			assert.Equal(t, int64(n), got.Graph.NumEvents)
			assert.Equal(t, eventCalls(evs[:n]), callSequence(t, &got.Graph))
			assert.Equal(t, g, got.Graph)
			r.free()
		}
	})
}

func TestPartialWriteErrors(t *testing.T) {
	r, _ := recordCase(t, partialCase{events: 100, seed: 13})
	defer r.free()
	file := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name string
		dir  string
		want syscall.Errno
	}{
		{"missing directory", filepath.Join(t.TempDir(), "nope"), syscall.ENOENT},
		{"file as directory", file, syscall.ENOTDIR},
		{"name too long", "/" + strings.Repeat("d", 5000), syscall.ENAMETOOLONG},
		{"empty directory name", "", syscall.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.writePartial(baseInfo(0, 1, 0), tt.dir)
			assert.True(t, errors.Is(err, tt.want), "got %v, want %v", err, tt.want)
		})
	}
	t.Run("read-only directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o555))
		defer os.Chmod(dir, 0o755)
		if os.Geteuid() == 0 {
			dir = "/proc/self" // root ignores the mode; procfs refuses new files
		}
		_, err := r.writePartial(baseInfo(0, 1, 0), dir)
		require.Error(t, err)
		var errno syscall.Errno
		assert.True(t, errors.As(err, &errno))
	})
}

// TestPartialMerge joins the partial files of three of four ranks (one
// with a second thread) into one incomplete job file; and those that every
// rank wrote at MPI_Finalize (the fallback when the job file could not be
// written) into a complete one.
func TestPartialMerge(t *testing.T) {
	for _, complete := range []bool{false, true} {
		t.Run(fmt.Sprint("complete=", complete), func(t *testing.T) { testPartialMerge(t, complete) })
	}
}

func testPartialMerge(t *testing.T, complete bool) {
	dir := t.TempDir()
	var paths []string
	want := map[[2]int]*flowgraph.Rank{}
	ranks := [][2]int{{0, 0}, {2, 0}, {2, 1}, {3, 0}}
	hosts := []string{"node00", "", "node02", "node03"}
	if complete {
		ranks = append(ranks, [2]int{1, 0})
		hosts[1] = "node01"
	}
	for i, rt := range ranks {
		r, _ := recordCase(t, partialCase{events: 500 * (i + 1), budget: 16, seed: uint64(40 + i)})
		in := baseInfo(rt[0], 4, rt[1])
		in.Complete = complete
		p, err := r.writePartial(in, dir)
		require.NoError(t, err)
		paths = append(paths, p)
		want[rt] = expectedRank(t, r, in)
		r.free()
	}
	dst := filepath.Join(dir, "halo.4242.mpiflow")
	require.NoError(t, flowgraph.Merge(dst, paths))
	f, err := flowgraph.Open(dst)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, !complete, f.Header.Incomplete)
	assert.Equal(t, 4, f.Header.NumRanks)
	assert.Equal(t, hosts, f.Header.Hosts)
	require.Len(t, f.Index, len(ranks))
	for i, e := range f.Index {
		rk, err := f.ReadRank(i)
		require.NoError(t, err)
		assert.Equal(t, want[[2]int{e.Rank, e.Thread}], rk)
	}
}

// TestPartialInSignalHandler writes the file from a SIGUSR2 handler, the
// way the crash paths use it, and checks it equals the normal write.
func TestPartialInSignalHandler(t *testing.T) {
	r, evs := recordCase(t, partialCase{key: "call,site,partner", budget: 32, events: 4000, seed: 50})
	defer r.free()
	for _, buflen := range []int{0, 4096} {
		in := baseInfo(5, 6, 0)
		in.InHandler, in.BufLen = true, buflen
		path, err := r.writePartial(in, t.TempDir())
		require.NoError(t, err)
		_, got := readPartial(t, path)
		assert.Equal(t, expectedRank(t, r, in), got)
		assert.Equal(t, eventCalls(evs), callSequence(t, &got.Graph))
	}
}

// BenchmarkPartialWrite writes the partial file of a 100000-event recording.
func BenchmarkPartialWrite(b *testing.B) {
	r, _ := recordCase(b, partialCase{key: "call,site,partner", events: 100000, seed: 60})
	defer r.free()
	dir := b.TempDir()
	in := baseInfo(0, 1, 0)
	for b.Loop() {
		if _, err := r.writePartial(in, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPartialRegions checks that the pseudo call sites of MPI_Pcontrol
// (regions.h) are written back at their caller with their level and
// region, as the conversion at MPI_Finalize does.
func TestPartialRegions(t *testing.T) {
	r, err := newRecorder("call,site", 0, 0)
	require.NoError(t, err)
	defer r.free()
	const region = 1 << 63 // MF_REGION_SITE: region 0; region | i: region i
	for i, e := range []recEvent{
		{Call: 0, Site: 0x4000}, {Call: 1, Site: region}, {Call: 2, Site: 0x4100}, {Call: 1, Site: region | 1},
		{Call: 1, Site: region | 2}, {Call: 3, Site: 0x4200},
	} {
		e.Partner, e.Comm = -1, -1
		e.Enter, e.Exit = int64(100*i), int64(100*i+10)
		r.add(e)
	}
	in := baseInfo(0, 1, 0)
	in.Names = []string{"MPI_Init", "MPI_Pcontrol", "MPI_Barrier", "MPI_Finalize"}
	in.Regions = []partialRegion{{Caller: 0x5000, Level: 1, Name: "solve"}, {Caller: 0x5100, Level: -1, Name: "solve"}, {Caller: 0x5200}}
	path, err := r.writePartial(in, t.TempDir())
	require.NoError(t, err)
	_, got := readPartial(t, path)
	type site struct {
		addr   uint64
		level  int
		region string
	}
	sites := func(ss []flowgraph.CallSite) []site {
		var out []site
		for _, s := range ss {
			out = append(out, site{s.Addr, s.Level, s.Region})
		}
		return out
	}
	want := []site{{0x4000, 0, ""}, {0x5000, 1, "solve"}, {0x4100, 0, ""}, {0x5100, -1, "solve"}, {0x5200, 0, ""}, {0x4200, 0, ""}}
	assert.Equal(t, want, sites(got.Graph.Sites), "partial file")
	g := r.graph(in.Names)
	convertRegions(g.Sites, in.Regions)
	assert.Equal(t, want, sites(g.Sites), "conversion")
}
