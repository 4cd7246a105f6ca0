package analysis

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/loops"
)

// testLoop is a loop of a test program: iters iterations of its calls,
// the k-th at line line+k of app.c; every call and every compute phase
// after one takes ns, times slow, plus jitter times the rank.
type testLoop struct {
	line  int
	calls []string
	iters int
	ns    int64
	slow  int64 // 0: 1
	// heavy, when above 0, is 1 + the rank whose compute phase after the
	// loop's last call takes heavyNs more in every iteration; the last
	// call of every other rank waits as much longer for it (the
	// imbalance a collective absorbs).
	heavy   int
	heavyNs int64
}

// testProgram is what every rank of a test job runs: MPI_Init, the loops
// one after the other, MPI_Finalize.
type testProgram struct {
	ranks  int
	loops  []testLoop
	jitter int64 // ns added per rank to each call and phase
	// roles, if set, gives each rank its loops instead (indexes into
	// loops).
	roles      func(rank int) []int
	command    string
	incomplete bool
	initNs     int64 // MPI_Init's time; 0: 1000
	// busy, when its end is above 0, are the iterations [busy[0],
	// busy[1]) of each loop in which every call and phase takes half as
	// long again: a machine busy for a while, as when ranks share cores.
	busy [2]int
}

// loadProgram writes p as a job file and loads it as mpiflow diff does.
func loadProgram(t *testing.T, p testProgram) *Job {
	t.Helper()
	h := flowgraph.Header{NumRanks: p.ranks, KeyFields: []string{"call", "site"}, Command: []string{"./app", p.command},
		MPILibrary: "Open MPI", MPIVersion: "4.1.4", Incomplete: p.incomplete}
	var ranks []*flowgraph.Rank
	for r := range p.ranks {
		b := flowgraph.NewBuilder(0, 0)
		var now int64
		call := func(call string, line int, ns, gap int64) {
			site := b.Site(flowgraph.CallSite{Addr: uint64(0x1000 + line), Function: "main", File: "/src/app.c", Line: line})
			b.Add(flowgraph.Call{Key: flowgraph.NodeKey{Call: call, Site: site, Partner: -1, Comm: -1}, Enter: now, Exit: now + ns, Partner: -1, Bytes: 8})
			now += ns + gap
		}
		add := func(c string, line int, ns int64) { call(c, line, ns, ns) } // the call, then as long a compute phase
		add("MPI_Init", 1, cmp.Or(p.initNs, 1000))
		which := make([]int, len(p.loops))
		for i := range which {
			which[i] = i
		}
		if p.roles != nil {
			which = p.roles(r)
		}
		for _, i := range which {
			l := p.loops[i]
			for i := range l.iters {
				ns := (l.ns + p.jitter*int64(r)) * max(l.slow, 1)
				if i >= p.busy[0] && i < p.busy[1] {
					ns += ns / 2
				}
				for k, c := range l.calls {
					switch {
					case l.heavy == 0 || k < len(l.calls)-1:
						add(c, l.line+k, ns)
					case l.heavy == r+1:
						call(c, l.line+k, ns, ns+l.heavyNs)
					default:
						call(c, l.line+k, ns+l.heavyNs, ns)
					}
				}
			}
		}
		add("MPI_Finalize", 999, 100)
		h.Hosts = append(h.Hosts, "node1")
		h.Wallclock = max(h.Wallclock, now)
		ranks = append(ranks, &flowgraph.Rank{Rank: r, Complete: !p.incomplete, Graph: b.Graph()})
	}
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	job, err := Load(path, Options{NoSequences: true, Variation: true})
	require.NoError(t, err)
	return job
}

// assertNoise asserts that it is noise, or the launcher's start-up or
// shut-down.
func assertNoise(t *testing.T, it *DiffItem) {
	t.Helper()
	switch {
	case it.Call == "MPI_Init":
		assert.Equal(t, "start-up", it.Verdict, it.Name)
	case it.Call == "MPI_Finalize":
		assert.Equal(t, "shut-down", it.Verdict, it.Name)
	default:
		assert.Equal(t, "noise", it.Verdict, it.Name)
	}
}

