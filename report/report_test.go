package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReportSmoke(t *testing.T) {
	in := genJob(t, 4, 3000, nil)
	_, html := writeReport(t, in, "smoke.html", Options{})
	assert.Contains(t, html, "<svg")
}
