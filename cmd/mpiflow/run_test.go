package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReports(t *testing.T) {
	good, _ := genJob(t)
	bad := filepath.Join(t.TempDir(), "bad.mpiflow")
	require.NoError(t, os.WriteFile(bad, []byte("not a profile"), 0o644))
	var stderr strings.Builder
	got := writeReports(context.Background(), []string{good, bad}, &stderr)
	assert.Equal(t, []string{reportPath(good)}, got, "the bad profile gets no report")
	b, err := os.ReadFile(reportPath(good))
	require.NoError(t, err)
	assertCallTable(t, string(b), good)
	assert.Contains(t, stderr.String(), "no report for "+bad)
	assert.NoFileExists(t, reportPath(bad))
}
