// Command genjob writes a generated job file of the HPCC shape
// (flowgen.HPCCShape), the ranks generated in parallel a few at a time:
// the input of make bench-scale.
//
//	go run ./scripts/genjob -ranks 64 -events 2000000 -o job.mpiflow
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
	"mpiflow/internal/parallel"
)

func main() {
	ranks := flag.Int("ranks", 64, "ranks of the job")
	events := flag.Int64("events", 2_000_000, "calls a rank")
	out := flag.String("o", "", "job file to write")
	flag.Parse()
	if *out == "" || *ranks < 1 || *events < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genjob [-ranks N] [-events N] -o FILE")
		os.Exit(2)
	}
	if err := write(*out, *ranks, *events); err != nil {
		fmt.Fprintln(os.Stderr, "genjob:", err)
		os.Exit(1)
	}
}

// write generates the ranks a few at a time, in parallel, and writes each
// batch before the next: a rank of 2M calls takes about 20 MB until it is
// written, so that a thousand of them would not fit in memory together.
func write(out string, ranks int, events int64) error {
	opt := flowgen.HPCCShape(events)
	h := flowgen.NewHeader(opt, ranks, 16)
	w, err := flowgraph.Create(out)
	if err != nil {
		return err
	}
	batch := 2 * runtime.GOMAXPROCS(0)
	rs := make([]*flowgraph.Rank, batch)
	for first := 0; first < ranks; first += batch {
		n := min(batch, ranks-first)
		parallel.For(n, runtime.GOMAXPROCS(0), func(k int) error {
			rs[k] = flowgen.RankOf(opt, &h, first+k, nil)
			return nil
		})
		for _, r := range rs[:n] {
			h.Wallclock = max(h.Wallclock, flowgen.Wall(r))
			if err := w.WriteRank(r); err != nil {
				w.Abort()
				return err
			}
		}
		clear(rs)
	}
	return w.Close(h)
}
