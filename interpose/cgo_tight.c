/* csrc/tight.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/tight.c"
