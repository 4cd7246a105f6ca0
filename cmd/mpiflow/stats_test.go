package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/internal/units"
)

// stats --sites prints the call sites in text and JSON with the same
// numbers, and they add up to the calls of the table.
func TestStatsSites(t *testing.T) {
	path, ranks := genJob(t)
	js, _, err := run(t, "stats", "--sites", "--json", path)
	require.NoError(t, err)
	var got statsOutput
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	require.NotEmpty(t, got.Sites)
	var events int64
	for _, r := range ranks {
		events += r.Graph.NumEvents
	}
	perCall := map[string]int64{}
	for _, s := range got.Sites {
		perCall[s.Call] += s.Count
	}
	for _, c := range got.Calls {
		assert.Equal(t, c.Count, perCall[c.Call], c.Call)
		events -= c.Count
	}
	assert.Zero(t, events, "the calls are all the events")

	out, _, err := run(t, "stats", "--sites", path)
	require.NoError(t, err)
	for _, s := range got.Sites {
		// One row per site: call, site, count, total, avg, bytes, ranks.
		row := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(s.Call) + `\s+` + regexp.QuoteMeta(s.Site) + `\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+ \S+)\s+(\d+) \(`)
		m := row.FindStringSubmatch(out)
		require.NotNil(t, m, "row of %s at %s in\n%s", s.Call, s.Site, out)
		assert.Equal(t, []string{strconv.FormatInt(s.Count, 10), units.NS(s.Time.Total), units.NS(s.Avg()), units.Bytes(float64(s.Bytes)), strconv.Itoa(s.Ranks)}, m[1:])
	}

	// Without --sites: no table, no JSON field.
	out, _, err = run(t, "stats", path)
	require.NoError(t, err)
	assert.NotContains(t, out, "site")
	js, _, err = run(t, "stats", "--json", path)
	require.NoError(t, err)
	assert.False(t, strings.Contains(js, `"sites"`))
}
