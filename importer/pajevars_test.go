package importer

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
)

// pajeVarDefs adds PajeAddVariable (10) and PajeSubVariable (11) to
// pajeDefs, and a body head: containers m1 > p1, p2 with a variable type
// v (named Load) and a state type.
const pajeVarDefs = pajeDefs + `%EventDef PajeAddVariable 10
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeSubVariable 11
% Time date
% Type string
% Container string
% Value double
%EndEventDef
0 M 0
0 P M
1 State P
8 v P Load "0 0 0"
8 u P Used "0 0 0"
3 0 m1 M 0 m
3 0 p1 P m1 p1
3 0 p2 P m1 p2
`

func TestParsePajeVariables(t *testing.T) {
	const s = int64(1e9)
	tests := []struct {
		name   string
		body   string
		opt    PajeOptions
		vars   []string
		res    []string
		values [][]aggregate.ValueEvent
		start  int64
		end    int64
	}{{
		name: "set add sub, destroy, two containers",
		body: "9 0 v p1 2\n10 1 v p1 3\n9 1 v p2 7\n11 2 v p1 1.5\n4 3 P p2\n9 4 v p1 0\n9 5 v p1 1\n",
		vars: []string{"Load"}, res: []string{"p1", "p2"},
		values: [][]aggregate.ValueEvent{
			{{Resource: 0, Start: 0, End: 1 * s, Value: 2}, {Resource: 0, Start: 1 * s, End: 2 * s, Value: 5},
				{Resource: 0, Start: 2 * s, End: 4 * s, Value: 3.5}, {Resource: 0, Start: 4 * s, End: 5 * s, Value: 0}},
			{{Resource: 1, Start: 1 * s, End: 3 * s, Value: 7}},
		},
		start: 0, end: 5 * s,
	}, {
		name: "set before the first change elsewhere and never changed",
		body: "9 0 v p1 4\n9 2 u p2 1\n9 10 u p2 3\n",
		vars: []string{"Load", "Used"}, res: []string{"p1", "p2"},
		values: [][]aggregate.ValueEvent{
			{{Resource: 0, Start: 0, End: 10 * s, Value: 4}},
			{{Resource: 1, Variable: 1, Start: 2 * s, End: 10 * s, Value: 1}},
		},
		start: 0, end: 10 * s,
	}, {
		name: "changes at one time make one value, as in PajeNG",
		body: "9 1 v p1 1\n10 1 v p1 2\n11 1 v p1 0.5\n9 2 v p1 0\n",
		vars: []string{"Load"}, res: []string{"p1"},
		values: [][]aggregate.ValueEvent{{{Resource: 0, Start: 1 * s, End: 2 * s, Value: 2.5}}},
		start:  1 * s, end: 2 * s,
	}, {
		name: "variables asked for in a trace with states",
		body: "5 0 State p1 x y\n9 0 v p2 1\n5 2 State p1 z y\n",
		opt:  PajeOptions{Variables: true},
		vars: []string{"Load"}, res: []string{"p2"},
		values: [][]aggregate.ValueEvent{{{Resource: 0, Start: 0, End: 2 * s, Value: 1}}},
		start:  0, end: 2 * s,
	}, {
		name: "one variable type by name",
		body: "9 0 v p1 1\n9 0 u p2 2\n9 1 u p2 3\n",
		opt:  PajeOptions{VariableType: "Used"},
		vars: []string{"Used"}, res: []string{"p2"},
		values: [][]aggregate.ValueEvent{{{Resource: 0, Start: 0, End: 1 * s, Value: 2}}},
		start:  0, end: 1 * s,
	}, {
		name: "one variable type by alias",
		body: "9 0 v p1 1\n9 0 u p2 2\n9 1 u p2 3\n",
		opt:  PajeOptions{VariableType: "v"},
		vars: []string{"Load"}, res: []string{"p1"},
		values: [][]aggregate.ValueEvent{{{Resource: 0, Start: 0, End: 1 * s, Value: 1}}},
		start:  0, end: 1 * s,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := ParsePaje(strings.NewReader(pajeVarDefs+tt.body), "t.paje", tt.opt)
			require.NoError(t, err)
			assert.Equal(t, tt.vars, tr.StateNames)
			var names []string
			for _, r := range tr.Res {
				names = append(names, r.Name)
			}
			assert.Equal(t, tt.res, names)
			assert.Equal(t, tt.values, tr.Values)
			assert.Empty(t, tr.Events)
			start, end := tr.Span()
			assert.Equal(t, [2]int64{tt.start, tt.end}, [2]int64{start, end})
			src, ok := tr.Source().(*aggregate.Values)
			require.True(t, ok, "variables are read as aggregate.Values")
			assert.Equal(t, tr.Res, src.Resources())
			assert.Equal(t, "m", src.DefaultSpec().Name, "the container tree is the hierarchy")
		})
	}
}

