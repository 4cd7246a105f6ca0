/* csrc/seq.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/seq.c"
