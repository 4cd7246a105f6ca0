// Package units formats sizes and durations for people, one way for every
// view.
package units

import (
	"fmt"
	"math"
	"strconv"
)

// Bytes formats a byte count with a binary unit: "512 B", "1.5 KiB",
// "3.2 MiB".
func Bytes(b float64) string {
	switch {
	case math.IsNaN(b):
		return "n/a"
	case math.Abs(b) < 1024:
		return strconv.FormatFloat(b, 'f', 0, 64) + " B"
	}
	exp := 0
	for v := math.Abs(b) / 1024; v >= 1024 && exp < 5; v /= 1024 {
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", b/math.Pow(1024, float64(exp+1)), "KMGTPE"[exp])
}

// Seconds formats a duration in seconds: two decimals from 1 s up (as the
// event flow graph paper labels graphs, t=31.69), three significant
// digits below.
func Seconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "n/a"
	case s == 0:
		return "0"
	case math.Abs(s) >= 1:
		return strconv.FormatFloat(s, 'f', 2, 64)
	default:
		return strconv.FormatFloat(s, 'g', 3, 64)
	}
}

// NS formats a duration in nanoseconds as Seconds does.
func NS(ns int64) string { return Seconds(float64(ns) / 1e9) }

// Count formats a count that may be a mean: whole numbers and values from
// 100 up without decimals, others with one.
func Count(c float64) string {
	if c == math.Trunc(c) || math.Abs(c) >= 100 {
		return strconv.FormatFloat(c, 'f', 0, 64)
	}
	return strconv.FormatFloat(c, 'f', 1, 64)
}

// PerIteration formats a mean per loop iteration (calls, bytes): three
// significant digits, without decimals from 100 up.
func PerIteration(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