// TestParsePajeVariableErrors: errors of variables, and the option that
// fixes an error of choice.
func TestParsePajeVariableErrors(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		opt    PajeOptions
		want   string
		option string // the OptionError's option, if one fixes it
	}{
		{name: "add before set", body: "10 1 v p1 1\n", want: `t.paje:77: PajeAddVariable on container "p1": the variable has no value yet`},
		{name: "sub before set", body: "11 1 v p1 1\n", want: `t.paje:77: PajeSubVariable on container "p1": the variable has no value yet`},
		{name: "sub after destroy", body: "9 0 v p1 1\n4 1 P p1\n3 2 p1b P m1 p1b\n11 3 v p1b 1\n", want: "t.paje:80: PajeSubVariable on container \"p1b\": the variable has no value yet"},
		{name: "malformed value", body: "9 1 v p1 x\n", want: `t.paje:77: malformed value "x"`},
		{name: "infinite value", body: "9 1 v p1 1e400\n", want: `t.paje:77: malformed value "1e400"`},
		{name: "overflow", body: "9 1 v p1 1e308\n10 2 v p1 1e308\n", want: `t.paje:78: PajeAddVariable on container "p1": the value overflows`},
		{name: "state type", body: "9 1 State p1 1\n", want: `t.paje:77: type "State" is not a variable type`},
		{name: "no time", body: "9 0 v p1 1\n", want: "t.paje: the trace has no states, and its variables keep their values for no time"},
		{name: "no states, a state type asked for", body: "9 0 v p1 1\n9 1 v p1 2\n", opt: PajeOptions{StateType: "State"},
			want: "t.paje: the trace has no states; its variables: Load (VariableType)", option: "VariableType"},
		{name: "unknown state type", body: "5 0 State p1 x y\n5 1 State p1 x y\n", opt: PajeOptions{StateType: "Nope"},
			want: `unknown type "Nope"; the state types: State (StateType)`, option: "StateType"},
		{name: "no variables", body: "5 0 State p1 x y\n5 1 State p1 x y\n", opt: PajeOptions{Variables: true},
			want: "t.paje: the trace has no variables; its state types: State (StateType)", option: "StateType"},
		{name: "unknown variable type", body: "9 0 v p1 1\n9 0 u p1 2\n9 1 u p1 2\n", opt: PajeOptions{VariableType: "Nope"},
			want: `t.paje: no variable type "Nope" with values; the variables: Load, Used (VariableType)`, option: "VariableType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePaje(strings.NewReader(pajeVarDefs+tt.body), "t.paje", tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var oe *OptionError
			if assert.Equal(t, tt.option != "", errors.As(err, &oe)) && oe != nil {
				assert.Equal(t, tt.option, oe.Option)
			}
		})
	}
}

// TestPajeVariablesModel: a SimGrid-like platform trace integrates into
// the model as computed by hand: a cell is the integral of the variable
// over the slice in ns at the variable's peak.
func TestPajeVariablesModel(t *testing.T) {
	tr, err := ReadPaje(filepath.Join("testdata", "simgrid-platform.paje"), PajeOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"power", "power_used", "bandwidth", "bandwidth_used"}, tr.StateNames)
	m, err := aggregate.Build(tr.Source(), 6, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"host1", "host2", "link1"}, []string{m.Resources[0].Name, m.Resources[1].Name, m.Resources[2].Name})
	const g = int64(1e9) // 1 s at the peak
	// Per resource, per slice: power, power_used, bandwidth, bandwidth_used.
	want := map[string][][]int64{
		// host1: power 1e9 of a peak 2e9; power_used 1e9 (peak 2e9) on [1.5, 4).
		"host1": {{g / 2, 0, 0, 0}, {g / 2, g / 4, 0, 0}, {g / 2, g / 2, 0, 0}, {g / 2, g / 2, 0, 0}, {g / 2, 0, 0, 0}, {g / 2, 0, 0, 0}},
		// host2: power 2e9, the peak; power_used 2e9 on [3, 5.5).
		"host2": {{g, 0, 0, 0}, {g, 0, 0, 0}, {g, 0, 0, 0}, {g, g, 0, 0}, {g, g, 0, 0}, {g, g / 2, 0, 0}},
		// link1: bandwidth 125e6, the peak; bandwidth_used 1e8 (the peak) on [2, 3).
		"link1": {{0, 0, g, 0}, {0, 0, g, 0}, {0, 0, g, g}, {0, 0, g, 0}, {0, 0, g, 0}, {0, 0, g, 0}},
	}
	for r, res := range m.Resources {
		for sl := 0; sl < m.Slices(); sl++ {
			assert.Equal(t, want[res.Name][sl], m.Cell(r, sl), "%s slice %d", res.Name, sl)
		}
	}
}

// TestPajeVariablesAgainstPjDump compares the pieces of every variable
// with the Variable lines of PajeNG's pj_dump (but those of no duration,
// which hold no time to integrate).
func TestPajeVariablesAgainstPjDump(t *testing.T) {
	for _, file := range []string{"pajeng-all.paje", "simgrid-platform.paje"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", file)
			var want []string
			for _, l := range pjDump(t, path) {
				f := strings.Split(l, ", ")
				if f[0] == "Variable" && f[3] != f[4] {
					want = append(want, strings.Join([]string{f[1], f[2], f[3], f[4], f[6]}, ", "))
				}
			}
			require.NotEmpty(t, want)
			tr, err := ReadPaje(path, PajeOptions{Variables: true})
			require.NoError(t, err)
			var got []string
			for r, evs := range tr.Values {
				for _, ev := range evs {
					got = append(got, fmt.Sprintf("%s, %s, %.9f, %.9f, %.9f", tr.Res[r].Name, tr.StateNames[ev.Variable],
						float64(ev.Start)/1e9, float64(ev.End)/1e9, ev.Value))
				}
			}
			assert.ElementsMatch(t, want, got)
		})
	}
}
