package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
)

// TestKeyVocabulary: the recorder reads MPIFLOW_KEY as flowgraph.ParseKey
// does (mpiflow run --key), and its key flags name the same fields in
// the header.
func TestKeyVocabulary(t *testing.T) {
	for _, key := range []string{"", "call", "site", "bytes", "partner", "comm", "comm,bytes", ",site,,partner,",
		"call,site,bytes,partner,comm", "site,colour", "Site", ",,", " site"} {
		want, perr := flowgraph.ParseKey(key)
		r, err := newRecorder(key, 0, 0)
		if perr != nil {
			assert.Error(t, err, "%q: the recorder takes what ParseKey refuses", key)
			continue
		}
		require.NoError(t, err, "%q: the recorder refuses what ParseKey takes", key)
		assert.Equal(t, want, keyFields(r.keyFlags()), "%q", key)
		r.free()
	}
}
