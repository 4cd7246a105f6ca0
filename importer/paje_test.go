package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/export"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// pajeDefs is a header in the style PajeNG's tools write, with Alias
// fields left out of the definitions of types and values (they are
// optional) and an extra user field on PajeSetState.
const pajeDefs = `%EventDef PajeDefineContainerType 0
% Name string
% Type string
%EndEventDef
%EventDef PajeDefineStateType 1
% Name string
% Type string
%EndEventDef
%EventDef PajeDefineEntityValue 2
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeCreateContainer 3
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 4
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajeSetState 5
% Time date
% Type string
% Container string
% Value string
% Note string
%EndEventDef
%EventDef PajePushState 6
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajePopState 7
% Time date
% Type string
% Container string
%EndEventDef
%EventDef PajeDefineVariableType 8
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeSetVariable 9
% Time date
% Type string
% Container string
% Value double
%EndEventDef
`

const pajeBody = `# a comment
0 Machine 0
0 Proc Machine
1 State Proc
2 c State Compute "0.5 0.5 0.5"
2 s State MPI_Send "1 0 0"
8 mem Proc Memory "0 0 1"
3 0 m1 Machine 0 "node a"
3 0.5 p1 Proc m1 "P 1"
3 0.5 p2 Proc m1 P2
5 1 State p1 c ""
9 1.5 mem p1 3.5
5 2.25 State p1 s "x y"
6 2.5 State p2 c
6 3 State p2 MPI_Wait
7 3.000000001 State p2
7 4 State p2
5 5 State p1 c ""
4 6 Proc p1
6 6.5 State p2 c
`

func TestParsePajeSemantics(t *testing.T) {
	tr, err := ParsePaje(strings.NewReader(pajeDefs+pajeBody), "t.paje", PajeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"Compute", "MPI_Send", "MPI_Wait"}, tr.StateNames, "defined values, then values used without definition")
	require.Len(t, tr.Res, 2)
	assert.Equal(t, "P 1", tr.Res[0].Name)
	assert.Equal(t, "P2", tr.Res[1].Name)
	const s = int64(1e9)
	// p1: Compute [1, 2.25), MPI_Send [2.25, 5), Compute [5, 6) ended by the destroy.
	assert.Equal(t, []aggregate.StateEvent{
		{Resource: 0, State: 0, Start: 1 * s, End: 2250 * s / 1000},
		{Resource: 0, State: 1, Start: 2250 * s / 1000, End: 5 * s},
		{Resource: 0, State: 0, Start: 5 * s, End: 6 * s},
	}, tr.Events[0])
	// p2: Compute [2.5, 3), MPI_Wait pushed on it [3, 3.000000001), Compute
	// again until popped at 4, then Compute pushed at 6.5 and open at the
	// end of the trace (6.5), so empty.
	assert.Equal(t, []aggregate.StateEvent{
		{Resource: 1, State: 0, Start: 2500 * s / 1000, End: 3 * s},
		{Resource: 1, State: 2, Start: 3 * s, End: 3*s + 1},
		{Resource: 1, State: 0, Start: 3*s + 1, End: 4 * s},
	}, tr.Events[1])
	start, end := tr.Span()
	assert.Equal(t, 1*s, start)
	assert.Equal(t, 6*s, end)

	// The container tree is the hierarchy: "node a" over both processes.
	spec := tr.DefaultSpec()
	assert.Equal(t, "node a", spec.Name)
	assert.Equal(t, []int{0, 1}, []int(spec.Ranks))
	assert.Empty(t, spec.Children)
	h, err := aggregate.NewHierarchy(spec, tr.Resources())
	require.NoError(t, err)
	assert.Equal(t, 2, h.Nodes[0].Leaves)
}

