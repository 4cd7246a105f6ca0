package export

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// genFile writes a generated job and returns it open, with its ranks.
func genFile(t testing.TB, nranks int, events int64) (*flowgraph.File, []*flowgraph.Rank) {
	t.Helper()
	h, ranks := flowgen.Run(flowgen.Options{Seed: 5, Events: events, Depth: 3, Sites: 12, Branchy: true}, nranks, 2)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, ranks
}

// events reconstructs every event of r with absolute times.
func events(t testing.TB, r *flowgraph.Rank) []flowgraph.Event {
	var out []flowgraph.Event
	it := r.Graph.Events()
	for it.Next() {
		ev := it.Event()
		ev.Start += r.Start
		ev.End += r.Start
		out = append(out, ev)
	}
	require.NoError(t, it.Err())
	return out
}

type chromeEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	Args json.RawMessage `json:"args"`
}

func TestChrome(t *testing.T) {
	f, ranks := genFile(t, 4, 1500)
	var buf bytes.Buffer
	st, err := Chrome(&buf, f, Options{})
	require.NoError(t, err)
	var doc struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc), "output is valid JSON")
	perRank := map[int][]chromeEvent{}
	procNames := map[int]string{}
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "X":
			perRank[ev.Pid] = append(perRank[ev.Pid], ev)
		case "M":
			if ev.Name == "process_name" {
				var a struct{ Name string }
				require.NoError(t, json.Unmarshal(ev.Args, &a))
				procNames[ev.Pid] = a.Name
			}
		}
	}
	var total int64
	for _, r := range ranks {
		want := events(t, r)
		got := perRank[r.Rank]
		require.Len(t, got, len(want), "one complete event per reconstructed event of rank %d", r.Rank)
		for i := range want {
			assert.Equal(t, r.Graph.Nodes[want[i].Node].Key.Call, got[i].Name)
			assert.InDelta(t, float64(want[i].Start)/1e3, got[i].Ts, 1e-6)
			assert.InDelta(t, float64(want[i].End-want[i].Start)/1e3, got[i].Dur, 1e-6)
		}
		assert.Equal(t, "rank "+strconv.Itoa(r.Rank)+" ("+r.Host+")", procNames[r.Rank])
		total += int64(len(want))
	}
	assert.Equal(t, total, st.Events)
	assert.Equal(t, 4, st.Ranks)
}

func TestChromeSelection(t *testing.T) {
	f, ranks := genFile(t, 4, 800)
	all := events(t, ranks[1])
	from, to := all[100].Start, all[200].Start
	var buf bytes.Buffer
	st, err := Chrome(&buf, f, Options{Ranks: map[int]bool{1: true}, From: from, To: to})
	require.NoError(t, err)
	// Events overlapping [from, to): 100..199, plus 99 when it ends after from.
	want := int64(100)
	if all[99].End > from {
		want++
	}
	assert.Equal(t, want, st.Events)
	assert.Equal(t, 1, st.Ranks)
	assert.NotContains(t, buf.String(), `"pid":0,`)

	_, err = Chrome(&buf, f, Options{Ranks: map[int]bool{9: true}})
	require.Error(t, err)
}

// TestPajeWithPajeNG has PajeNG's pj_dump read our Pajé export with both
// its readers, the flex one (-f) stopping silently at a byte past ASCII:
// every state we write is read, one per call and one per gap between
// calls, with a job name, command and host that are not ASCII.
func TestPajeWithPajeNG(t *testing.T) {
	pjdump, err := exec.LookPath("pj_dump")
	if err != nil {
		t.Skip("pj_dump (Debian package pajeng) not installed")
	}
	f, ranks := genFile(t, 4, 600)
	f.Header.JobID = "j\u00f6b \xff"
	f.Header.Command = []string{"./caf\u00e9", "\u65e5\u672c"}
	ranks[0].Host = "h\u00f4te"
	path := filepath.Join(t.TempDir(), "t.paje")
	var buf bytes.Buffer
	_, err = Paje(&buf, f, Options{})
	require.NoError(t, err)
	for i, c := range buf.Bytes() {
		require.Less(t, c, byte(0x80), "byte %d of the export is not ASCII", i)
	}
	written := strings.Count(buf.String(), "\n5 ")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	for _, flags := range [][]string{nil, {"-f"}} {
		t.Run(strings.Join(append([]string{"pj_dump"}, flags...), " "), func(t *testing.T) {
			out, err := exec.Command(pjdump, append(flags, path)...).CombinedOutput()
			require.NoError(t, err, "pj_dump: %s", out)
			// pj_dump prints "State, container, type, start, end, duration,
			// imbrication, value"; the flex reader keeps quotes.
			calls := map[string]int{}
			compute := map[string]int{}
			states := 0
			for _, line := range strings.Split(strings.ReplaceAll(string(out), `"`, ""), "\n") {
				fields := strings.Split(line, ",")
				if len(fields) < 8 || strings.TrimSpace(fields[0]) != "State" {
					continue
				}
				states++
				c, v := strings.TrimSpace(fields[1]), strings.TrimSpace(fields[7])
				if v == PajeComputeState {
					compute[c]++
				} else {
					calls[c]++
				}
			}
			assert.Equal(t, written, states, "states read of the %d written", written)
			for _, r := range ranks {
				name := "rank " + strconv.Itoa(r.Rank)
				evs := events(t, r)
				assert.Equal(t, len(evs), calls[name], "call states of %s", name)
				gaps := 0
				for i := 1; i < len(evs); i++ {
					if evs[i].Start > evs[i-1].End {
						gaps++
					}
				}
				assert.Equal(t, gaps, compute[name], "compute states of %s", name)
			}
		})
	}
}

