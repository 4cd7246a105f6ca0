// Command mpiflow records and analyzes event flow graphs of MPI jobs.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mpiflow:", err)
		os.Exit(1)
	}
}
