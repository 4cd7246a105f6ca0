package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every numeric flag refuses values outside its meaning (NaN, infinities,
// negatives, zero where it means nothing) with an error that names the
// flag, before any work is done, and never panics.
func TestNumericFlags(t *testing.T) {
	prof := filepath.Join("..", "..", "testdata", "profiles", "halo.mpiflow")
	html := filepath.Join(t.TempDir(), "r.html")
	tests := []struct {
		args []string
		flag string
	}{
		{[]string{"aggregate", "--top", "-1"}, "--top"},
		{[]string{"aggregate", "--slices", "0"}, "--slices"},
		{[]string{"aggregate", "--slices", "1001"}, "--slices"},
		{[]string{"aggregate", "--pvalues", "--threshold", "NaN"}, "--threshold"},
		{[]string{"aggregate", "--pvalues", "--threshold", "+Inf"}, "--threshold"},
		{[]string{"aggregate", "--pvalues", "--threshold", "-0.1"}, "--threshold"},
		{[]string{"aggregate", "--pvalues", "--threshold", "0"}, "--threshold"},
		{[]string{"aggregate", "--pvalues", "--threshold", "1"}, "--threshold"},
		{[]string{"aggregate", "--p", "NaN"}, "--p"},
		{[]string{"aggregate", "--p", "-Inf"}, "--p"},
		{[]string{"aggregate", "--p", "1.5"}, "--p"},
		{[]string{"aggregate", "--state-type", "S"}, "--state-type"},
		{[]string{"fidelity", "--slices", "0"}, "--slices"},
		{[]string{"report", "-o", html, "--slices", "0"}, "--slices"},
		{[]string{"report", "-o", html, "--slices", "-3"}, "--slices"},
		{[]string{"report", "-o", html, "--max-groups", "0"}, "--max-groups"},
		{[]string{"report", "-o", html, "--max-groups", "-1"}, "--max-groups"},
		{[]string{"report", "-o", html, "--window", "2"}, "--window"},
		{[]string{"report", "-o", html, "--window", "2:1"}, "--window"},
		{[]string{"report", "-o", html, "--window", ":1"}, "--window"},
		{[]string{"report", "-o", html, "--window", "NaN:1"}, "--window"},
		{[]string{"report", "-o", html, "--window", "-1s:1"}, "--window"},
		{[]string{"report", "-o", html, "--window", "900:1000"}, "starts after the run's end"},
		{[]string{"report", "-o", html, "--similarity", "0"}, "--similarity"},
		{[]string{"report", "-o", html, "--similarity", "NaN"}, "--similarity"},
		{[]string{"loops", "--similarity", "1.01"}, "--similarity"},
		{[]string{"loops", "--similarity", "-0.5"}, "--similarity"},
		{[]string{"loops", "--workers", "-1"}, "--workers"},
		{[]string{"report", "-o", html, "--dot", "/nonexistent/dot"}, "--dot /nonexistent/dot: no such program"},
		{[]string{"graph", "--rank", "-1"}, "rank -1"},
		{[]string{"graph", "--thread", "-1"}, "thread -1"},
		{[]string{"graph", "--loop", "-1"}, "loop -1"},
	}
	for _, tt := range tests {
		t.Run(tt.args[0]+" "+tt.args[len(tt.args)-2]+" "+tt.args[len(tt.args)-1], func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, _, err = run(t, append(tt.args, prof)...) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.flag)
			assert.NoFileExists(t, html)
		})
	}
	// --key as the library parses MPIFLOW_KEY: nothing runs.
	for _, key := range []string{",,", "call,colour"} {
		_, _, err := run(t, "run", "--key", key, "--", "false")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--key")
	}
	// The bounds themselves are accepted.
	for _, args := range [][]string{
		{"aggregate", "--top", "0", "--slices", "1"},
		{"aggregate", "--pvalues", "--threshold", "0.5", "--slices", "4"},
	} {
		_, _, err := run(t, append(args, prof)...)
		assert.NoError(t, err, "%v", args)
	}
}

// Without --dot, a missing Graphviz is a warning naming it, not an error.
func TestMissingDotWarns(t *testing.T) {
	var buf strings.Builder
	require.NoError(t, checkDot("/nonexistent/dot", false, &buf))
	assert.Contains(t, buf.String(), "graphviz 'dot' not found")
	assert.Error(t, checkDot("/nonexistent/dot", true, &buf))
	buf.Reset()
	require.NoError(t, checkDot("sh", true, &buf), "a program on PATH")
	assert.Empty(t, buf.String())
}
