package main

import "embed"

// The C sources live in csrc/, with the preload library's, but cgo
// compiles only the .c files of the package directory: each cgo_NAME.c
// #includes csrc/NAME.c, for the recorder's files (recorder, tables, seq,
// settle, tight, trace, timing, tmenc) and the partial writer's (partial,
// mpout), and main.go's -I${SRCDIR}/csrc finds the headers for the Go
// files' preambles.
//
// The go command's build cache hashes only the package directory's files,
// so on its own it would not see an edit in csrc/ and would link stale C
// (for a changed recorder.h, tables of the wrong layout) into
// libmpiflow-go.so and the tests. Embedding csrc/ makes its files inputs
// of the package: an edit there rebuilds it. The variable is unused, so
// the linker leaves the text out of the binary.
//
//go:embed csrc/*.c csrc/*.h
var _ embed.FS
