package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
)

func TestAggregateCommand(t *testing.T) {
	path, _ := genJob(t)
	aggs := func(p string) *aggregate.Result {
		js, _, err := run(t, "aggregate", path, "--slices", "10", "--p", p, "--json")
		require.NoError(t, err)
		var res aggregate.Result
		require.NoError(t, json.Unmarshal([]byte(js), &res))
		return &res
	}
	// p = 0 keeps every rank and slice apart; p = 1 is one aggregate.
	micro := aggs("0")
	assert.Equal(t, 10, micro.Slices)
	assert.Equal(t, 4, micro.Resources)
	assert.Len(t, micro.Partition.Aggregates, 4*10)
	assert.Len(t, aggs("1").Partition.Aggregates, 1)

	// The text lists the same partition as the JSON: its count, and one
	// row per aggregate with its node, ranks and mode.
	half := aggs("0.5")
	n := len(half.Partition.Aggregates)
	require.Greater(t, n, 1)
	out, _, err := run(t, "aggregate", path, "--slices", "10", "--p", "0.5", "--top", "1000")
	require.NoError(t, err)
	assert.Contains(t, out, fmt.Sprintf("p = 0.5: %d aggregates", n))
	var want, got []string
	for _, a := range half.Partition.Aggregates {
		mode := a.ModeState
		if mode == "" {
			mode = "(idle)"
		}
		want = append(want, fmt.Sprintf("%s|%d|%s", a.Path, a.Resources, mode))
	}
	rows := out[strings.Index(out, "NODE"):]
	row := regexp.MustCompile(`(?m)^  (\S.*?)\s+(\d+)\s+[0-9.e-]+\s+[0-9.e-]+\s+(\S+)\s+[0-9.]+%$`)
	for _, m := range row.FindAllStringSubmatch(rows, -1) {
		got = append(got, m[1]+"|"+m[2]+"|"+m[3])
	}
	assert.ElementsMatch(t, want, got)
	out, _, err = run(t, "aggregate", path, "--slices", "10", "--p", "0.5", "--top", "2")
	require.NoError(t, err)
	assert.Contains(t, out, fmt.Sprintf("(2 of %d;", n))
	assert.Len(t, row.FindAllString(out[strings.Index(out, "NODE"):], -1), 2)

	_, _, err = run(t, "aggregate", path, "--p", "2")
	assert.Error(t, err)
	_, _, err = run(t, "aggregate", path, "--hierarchy", "/nonexistent.json")
	assert.ErrorContains(t, err, "/nonexistent.json")
}

func TestAggregateForeignTraces(t *testing.T) {
	path, _ := genJob(t)
	dir := t.TempDir()
	paje := filepath.Join(dir, "t.paje")
	_, _, err := run(t, "trace", path, "--format", "paje", "-o", paje)
	require.NoError(t, err)
	js, _, err := run(t, "aggregate", paje, "--slices", "10", "--p", "0", "--json")
	require.NoError(t, err)
	var res aggregate.Result
	require.NoError(t, json.Unmarshal([]byte(js), &res))
	assert.Equal(t, 4, res.Resources, "one resource per rank of the Pajé trace")
	assert.Len(t, res.Partition.Aggregates, 4*10)

	junk := filepath.Join(dir, "junk.txt")
	require.NoError(t, os.WriteFile(junk, []byte("hello\n"), 0o644))
	_, _, err = run(t, "aggregate", junk)
	assert.ErrorContains(t, err, "unknown trace format")
}

// TestAggregatePajeStateTypes: a Pajé trace of two state types
// (testdata/two-state-types.paje) aggregates both by default, a resource
// per type; --state-type chooses one.
func TestAggregatePajeStateTypes(t *testing.T) {
	path := filepath.Join("testdata", "two-state-types.paje")
	all, _, err := run(t, "aggregate", path, "--slices", "2", "--json")
	require.NoError(t, err)
	one, _, err := run(t, "aggregate", path, "--state-type", "B", "--slices", "2", "--json")
	require.NoError(t, err)
	for _, v := range []string{`"x"`, `"y"`, `"z"`, `"w"`} {
		assert.Contains(t, all, v)
	}
	assert.NotContains(t, one, `"x"`)
	assert.Contains(t, one, `"z"`)
}

// TestAggregatePajeVariables: a Pajé trace of variables only (SimGrid's
// platform traces) aggregates with no option, one variable type with
// --variable-type; the errors of a wrong choice name the flag that fixes
// them.
func TestAggregatePajeVariables(t *testing.T) {
	vars := filepath.Join("..", "..", "importer", "testdata", "simgrid-platform.paje")
	states := filepath.Join("testdata", "two-state-types.paje")
	for _, tt := range []struct {
		name   string
		args   []string
		states []string // the states of the result, if it succeeds
		err    string
	}{
		{name: "variables by default", args: []string{vars}, states: []string{"power", "power_used", "bandwidth", "bandwidth_used"}},
		{name: "one variable type", args: []string{vars, "--variable-type", "power_used"}, states: []string{"power_used"}},
		{name: "--variables on variables", args: []string{vars, "--variables"}, states: []string{"power", "power_used", "bandwidth", "bandwidth_used"}},
		{name: "states by default", args: []string{states}, states: []string{"x", "y", "z", "w"}},
		{name: "no variables", args: []string{states, "--variables"}, err: "the trace has no variables; its state types: A, B (--state-type)"},
		{name: "unknown variable type", args: []string{vars, "--variable-type", "speed"},
			err: `no variable type "speed" with values; the variables: power, power_used, bandwidth, bandwidth_used (--variable-type)`},
		{name: "no states", args: []string{vars, "--state-type", "S"}, err: "the trace has no states; its variables: power, power_used, bandwidth, bandwidth_used (--variable-type)"},
		{name: "unknown state type", args: []string{states, "--state-type", "S"}, err: `unknown type "S"; the state types: A, B (--state-type)`},
		{name: "states and variables", args: []string{states, "--state-type", "A", "--variables"}, err: "--state-type chooses states, --variables and --variable-type variables: give one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"aggregate", "--slices", "3", "--json"}, tt.args...)...)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			var res aggregate.Result
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			assert.Subset(t, res.States, tt.states)
			assert.Len(t, res.States, len(tt.states))
			require.NotNil(t, res.Partition)
			assert.NotEmpty(t, res.Partition.Aggregates)
			variables := tt.args[0] == vars
			assert.Equal(t, variables, res.Variables)
			text, _, err := run(t, append([]string{"aggregate", "--slices", "3"}, tt.args...)...)
			require.NoError(t, err)
			word := map[bool]string{true: "VARIABLE", false: "STATE"}[variables]
			assert.Contains(t, text, fmt.Sprintf("%d %ss, mode", len(tt.states), strings.ToLower(word)))
			assert.Contains(t, text, "DOMINANT "+word)
		})
	}
}
