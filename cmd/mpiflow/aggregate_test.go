package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

	out, _, err := run(t, "aggregate", path, "--slices", "10", "--p", "0.5")
	require.NoError(t, err)
	assert.NotEmpty(t, out)

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