func TestParsePajeErrors(t *testing.T) {
	head := pajeDefs + "0 Machine 0\n0 Proc Machine\n1 State Proc\n3 0 m1 Machine 0 m\n3 0 p1 Proc m1 p\n"
	// head has 61 lines; the tested line is line 62.
	require.Equal(t, 61, strings.Count(head, "\n"))
	tests := []struct {
		name, body, want string
	}{
		{"unknown id", "42 1 State p1 x\n", "t.paje:62: unknown event id \"42\""},
		{"too few fields", "5 1 State p1 x\n", "t.paje:62: PajeSetState (id 5) has 5 fields, the line has 4"},
		{"bad time", "5 1.x State p1 x y\n", "t.paje:62: malformed time \"1.x\""},
		{"unknown container", "5 1 State p9 x y\n", "t.paje:62: unknown container \"p9\""},
		{"unknown type", "5 1 Stat p1 x y\n", "t.paje:62: unknown type \"Stat\""},
		{"not a state type", "5 1 Proc p1 x y\n", "t.paje:62: type \"Proc\" is not a state type"},
		{"pop empty", "7 1 State p1\n", "t.paje:62: PajePopState on container \"p1\" with no state pushed"},
		{"time goes back", "5 1 State p1 x y\n5 0.5 State p1 x y\n", "t.paje:63: time 0.5 goes back"},
		{"quote", "5 1 State p1 \"x y\n", "t.paje:62: unterminated quoted string"},
		{"header", "%EventDef PajeFoo 10\n", "t.paje:62: unknown event \"PajeFoo\""},
		{"field type", "%EventDef PajeNewEvent 10\n% Time quad\n", "t.paje:63: malformed field"},
		{"missing field", "%EventDef PajeSetState 10\n% Time date\n%EndEventDef\n", "t.paje:64: %EventDef PajeSetState (line 62) lacks the field type"},
		{"unclosed def", "%EventDef PajeNewEvent 10\n% Time date\n", "t.paje:62: %EventDef PajeNewEvent is not closed"},
		{"destroyed", "4 1 Proc p1\n5 2 State p1 x y\n", "t.paje:63: container \"p1\" was destroyed"},
		{"no states", "", "t.paje: the trace has no states"},
		{"root states", "1 RootState 0\n5 1 RootState 0 x y\n", "t.paje:63: states of the root container are not supported"},
		{"state type of another container type", "5 1 State m1 x y\n", `t.paje:62: state type "State" is not a child of type "Machine"`},
		{"variable container", "9 1 State p9 3\n", `t.paje:62: unknown container "p9"`},
		{"variable type", "9 1 State m1 3\n", `t.paje:62: type "State" is not a child of type "Machine"`},
		{"destroy type", "4 1 Machine p1\n", `t.paje:62: container "p1" has type "Proc", not "Machine"`},
		{"container type", "3 1 p2 Proc 0 q\n", `t.paje:62: container type "Proc" is not a child of type "0"`},
		{"duplicate container", "3 1 p1 Proc m1 q\n", `t.paje:62: container "p1" already exists`},
		{"looked up by name", "5 1 State p x y\n", `t.paje:62: unknown container "p"`},
		{"variable value", "8 mem Proc Memory \"0 0 1\"\n2 v mem Low \"0 0 0\"\n", `t.paje:63: type "mem" is a container or variable type`},
		{"after root destroyed", "5 1 State p1 x y\n4 2 0 0\n5 3 State p1 x y\n", `t.paje:64: container "p1" was destroyed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePaje(strings.NewReader(head+tt.body), "t.paje", PajeOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestParsePajeIdentifiers checks that containers are looked up by alias
// only, so a container named like another's alias hides nothing, and that
// destroying the root ends every state and is legal, as in PajeNG.
func TestParsePajeIdentifiers(t *testing.T) {
	body := pajeDefs + `0 P 0
1 S P
3 0 1 P 0 x
3 0 2 P 0 1
5 1 S 1 a n
5 1 S 2 b n
5 2 S 1 c n
4 3 0 0
`
	tr, err := ParsePaje(strings.NewReader(body), "t.paje", PajeOptions{})
	require.NoError(t, err)
	require.Len(t, tr.Res, 2)
	assert.Equal(t, "x", tr.Res[0].Name)
	assert.Equal(t, "1", tr.Res[1].Name)
	const s = int64(1e9)
	assert.Equal(t, [][]aggregate.StateEvent{
		{{Resource: 0, State: 0, Start: 1 * s, End: 2 * s}, {Resource: 0, State: 2, Start: 2 * s, End: 3 * s}},
		{{Resource: 1, State: 1, Start: 1 * s, End: 3 * s}},
	}, tr.Events)
	assert.Equal(t, []string{"a", "b", "c"}, tr.StateNames)
}

// A container with states of two types: by default a resource per type,
// below the container, and a value name that both use named by type.
func TestParsePajeStateTypes(t *testing.T) {
	body := pajeDefs + "0 P 0\n1 A P\n1 B P\n3 0 p P 0 p\n5 1 A p x y\n5 1 B p z y\n5 2 A p w y\n5 2 B p x y\n5 3 A p x y\n"
	tr, err := ParsePaje(strings.NewReader(body), "t.paje", PajeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"A: x", "w", "z", "B: x"}, tr.StateNames)
	require.Len(t, tr.Res, 2)
	assert.Equal(t, []string{"A", "B"}, []string{tr.Res[0].Name, tr.Res[1].Name})
	assert.Equal(t, []Container{{Name: "p", Parent: -1, Resource: -1}, {Name: "A", Parent: 0, Resource: 0}, {Name: "B", Parent: 0, Resource: 1}},
		tr.Containers)
	const s = int64(1e9)
	assert.Equal(t, [][]aggregate.StateEvent{
		{{Resource: 0, State: 0, Start: 1 * s, End: 2 * s}, {Resource: 0, State: 1, Start: 2 * s, End: 3 * s}},
		{{Resource: 1, State: 2, Start: 1 * s, End: 2 * s}, {Resource: 1, State: 3, Start: 2 * s, End: 3 * s}},
	}, tr.Events)

	tr, err = ParsePaje(strings.NewReader(body), "t.paje", PajeOptions{StateType: "B"})
	require.NoError(t, err)
	assert.Equal(t, []string{"z", "x"}, tr.StateNames, "one type: no names by type")
	require.Len(t, tr.Res, 1)
	assert.Equal(t, "p", tr.Res[0].Name)
	_, err = ParsePaje(strings.NewReader(body), "t.paje", PajeOptions{StateType: "P"})
	require.Error(t, err)
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1.5", 1_500_000_000, true},
		{".25", 250_000_000, true},
		{"12345678.123456789", 12345678_123456789, true},
		{"1.0000000005", 1_000_000_001, true},
		{"-2", -2_000_000_000, true},
		{"1e-3", 1_000_000, true},
		{"", 0, false},
		{".", 0, false},
		{"1.2.3", 0, false},
		{"abc", 0, false},
		{"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := parseTime(tt.in)
		if !tt.ok {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// TestPajeRoundTrip exports a generated job to Pajé, imports it, and checks
// that the microscopic model equals the one built from the graph directly.
func TestPajeRoundTrip(t *testing.T) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 11, Events: 3000, Depth: 3, Sites: 12, Branchy: true}, 6, 4)
	path := filepath.Join(t.TempDir(), "job.mpiflow")
	require.NoError(t, flowgraph.WriteFile(path, h, ranks))
	f, err := flowgraph.Open(path)
	require.NoError(t, err)
	defer f.Close()

	var buf bytes.Buffer
	_, err = export.Paje(&buf, f, export.Options{})
	require.NoError(t, err)
	tr, err := ParsePaje(&buf, "job.paje", PajeOptions{})
	require.NoError(t, err)

	fs, err := aggregate.NewRankSource(&h, ranks, aggregate.FlowOptions{})
	require.NoError(t, err)
	for _, slices := range []int{1, 7, 30} {
		want, err := aggregate.Build(fs, slices, 2)
		require.NoError(t, err)
		got, err := aggregate.Build(tr, slices, 2)
		require.NoError(t, err)
		assert.Equal(t, want.Bounds, got.Bounds, "same span and slices")
		require.Len(t, got.Resources, len(want.Resources))
		wantState := map[string]int{}
		for i, s := range want.States {
			wantState[s] = i
		}
		for r := range want.Resources {
			assert.Equal(t, want.Resources[r], got.Resources[r])
			for ts := 0; ts < slices; ts++ {
				wc, gc := want.Cell(r, ts), got.Cell(r, ts)
				for s, name := range got.States {
					ws, ok := wantState[name]
					require.True(t, ok, "state %s", name)
					// Times are written to the ns, so the cells agree to
					// the ns; the tolerance allows for nothing more.
					assert.InDelta(t, float64(wc[ws]), float64(gc[s]), 0.5, "rank %d slice %d state %s", r, ts, name)
				}
			}
		}
	}

	// The hierarchy is job -> host -> rank, as the flow source's default.
	gotH, err := aggregate.NewHierarchy(tr.DefaultSpec(), tr.Resources())
	require.NoError(t, err)
	wantH, err := aggregate.NewHierarchy(fs.DefaultSpec(), fs.Resources())
	require.NoError(t, err)
	assert.Equal(t, wantH, gotH)
}

func FuzzParsePaje(f *testing.F) {
	f.Add([]byte(pajeDefs + pajeBody))
	f.Add([]byte(pajeDefs + "5 1 State p1 \"x\n"))
	f.Add([]byte("%EventDef PajeSetState 1\n% Time date\n%EndEventDef\n1 1e400\n"))
	f.Add([]byte(pajeVarDefs + "9 0 v p1 2\n10 1 v p1 3\n9 1 v p2 7\n11 2 v p1 1.5\n4 3 P p2\n"))
	for _, name := range []string{"pajeng-all.paje", "pajeng-old.paje", "simgrid-platform.paje"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParsePaje(bytes.NewReader(data), "fuzz.paje", PajeOptions{})
		if err != nil {
			return
		}
		// A trace that parses is consistent: intervals inside the span,
		// states and resources in range, and a hierarchy over all resources.
		if tr.Values != nil {
			checkValues(t, tr)
			return
		}
		require.Len(t, tr.Events, len(tr.Res))
		for r, evs := range tr.Events {
			for _, ev := range evs {
				checkInterval(t, tr, r, ev.Resource, ev.State, ev.Start, ev.End)
			}
		}
		_, err = aggregate.NewHierarchy(tr.DefaultSpec(), tr.Resources())
		require.NoError(t, err)
	})
}

// checkValues checks that the pieces of a trace of variables are in the
// span, of variables and resources in range, and aggregate.
func checkValues(t *testing.T, tr *Trace) {
	require.Empty(t, tr.Events)
	require.Len(t, tr.Values, len(tr.Res))
	for r, evs := range tr.Values {
		for _, ev := range evs {
			checkInterval(t, tr, r, ev.Resource, ev.Variable, ev.Start, ev.End)
		}
	}
	src := tr.Source()
	_, err := aggregate.NewHierarchy(src.(*aggregate.Values).DefaultSpec(), src.Resources())
	require.NoError(t, err)
	if tr.End-tr.Start >= 2 {
		_, err = aggregate.Build(src, 2, 1)
		require.NoError(t, err)
	}
}

// checkInterval checks that an interval of resource r (a state or a piece
// of a variable) is of r, in the span, and of a state in range.
func checkInterval(t *testing.T, tr *Trace, r, resource, state int, start, end int64) {
	require.Equal(t, r, resource)
	require.Less(t, start, end)
	require.GreaterOrEqual(t, start, tr.Start)
	require.LessOrEqual(t, end, tr.End)
	require.True(t, state >= 0 && state < len(tr.StateNames))
}
