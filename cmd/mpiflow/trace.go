package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"mpiflow/export"
	"mpiflow/export/otf2"
	"mpiflow/fidelity"
	"mpiflow/flowgraph"
	"mpiflow/internal/atomicfile"
	"mpiflow/internal/progress"
)

// traceFormats are the output formats of trace, for help and errors.
const traceFormats = "csv, chrome, paje, otf2"

func newTraceCmd() *cobra.Command {
	var rankList, format, out, from, to string
	var truth bool
	cmd := &cobra.Command{
		Use:   "trace FILE",
		Short: "Write the reconstructed event trace (CSV, Chrome/Perfetto JSON, Pajé, OTF2)",
		Long: `trace rebuilds the exact ordered sequence of MPI calls of each selected rank
from its event flow graph, with timestamps restored from the timing (time
sums per interval of events; the time anchors of version 1 files), and
writes it in the chosen format:

  csv     one line per MPI call (default)
  chrome  Chrome trace event JSON for Perfetto (ui.perfetto.dev) and
          chrome://tracing: one process per rank, one complete event per call
  paje    Pajé trace for PajeNG, ViTE and Framesoc/Ocelotl: containers
          job -> host -> rank, one state per MPI call and Compute
  otf2    OTF2 archive for Vampir and Score-P's tools (-o DIR/NAME.otf2 is
          the anchor file; a path without .otf2 is a directory that gets
          traces.otf2)

Every format streams: the trace is never held in memory. --from and --to
keep the events that overlap the window (times since the job start, as
seconds "1.5" or durations "1500ms"); the events are not clipped.
Inside an anchor interval the times are reconstructed from the graph's
means (see the developers' guide), and OTF2 message sizes and partners
come from the graph's per-call summaries.

--truth writes the full trace recorded beside FILE (MPIFLOW_TRACE=1 or
` + "`mpiflow run --trace`" + `) instead of the rebuilt one, with the same columns
and records, so the two can be compared in any tool.`,
		Example: `  mpiflow trace halo.1234.mpiflow --rank 0 --format csv
  mpiflow trace halo.1234.mpiflow --ranks 0-3 -o trace.csv
  mpiflow trace halo.1234.mpiflow --format chrome -o halo.json
  mpiflow trace halo.1234.mpiflow --format paje --from 1s --to 2.5s -o halo.paje
  mpiflow trace halo.1234.mpiflow --format otf2 -o halo-otf2/traces.otf2
  mpiflow trace halo.1234.mpiflow --truth --rank 0 -o recorded.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var opt export.Options
			var err error
			if truth {
				opt.Events = func(r *flowgraph.Rank) (flowgraph.EventSource, error) {
					t, err := fidelity.OpenTruth(args[0], r)
					if err != nil {
						return nil, err
					}
					return t, nil
				}
			}
			if opt.From, err = parseTraceTime("--from", from); err != nil {
				return err
			}
			if opt.To, err = parseTraceTime("--to", to); err != nil {
				return err
			}
			if to != "" && opt.To <= opt.From {
				return fmt.Errorf("--to %s is not after --from %s", to, from)
			}
			if to != "" && opt.To == 0 {
				return fmt.Errorf("--to %s: the window is empty", to)
			}
			if out != "-" {
				if err := atomicfile.NotInput(out, args[0]); err != nil {
					return err
				}
			}
			switch format {
			case "csv", "chrome", "paje":
			case "otf2":
				if out == "" || out == "-" {
					return fmt.Errorf("--format otf2 writes an archive (several files): give it with -o DIR/NAME.otf2")
				}
				// Before reading the input: the library is loaded when
				// needed, and may be missing.
				if err := otf2.Available(); err != nil {
					return fmt.Errorf("--format otf2: %w", err)
				}
			default:
				return fmt.Errorf("unknown format %q (known: %s)", format, traceFormats)
			}
			f, err := flowgraph.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			incompleteNote(cmd.ErrOrStderr(), &f.Header)
			if opt.Ranks, err = parseRanks(rankList, f); err != nil {
				return err
			}
			bar := progress.New()
			defer bar.Done()
			if bar != nil {
				stage := "writing " + format
				opt.Progress = func(done, total int64) { bar.Update(stage, int(done), int(total)) }
			}
			var st export.Stats
			switch format {
			case "csv":
				return writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) error {
					return traceCSV(w, f, opt)
				})
			case "chrome":
				err = writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) (err error) {
					st, err = export.Chrome(w, f, opt)
					return err
				})
			case "paje":
				err = writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) (err error) {
					st, err = export.Paje(w, f, opt)
					return err
				})
			case "otf2":
				st, err = otf2.Write(out, f, opt)
			}
			if err != nil {
				return err
			}
			bar.Done()
			if out != "" && out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d events of %d ranks to %s\n", st.Events, st.Ranks, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&rankList, "rank", "", "ranks to write, e.g. 0-3,8 (default all)")
	cmd.Flags().StringVar(&rankList, "ranks", "", "alias of --rank")
	cmd.Flags().StringVar(&format, "format", "csv", "output format: "+traceFormats)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default standard output; required for otf2)")
	cmd.Flags().StringVar(&from, "from", "", "keep events that end after this time since the job start (seconds or a duration such as 250ms)")
	cmd.Flags().StringVar(&to, "to", "", "keep events that start before this time since the job start")
	cmd.Flags().BoolVar(&truth, "truth", false, "write the recorded full trace (MPIFLOW_TRACE=1) instead of the rebuilt one")
	return cmd
}

// traceCSV writes the selected ranks one after the other, with one header.
func traceCSV(w io.Writer, f *flowgraph.File, opt export.Options) error {
	wrote := false
	for i, e := range f.Index {
		if opt.Progress != nil {
			opt.Progress(int64(i), int64(len(f.Index)))
		}
		if opt.Ranks != nil && !opt.Ranks[e.Rank] {
			continue
		}
		r, err := f.ReadRank(i)
		if err != nil {
			return err
		}
		if err := export.CSVWindow(w, r, !wrote, opt); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		wrote = true
	}
	return nil
}

// parseTraceTime reads a time since the job start: seconds ("1.5") or a
// Go duration ("1500ms"); empty is 0.
func parseTraceTime(flag, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("%s %s: negative time", flag, s)
		}
		return int64(d), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != v {
		return 0, fmt.Errorf("%s %q: not a time (want seconds such as 1.5 or a duration such as 1500ms)", flag, s)
	}
	if v < 0 || v > 9e9 {
		return 0, fmt.Errorf("%s %s: out of range", flag, s)
	}
	return int64(v * 1e9), nil
}

// writeOutput runs write on stdout, or on a temporary file renamed to path
// when write succeeds, so a failed command never leaves a partial file.
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	return atomicfile.Write(path, write)
}
