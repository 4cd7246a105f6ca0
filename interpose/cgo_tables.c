/* csrc/tables.c compiled into the Go package by cgo (see csrc.go). */
#include "csrc/tables.c"
