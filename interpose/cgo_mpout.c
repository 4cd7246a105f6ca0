/* csrc/mpout.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/mpout.c"