func TestAppendFixed(t *testing.T) {
	tests := []struct {
		ns   int64
		sec  string
		usec string
	}{
		{0, "0.000000000", "0.000"},
		{1, "0.000000001", "0.001"},
		{1_234_567_890, "1.234567890", "1234567.890"},
		{-1500, "-0.000001500", "-1.500"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.sec, string(appendSeconds(nil, tt.ns)))
		assert.Equal(t, tt.usec, string(appendMicros(nil, tt.ns)))
	}
}

func TestProgress(t *testing.T) {
	f, _ := genFile(t, 3, 70_000)
	for name, write := range map[string]func(Options) error{
		"chrome": func(o Options) error { _, err := Chrome(io.Discard, f, o); return err },
		"paje":   func(o Options) error { _, err := Paje(io.Discard, f, o); return err },
	} {
		t.Run(name, func(t *testing.T) {
			var calls int
			var last, lastTotal int64
			err := write(Options{Progress: func(done, total int64) {
				calls++
				assert.GreaterOrEqual(t, done, last, "progress never goes back")
				assert.LessOrEqual(t, done, total)
				last, lastTotal = done, total
			}})
			require.NoError(t, err)
			assert.Greater(t, calls, 3, "progress inside ranks, not only between them")
			assert.Equal(t, lastTotal, last, "ends at 100%")
		})
	}
}

// shifted is an event source over the reconstruction of a rank with every
// event delayed by a fixed time, which records whether it was closed.
type shifted struct {
	it     *flowgraph.EventIter
	by     int64
	closed *int
}

func (s *shifted) Next() bool { return s.it.Next() }
func (s *shifted) Event() flowgraph.Event {
	ev := s.it.Event()
	ev.Start += s.by
	ev.End += s.by
	return ev
}
func (s *shifted) Err() error   { return s.it.Err() }
func (s *shifted) Close() error { *s.closed++; return nil }

// Every writer takes its events from Options.Events when set, and closes
// the sources it opened.
func TestOptionsEvents(t *testing.T) {
	f, ranks := genFile(t, 2, 300)
	const by = 1_000_000_000
	var opened, closed int
	opt := Options{Events: func(r *flowgraph.Rank) (flowgraph.EventSource, error) {
		opened++
		return &shifted{it: r.Graph.Events(), by: by, closed: &closed}, nil
	}}
	write := map[string]func(w io.Writer) error{
		"csv": func(w io.Writer) error {
			for _, r := range ranks {
				if err := CSVWindow(w, r, false, opt); err != nil {
					return err
				}
			}
			return nil
		},
		"chrome": func(w io.Writer) error { _, err := Chrome(w, f, opt); return err },
		"paje":   func(w io.Writer) error { _, err := Paje(w, f, opt); return err },
	}
	first := events(t, ranks[0])[0]
	for name, fn := range write {
		t.Run(name, func(t *testing.T) {
			opened, closed = 0, 0
			var buf bytes.Buffer
			require.NoError(t, fn(&buf))
			assert.Equal(t, 2, opened)
			assert.Equal(t, 2, closed)
			var want string
			switch name {
			case "csv":
				want = "," + strconv.FormatInt(first.Start+by, 10) + ","
			case "chrome":
				want = `"ts":` + string(appendMicros(nil, first.Start+by))
			case "paje":
				want = "5 " + string(appendSeconds(nil, first.Start+by)) + " "
			}
			assert.Contains(t, buf.String(), want, "the first event, shifted")
		})
	}
	_, err := Chrome(io.Discard, f, Options{Events: func(*flowgraph.Rank) (flowgraph.EventSource, error) {
		return nil, os.ErrNotExist
	}})
	assert.ErrorIs(t, err, os.ErrNotExist)
}
