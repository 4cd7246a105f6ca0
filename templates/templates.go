// Package templates holds the HTML template, CSS and JavaScript of the
// mpiflow report, embedded in the binary so that reports need no files at
// run time.
package templates

import (
	"embed"
	"io/fs"
)

//go:embed report.html report.css report.js
var files embed.FS

// FS returns the embedded template files: report.html (html/template),
// report.css and report.js.
func FS() fs.FS { return files }
