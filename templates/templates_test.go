package templates

import (
	"html/template"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFiles(t *testing.T) {
	for _, name := range []string{"report.html", "report.css", "report.js"} {
		b, err := fs.ReadFile(FS(), name)
		require.NoError(t, err, name)
		assert.NotEmpty(t, b, name)
	}
	_, err := template.ParseFS(FS(), "report.html")
	require.NoError(t, err)
	_, err = fs.ReadFile(FS(), "templates.go")
	assert.Error(t, err, "only the template files are embedded")
}
