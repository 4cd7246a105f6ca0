//go:build unix

package loops

import "syscall"

// cpuTime is the user plus system CPU time of the process in ns, so that
// benchmarks can report CPU time, which other processes sharing the
// machine do not inflate the way they inflate wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
