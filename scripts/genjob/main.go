// Command genjob writes a generated job file of the HPCC shape
// (flowgen.HPCCShape), the ranks generated in parallel: the input of make
// bench-scale.
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
	opt := flowgen.HPCCShape(*events)
	h := flowgen.NewHeader(opt, *ranks, 16)
	rs := make([]*flowgraph.Rank, *ranks)
	err := parallel.For(*ranks, runtime.GOMAXPROCS(0), func(r int) error {
		rs[r] = flowgen.RankOf(opt, &h, r, nil)
		return nil
	})
	if err == nil {
		for _, r := range rs {
			h.Wallclock = max(h.Wallclock, flowgen.Wall(r))
		}
		err = flowgraph.WriteFile(*out, h, rs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genjob:", err)
		os.Exit(1)
	}
}
