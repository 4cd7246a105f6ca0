/* csrc/partial.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/partial.c"