var (
	exchange = testLoop{line: 10, calls: []string{"MPI_Irecv", "MPI_Send", "MPI_Wait"}, iters: 40, ns: 100}
	reduce   = testLoop{line: 20, calls: []string{"MPI_Allreduce", "MPI_Bcast"}, iters: 30, ns: 200}
	extra    = testLoop{line: 30, calls: []string{"MPI_Barrier", "MPI_Reduce"}, iters: 10, ns: 50}
	tiny     = testLoop{line: 40, calls: []string{"MPI_Comm_rank"}, iters: 1, ns: 2}
	// Loops long enough for their variation within a run (minLoopPart).
	longExchange = testLoop{line: 10, calls: exchange.calls, iters: 400, ns: 100}
	longReduce   = testLoop{line: 20, calls: reduce.calls, iters: 300, ns: 200}
	bigExtra     = testLoop{line: 30, calls: extra.calls, iters: 40, ns: 200}
)

// heavyOn returns l with rank computing ns more per iteration.
func heavyOn(l testLoop, rank int, ns int64) testLoop { l.heavy, l.heavyNs = rank+1, ns; return l }

// slowed returns l with its calls and phases slow times as long.
func slowed(l testLoop, slow int64) testLoop { l.slow = slow; return l }

// heavierFirst checks a diff in which rank's compute grew in the exchange
// loop, on a machine busy at other times: the loop first, the rank named
// above its own variation within the runs.
func heavierFirst(rank int) func(t *testing.T, d *JobDiff) {
	return func(t *testing.T, d *JobDiff) {
		first := d.Items[0]
		assert.Contains(t, first.Name, "app.c:1")
		require.NotNil(t, first.Shift)
		assert.True(t, first.Shift.Stands)
		assert.Equal(t, rank, first.Shift.Rank)
		assert.Positive(t, first.Shift.Noise, "the rank's compute varies within the runs")
		assert.Contains(t, first.Verdict, "on rank "+strconv.Itoa(rank))
	}
}

