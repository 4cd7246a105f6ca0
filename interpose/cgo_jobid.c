/* csrc/jobid.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/jobid.c"
