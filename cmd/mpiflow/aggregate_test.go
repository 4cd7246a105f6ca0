package main

import (
	"encoding/json"
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
