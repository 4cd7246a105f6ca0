package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/analysis"
	"mpiflow/export"
	"mpiflow/internal/atomicfile"
	"mpiflow/report"
)

// exportFormats are the formats of export, for help and errors.
const exportFormats = "pprof, caliper"

func newExportCmd() *cobra.Command {
	var rankList, format, out string
	cmd := &cobra.Command{
		Use:   "export FILE --format pprof|caliper",
		Short: "Write the profile for pprof or Hatchet/Thicket (Caliper JSON)",
		Long: `export writes the profile as a call tree for the tools that script with
profiles: the program at the root, then the loops of the collapsed event flow
graphs (named by their header as mpiflow loops names it, "loop MPI_Waitall at
exchange halo.c:88", without the loop's number, which follows each rank's
order: one loop is one node for every rank and every run), and under each loop or the program its MPI calls, one node per
call and call site, with time, calls and bytes, and a "compute" node with the
time (and PAPI counters) of the compute phases inside it. A rank's nodes add
up to its whole time; an MPI call's nodes over the ranks to its time in
mpiflow stats.

  pprof    gzipped protobuf for go tool pprof, speedscope and Pyroscope: one
           sample per rank, thread and tree path, labelled rank and thread;
           sample types time (ns, the default), calls, bytes and the PAPI
           counters; MPI calls are functions named by the call with the call
           site's file and line (pprof -top: calls, -lines: call sites)
  caliper  Caliper's json-split, which Hatchet (GraphFrame.from_caliper_json)
           and Thicket read: the tree as nodes, a row per node and rank (the
           threads of a rank added up) with exclusive and inclusive time in
           seconds, calls, bytes and the counters; the job's command, ranks,
           MPI library, start, wallclock and executable as run metadata

The output goes to -o (default FILE with .pb.gz or .json; "-" is standard
output), written to a temporary name and renamed once complete.`,
		Example: `  mpiflow export halo.1234.mpiflow --format pprof -o halo.pb.gz
  go tool pprof -top halo.pb.gz
  mpiflow export halo.1234.mpiflow --format caliper -o halo.json
  python3 -c 'import hatchet as ht; print(ht.GraphFrame.from_caliper_json("halo.json").tree())'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var write func(io.Writer, *export.CallTree) error
			ext := ""
			switch format {
			case "pprof":
				write, ext = export.WritePprof, ".pb.gz"
			case "caliper":
				write, ext = export.Caliper, ".json"
			case "":
				return fmt.Errorf("--format is required: %s", exportFormats)
			default:
				return fmt.Errorf("unknown format %q (known: %s)", format, exportFormats)
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], ".mpiflow") + ext
			}
			if out != "-" {
				if err := atomicfile.NotInput(out, args[0]); err != nil {
					return err
				}
			}
			job, err := load(args[0], rankList, analysis.Options{NoSequences: true, NoSiteTable: true})
			if err != nil {
				return err
			}
			report.IncompleteNote(cmd.ErrOrStderr(), &job.Header)
			for _, r := range job.Ranks {
				if r.LoopErr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "mpiflow: loop analysis failed for %s; exported without loops: %v\n", r.Label, r.LoopErr)
				}
			}
			tree := export.NewCallTree(job)
			if err := writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) error { return write(w, tree) }); err != nil {
				return err
			}
			if out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote the %s profile of %d rank block(s), %d tree nodes, to %s\n", format, len(tree.Blocks), len(tree.Nodes), out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "output format: "+exportFormats+" (required)")
	cmd.Flags().StringVarP(&out, "output", "o", "", `output file (default FILE with .pb.gz or .json; "-": standard output)`)
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to export, e.g. 0-3,8 (default all)")
	return cmd
}