// findItem returns the item of kind whose name contains s.
func findItem(t *testing.T, d *JobDiff, kind, s string) *DiffItem {
	t.Helper()
	for i := range d.Items {
		if it := &d.Items[i]; it.Kind == kind && strings.Contains(it.Name, s) {
			return it
		}
	}
	require.Failf(t, "no item", "no %s item named %q", kind, s)
	return nil
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name  string
		a, b  testProgram
		check func(t *testing.T, d *JobDiff)
	}{
		{"one loop 2x slower comes first with ratio 2",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{slowed(exchange, 2), reduce}},
			func(t *testing.T, d *JobDiff) {
				assert.False(t, d.PerRank)
				first := d.Items[0]
				assert.Equal(t, ItemLoop, first.Kind)
				assert.Contains(t, first.Name, "app.c:1", "the exchange loop (lines 10-12)")
				assert.Equal(t, StatusMatched, first.Status)
				assert.InDelta(t, 2, first.Ratio, 1e-9)
				assert.InDelta(t, 2, first.IterationRatio, 1e-9)
				assert.False(t, first.WithinNoise)
				assert.False(t, first.IterationWithinNoise, "each iteration got slower")
				require.NotNil(t, first.A)
				require.NotNil(t, first.B)
				assert.InDelta(t, first.B.Time-first.A.Time, first.Change.Time, 1e-6)
				assert.InDelta(t, 4*40, first.A.Iterations, 1e-9, "summed over the 4 ranks")
				assert.Equal(t, "0-3", first.A.RankList)
				assert.Equal(t, 3, first.A.MaxRank, "the rank of most jitter")
				assert.InDelta(t, 50, first.A.MPIPct, 0.5, "calls and phases take as long (but the phase leaving the loop)")
				// The unchanged loop: no change, within noise.
				r := findItem(t, d, ItemLoop, "app.c:2")
				assert.Zero(t, r.Change.Time)
				assert.InDelta(t, 1, r.Ratio, 1e-12)
				assert.True(t, r.WithinNoise)
				// The calls of the slowed loop got 2x slower too.
				s := findItem(t, d, ItemCall, "MPI_Send")
				assert.InDelta(t, 2, s.Ratio, 1e-9)
				assert.Equal(t, "main app.c:11", s.Site)
				// Sorted by absolute change of time.
				for i := 1; i < len(d.Items); i++ {
					assert.GreaterOrEqual(t, abs(d.Items[i-1].Change.Time), abs(d.Items[i].Change.Time), "item %d", i)
				}
			}},
		{"a run twice as long: the loop's time doubles, its time per iteration within noise",
			testProgram{ranks: 4, jitter: 5, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 4, jitter: 5, loops: []testLoop{{line: 10, calls: exchange.calls, iters: 80, ns: 100}, reduce}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.InDelta(t, 2, it.Ratio, 0.05)
				assert.False(t, it.WithinNoise)
				assert.InDelta(t, 1, it.IterationRatio, 0.05)
				assert.Positive(t, it.IterationNoise, "the ranks' jitter")
				assert.True(t, it.IterationWithinNoise)
			}},
		{"identical jobs: every change within noise",
			testProgram{ranks: 3, jitter: 5, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 3, jitter: 5, loops: []testLoop{exchange, reduce}},
			func(t *testing.T, d *JobDiff) {
				require.NotEmpty(t, d.Items)
				for _, it := range d.Items {
					assert.Equal(t, StatusMatched, it.Status, it.Name)
					assert.True(t, it.WithinNoise, it.Name)
					assert.Zero(t, it.Change.Time, it.Name)
					assertNoise(t, &it)
				}
				require.Len(t, d.Groups, 1)
				assert.Equal(t, MatchSignature, d.Groups[0].By)
				assert.True(t, d.Change.SameCommand)
				assert.True(t, d.Change.SameMPI)
				assert.InDelta(t, 1, d.Change.WallclockRatio, 1e-12)
			}},
		{"a small change within the ranks' spread is noise",
			testProgram{ranks: 4, jitter: 20, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 4, jitter: 20, loops: []testLoop{{line: 10, calls: exchange.calls, iters: 40, ns: 101}, reduce}},
			func(t *testing.T, d *JobDiff) {
				it := d.Items[0]
				assert.Contains(t, it.Name, "app.c:1")
				assert.Greater(t, it.Change.Time, 0.0)
				assert.Greater(t, it.Noise, it.Change.Time/4, "the mean per rank changed less than the spread")
				assert.True(t, it.WithinNoise)
			}},
		{"the heavy rank moved: the loop's compute shifted from rank 1 to rank 2, loop first, rank 1 named",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{heavyOn(exchange, 1, 300), reduce}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{heavyOn(exchange, 2, 300), reduce}},
			func(t *testing.T, d *JobDiff) {
				first := d.Items[0]
				assert.Equal(t, ItemLoop, first.Kind)
				assert.Contains(t, first.Name, "app.c:1")
				assert.True(t, first.WithinNoise, "every rank still takes as long in the loop")
				require.NotNil(t, first.Shift)
				assert.True(t, first.Shift.Stands)
				assert.Contains(t, []int{1, 2}, first.Shift.Rank)
				assert.InDelta(t, 300*39, abs(first.Shift.Change), 1, "the heavy phase of 40 iterations, the last leaving the loop")
				assert.Contains(t, first.Verdict, "changed on rank ")
				// The waits moved too (rank 1 now waits): shown, sorted by their total.
				w := findItem(t, d, ItemCall, "MPI_Wait")
				require.NotNil(t, w.Shift)
				assert.True(t, w.Shift.Stands)
				r := findItem(t, d, ItemLoop, "app.c:2")
				assert.False(t, r.Shift != nil && r.Shift.Stands, "the other loop did not move")
			}},
		{"a shift under a hundredth of a rank's time is no finding",
			// MPI_Comm_rank waits 10 ns for the heavy rank: x6 on rank 1.
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{exchange, reduce, heavyOn(tiny, 1, 10)}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{exchange, reduce, heavyOn(tiny, 2, 10)}},
			func(t *testing.T, d *JobDiff) {
				for _, it := range d.Items {
					require.NotNil(t, it.Shift, it.Name)
					assert.False(t, it.Shift.Stands, it.Name)
					assertNoise(t, &it)
				}
			}},
		{"the heavy rank removed: the loop got faster on every rank, rank 1's compute named",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{heavyOn(exchange, 1, 300), reduce}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{exchange, reduce}},
			func(t *testing.T, d *JobDiff) {
				first := d.Items[0]
				assert.Contains(t, first.Name, "app.c:1")
				assert.False(t, first.WithinNoise)
				require.NotNil(t, first.Shift)
				assert.True(t, first.Shift.Stands)
				assert.Equal(t, 1, first.Shift.Rank)
				assert.InDelta(t, -300*39, first.Shift.Change, 1, "the last heavy phase leaves the loop")
				assert.Equal(t, "changed, most on rank 1", first.Verdict)
			}},
		{"ranks in step (no spread): a change under a hundredth of a rank's time is noise, MPI_Init and MPI_Finalize last",
			testProgram{ranks: 2, loops: []testLoop{{line: 10, calls: exchange.calls, iters: 40, ns: 1000}}},
			testProgram{ranks: 2, initNs: 900000, loops: []testLoop{{line: 10, calls: exchange.calls, iters: 40, ns: 1005}}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.Positive(t, it.Change.Time)
				assert.True(t, it.WithinNoise, "0.5%% of the loop's time")
				assert.Equal(t, "noise", it.Verdict)
				assert.NotEqual(t, "MPI_Init", d.Items[0].Call)
				last := d.Items[len(d.Items)-2:]
				assert.ElementsMatch(t, []string{"MPI_Init", "MPI_Finalize"}, []string{last[0].Call, last[1].Call}, "the start-up 900x longer, yet last")
				init := findItem(t, d, ItemCall, "MPI_Init")
				assert.True(t, init.Launcher)
				assert.Equal(t, "start-up", init.Verdict)
			}},
		{"one program, the machine busy at other times and for longer: the change within the run's variation is noise",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange, longReduce}, busy: [2]int{0, 100}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange, longReduce}, busy: [2]int{100, 300}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.InDelta(t, 1.25/1.125, it.Ratio, 0.01, "a quarter of the run 1.5x slow, then a half")
				assert.InDelta(t, 0.5/1.25, it.B.Variation, 0.05, "B's parts: half 1, half 1.5 (mean 1.25)")
				assert.Greater(t, it.Change.Time, 0.05*it.A.Time, "more than the ranks' spread and the floor")
				for _, it := range d.Items {
					assert.True(t, it.WithinNoise, it.Name)
					assertNoise(t, &it)
				}
			}},
		{"half the run busy in both, B 1.5x as long: more calls are work, not noise, and the time per iteration is",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange}, busy: [2]int{0, 200}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{{line: 10, calls: exchange.calls, iters: 600, ns: 100}}, busy: [2]int{0, 300}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.InDelta(t, 1.5, it.Ratio, 0.01)
				assert.Greater(t, it.B.Variation*it.B.Time, it.Change.Time, "B's variation alone would cover the change")
				assert.False(t, it.WithinNoise)
				assert.True(t, it.IterationWithinNoise)
				assert.Equal(t, "changed, per iteration noise", it.Verdict)
				assert.False(t, findItem(t, d, ItemCall, "MPI_Send").WithinNoise, "1.5x the calls")
			}},
		{"2 ranks, both 2x slower: the program changed, no rank named",
			testProgram{ranks: 2, jitter: 1, loops: []testLoop{exchange}},
			testProgram{ranks: 2, jitter: 1, loops: []testLoop{slowed(exchange, 2)}},
			func(t *testing.T, d *JobDiff) {
				first := d.Items[0]
				assert.Contains(t, first.Name, "app.c:1")
				require.NotNil(t, first.Shift)
				assert.False(t, first.Shift.Stands)
				assert.Equal(t, "changed", first.Verdict)
			}},
		{"2 ranks, rank 1 heavier: rank 1 named",
			testProgram{ranks: 2, jitter: 1, loops: []testLoop{exchange}},
			testProgram{ranks: 2, jitter: 1, loops: []testLoop{heavyOn(exchange, 1, 300)}},
			func(t *testing.T, d *JobDiff) {
				first := d.Items[0]
				require.NotNil(t, first.Shift)
				assert.True(t, first.Shift.Stands)
				assert.Equal(t, 1, first.Shift.Rank)
			}},
		{"a small change comes before a larger noise",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange, bigExtra}, busy: [2]int{0, 100}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange, slowed(bigExtra, 2)}, busy: [2]int{100, 300}},
			func(t *testing.T, d *JobDiff) {
				noisy, changed := findItem(t, d, ItemLoop, "app.c:1"), findItem(t, d, ItemLoop, "app.c:3")
				assert.Equal(t, "noise", noisy.Verdict)
				assert.Equal(t, "changed", changed.Verdict)
				assert.Greater(t, abs(noisy.Change.Time), abs(changed.Change.Time))
				assert.Equal(t, changed.Name, d.Items[0].Name, "the change first")
			}},
		{"8 ranks, the machine busy at other times, and rank 5 heavier (its variation not walked): the loop first, rank 5 named",
			testProgram{ranks: 8, jitter: 1, loops: []testLoop{longExchange, longReduce}, busy: [2]int{0, 100}},
			testProgram{ranks: 8, jitter: 1, loops: []testLoop{heavyOn(longExchange, 5, 1000), longReduce}, busy: [2]int{100, 300}},
			heavierFirst(5)},
		{"the machine busy at other times, and rank 1 heavier: the loop first, rank 1 named",
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{longExchange, longReduce}, busy: [2]int{0, 100}},
			testProgram{ranks: 4, jitter: 1, loops: []testLoop{heavyOn(longExchange, 1, 1000), longReduce}, busy: [2]int{100, 300}},
			heavierFirst(1)},
		{"a loop only in B is new, its calls too",
			testProgram{ranks: 2, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 2, loops: []testLoop{exchange, reduce, extra}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:3")
				assert.Equal(t, StatusNew, it.Status)
				assert.Nil(t, it.A)
				require.NotNil(t, it.B)
				assert.Equal(t, it.B.Time, it.Change.Time)
				assert.Zero(t, it.Ratio)
				assert.False(t, it.WithinNoise)
				assert.Equal(t, StatusNew, findItem(t, d, ItemCall, "MPI_Barrier").Status)
				assert.Equal(t, StatusMatched, findItem(t, d, ItemLoop, "app.c:2").Status)
			}},
		{"a loop only in A is gone",
			testProgram{ranks: 2, loops: []testLoop{exchange, reduce, extra}},
			testProgram{ranks: 2, loops: []testLoop{exchange, reduce}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:3")
				assert.Equal(t, StatusGone, it.Status)
				assert.Nil(t, it.B)
				assert.Equal(t, -it.A.Time, it.Change.Time)
			}},
		{"2 and 4 ranks doing the same per rank: per-rank means, no change",
			testProgram{ranks: 2, loops: []testLoop{exchange, reduce}},
			testProgram{ranks: 4, loops: []testLoop{exchange, reduce}},
			func(t *testing.T, d *JobDiff) {
				assert.True(t, d.PerRank)
				assert.Equal(t, 2, d.Change.Ranks)
				for _, it := range d.Items {
					assert.Equal(t, StatusMatched, it.Status, it.Name)
					assert.InDelta(t, 1, it.Ratio, 1e-12, it.Name)
					assert.True(t, it.WithinNoise, it.Name)
				}
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.InDelta(t, 40, it.A.Iterations, 1e-9, "per rank")
				assert.InDelta(t, 40, it.B.Iterations, 1e-9, "per rank")
				assert.Equal(t, 4, it.B.Ranks)
			}},
		{"2 and 4 ranks, each rank 2x slower: ratio 2, not 4",
			testProgram{ranks: 2, loops: []testLoop{exchange}},
			testProgram{ranks: 4, loops: []testLoop{slowed(exchange, 2)}},
			func(t *testing.T, d *JobDiff) {
				it := findItem(t, d, ItemLoop, "app.c:1")
				assert.InDelta(t, 2, it.Ratio, 1e-9)
				assert.InDelta(t, 2, findItem(t, d, ItemCall, "MPI_Wait").Ratio, 1e-9)
			}},
		{"a group that changed its loops is matched by them",
			testProgram{ranks: 4, loops: []testLoop{exchange, reduce, extra}, roles: func(r int) []int {
				if r < 2 {
					return []int{0}
				}
				return []int{1}
			}},
			testProgram{ranks: 4, loops: []testLoop{exchange, reduce, extra}, command: "-v", incomplete: true, roles: func(r int) []int {
				if r < 2 {
					return []int{0}
				}
				return []int{1, 2}
			}},
			func(t *testing.T, d *JobDiff) {
				require.Len(t, d.Groups, 2)
				assert.Equal(t, GroupMatch{A: 0, B: 0, AMembers: "0-1", BMembers: "0-1", ARanks: 2, BRanks: 2, By: MatchSignature, Status: StatusMatched}, d.Groups[0])
				assert.Equal(t, GroupMatch{A: 1, B: 1, AMembers: "2-3", BMembers: "2-3", ARanks: 2, BRanks: 2, By: MatchLoops, Status: StatusMatched}, d.Groups[1])
				it := findItem(t, d, ItemLoop, "app.c:2")
				assert.Equal(t, StatusMatched, it.Status)
				assert.Equal(t, 1, it.Group)
				assert.Equal(t, StatusNew, findItem(t, d, ItemLoop, "app.c:3").Status)
				assert.False(t, d.Change.SameCommand)
				assert.True(t, d.Change.Partial)
				assert.True(t, d.B.Incomplete)
				assert.False(t, d.A.Incomplete)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(loadProgram(t, tt.a), loadProgram(t, tt.b))
			// Every item once; JSON without NaN or infinities.
			names := map[string]bool{}
			for _, it := range d.Items {
				k := it.Kind + string(rune('0'+it.Group)) + it.Name
				assert.False(t, names[k], "%s twice", it.Name)
				names[k] = true
			}
			_, err := json.Marshal(d)
			require.NoError(t, err)
			for i := 1; i < len(d.Items); i++ {
				assert.LessOrEqual(t, d.Items[i-1].rank(), d.Items[i].rank(), "findings, noise, launcher: item %d", i)
			}
			tt.check(t, d)
		})
	}
}

