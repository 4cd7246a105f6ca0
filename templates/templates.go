// Package templates holds the HTML template, CSS and JavaScript of the
// mpiflow report, embedded in the binary so that reports need no files at
// run time.
package templates

import (
	"embed"
	"io/fs"
)

//go:embed report.html report.css report.js scaling.html
var files embed.FS

// FS returns the embedded template files: report.html (html/template),
// report.css and report.js, and scaling.html (the page of mpiflow report
// --scaling, which takes its "chart" and "table" from report.html).
func FS() fs.FS { return files }
