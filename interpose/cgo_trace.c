/* csrc/trace.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/trace.c"