// TestDiffGroupsUnmatched: a group only in B is new, with its loops.
func TestDiffGroupsUnmatched(t *testing.T) {
	a := loadProgram(t, testProgram{ranks: 2, loops: []testLoop{exchange}})
	b := loadProgram(t, testProgram{ranks: 2, loops: []testLoop{exchange, reduce}, roles: func(r int) []int { return []int{r} }})
	d := Diff(a, b)
	require.Len(t, d.Groups, 2)
	assert.Equal(t, StatusMatched, d.Groups[0].Status)
	assert.Equal(t, GroupMatch{A: -1, B: 1, BMembers: "1", BRanks: 1, Status: StatusNew}, d.Groups[1])
	it := findItem(t, d, ItemLoop, "app.c:2")
	assert.Equal(t, StatusNew, it.Status)
	assert.Equal(t, 1, it.Group)
	assert.False(t, d.PerRank)
}

// TestTreePaths: loops are named by the headers of their enclosing loops
// and their own; equal paths are numbered, self-loops marked.
func TestTreePaths(t *testing.T) {
	row := func(id, parent int, header string, self bool) loops.TreeRow {
		return loops.TreeRow{ID: id, Parent: parent, Header: header, SelfLoop: self}
	}
	tree := []loops.TreeRow{
		row(1, 0, "MPI_Send at a.c:1", false),
		row(2, 1, "MPI_Recv at a.c:2", false),
		row(4, 2, "MPI_Test at a.c:3", true),
		row(3, 1, "MPI_Recv at a.c:2", false),
	}
	assert.Equal(t, [][]string{
		{"MPI_Send at a.c:1"},
		{"MPI_Send at a.c:1", "MPI_Recv at a.c:2"},
		{"MPI_Send at a.c:1", "MPI_Recv at a.c:2", "MPI_Test at a.c:3 [self]"},
		{"MPI_Send at a.c:1", "MPI_Recv at a.c:2 #2"},
	}, treePaths(tree))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
