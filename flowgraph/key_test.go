package flowgraph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"mpiflow/flowgraph"
)

// TestParseKey: MPIFLOW_KEY's fields, in the order headers list them.
func TestParseKey(t *testing.T) {
	tests := []struct {
		key  string
		want []string
		err  string
	}{
		{"", []string{"call", "site"}, ""},
		{"call", []string{"call"}, ""},
		{"comm,bytes", []string{"call", "bytes", "comm"}, ""},
		{",site,,partner,", []string{"call", "site", "partner"}, ""},
		{"call,site,bytes,partner,comm", flowgraph.KeyFieldNames(), ""},
		{"site,colour", nil, `"colour" is not a key field (call, site, bytes, partner, comm)`},
		{"Site", nil, `"Site" is not a key field`},
		{",,", nil, "names no field (call, site, bytes, partner, comm)"},
	}
	for _, tt := range tests {
		got, err := flowgraph.ParseKey(tt.key)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, tt.key)
			continue
		}
		assert.NoError(t, err, tt.key)
		assert.Equal(t, tt.want, got, tt.key)
	}
}
