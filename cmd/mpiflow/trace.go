package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mpiflow/export"
	"mpiflow/export/otf2"
	"mpiflow/fidelity"
	"mpiflow/flowgraph"
	"mpiflow/internal/atomicfile"
	"mpiflow/internal/progress"
	"mpiflow/report"
)

func newTraceCmd() *cobra.Command {
	var fl traceFlags
	formats := traceFormats()
	cmd := &cobra.Command{
		Use:   "trace FILE",
		Short: "Write the reconstructed event trace (CSV, Chrome/Perfetto JSON, Pajé, OTF2)",
		Long: `trace rebuilds the exact ordered sequence of MPI calls of each selected rank
from its event flow graph, with timestamps restored from the timing (time
sums per interval of events; the time anchors of version 1 files), and
writes it in the chosen format:

` + formatHelp(formats) + `
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
			return fl.run(cmd, args[0], formats)
		},
	}
	cmd.Flags().StringVar(&fl.rankList, "rank", "", "ranks to write, e.g. 0-3,8 (default all)")
	cmd.Flags().StringVar(&fl.rankList, "ranks", "", "alias of --rank")
	cmd.Flags().StringVar(&fl.format, "format", "csv", "output format: "+formatNames(formats))
	cmd.Flags().StringVarP(&fl.out, "output", "o", "", "output file (default standard output; required for otf2)")
	cmd.Flags().StringVar(&fl.from, "from", "", "keep events that end after this time since the job start (seconds or a duration such as 250ms)")
	cmd.Flags().StringVar(&fl.to, "to", "", "keep events that start before this time since the job start")
	cmd.Flags().BoolVar(&fl.truth, "truth", false, "write the recorded full trace (MPIFLOW_TRACE=1) instead of the rebuilt one")
	return cmd
}

// traceFlags are the flags of mpiflow trace.
type traceFlags struct {
	rankList, format, out, from, to string
	truth                           bool
}

// traceFormat is an output format of trace.
type traceFormat struct {
	name string
	help string // its lines in trace's help
	// check fails when the trace cannot be written to out; it runs
	// before the input is read.
	check func(out string) error
	// write writes the trace of f to out (standard output for "" or "-").
	write func(stdout io.Writer, out string, f *flowgraph.File, opt export.Options) (export.Stats, error)
	// counted: write returns the events and ranks written, told on
	// standard error when the trace goes to a file.
	counted bool
}

// traceFormats are the output formats of trace, the default first.
func traceFormats() []traceFormat {
	return []traceFormat{
		{name: "csv", help: "one line per MPI call (default)",
			write: func(stdout io.Writer, out string, f *flowgraph.File, opt export.Options) (export.Stats, error) {
				return export.Stats{}, writeOutput(stdout, out, func(w io.Writer) error {
					return traceCSV(w, f, opt)
				})
			}},
		{name: "chrome", help: "Chrome trace event JSON for Perfetto (ui.perfetto.dev) and\n" +
			"chrome://tracing: one process per rank, one complete event per call",
			write: streamed(export.Chrome), counted: true},
		{name: "paje", help: "Pajé trace for PajeNG, ViTE and Framesoc/Ocelotl: containers\n" +
			"job -> host -> rank, one state per MPI call and Compute",
			write: streamed(export.Paje), counted: true},
		{name: "otf2", help: "OTF2 archive for Vampir and Score-P's tools (-o DIR/NAME.otf2 is\n" +
			"the anchor file; a path without .otf2 is a directory that gets\n" +
			"traces.otf2)",
			check: func(out string) error {
				if out == "" || out == "-" {
					return fmt.Errorf("--format otf2 writes an archive (several files): give it with -o DIR/NAME.otf2")
				}
				// Before reading the input: the library is loaded when
				// needed, and may be missing.
				if err := otf2.Available(); err != nil {
					return fmt.Errorf("--format otf2: %w", err)
				}
				return nil
			},
			write: func(_ io.Writer, out string, f *flowgraph.File, opt export.Options) (export.Stats, error) {
				return otf2.Write(out, f, opt)
			}, counted: true},
	}
}

// streamed writes a trace format with write to standard output or a file.
func streamed(write func(io.Writer, *flowgraph.File, export.Options) (export.Stats, error)) func(io.Writer, string, *flowgraph.File, export.Options) (export.Stats, error) {
	return func(stdout io.Writer, out string, f *flowgraph.File, opt export.Options) (st export.Stats, err error) {
		err = writeOutput(stdout, out, func(w io.Writer) (err error) {
			st, err = write(w, f, opt)
			return err
		})
		return st, err
	}
}

// formatNames lists the names of formats, for help and errors.
func formatNames(formats []traceFormat) string {
	names := make([]string, len(formats))
	for i, tf := range formats {
		names[i] = tf.name
	}
	return strings.Join(names, ", ")
}

// formatHelp describes formats in trace's help, a line or more each.
func formatHelp(formats []traceFormat) string {
	var b strings.Builder
	for _, tf := range formats {
		fmt.Fprintf(&b, "  %-8s%s\n", tf.name, strings.ReplaceAll(tf.help, "\n", "\n          "))
	}
	return b.String()
}

// options checks the time window and returns the export options.
func (fl *traceFlags) options(path string) (export.Options, error) {
	var opt export.Options
	var err error
	if fl.truth {
		opt.Events = func(r *flowgraph.Rank) (flowgraph.EventSource, error) {
			t, err := fidelity.OpenTruth(path, r)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	}
	if opt.From, err = parseTraceTime("--from", fl.from); err != nil {
		return opt, err
	}
	if opt.To, err = parseTraceTime("--to", fl.to); err != nil {
		return opt, err
	}
	if fl.to != "" && opt.To <= opt.From {
		return opt, fmt.Errorf("--to %s is not after --from %s", fl.to, fl.from)
	}
	if fl.to != "" && opt.To == 0 {
		return opt, fmt.Errorf("--to %s: the window is empty", fl.to)
	}
	return opt, nil
}

// run writes the trace of the job file at path in one of formats.
func (fl *traceFlags) run(cmd *cobra.Command, path string, formats []traceFormat) error {
	opt, err := fl.options(path)
	if err != nil {
		return err
	}
	if fl.out != "-" {
		if err := atomicfile.NotInput(fl.out, path); err != nil {
			return err
		}
	}
	i := slices.IndexFunc(formats, func(tf traceFormat) bool { return tf.name == fl.format })
	if i < 0 {
		return fmt.Errorf("unknown format %q (known: %s)", fl.format, formatNames(formats))
	}
	tf := formats[i]
	if tf.check != nil {
		if err := tf.check(fl.out); err != nil {
			return err
		}
	}
	f, err := flowgraph.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	report.IncompleteNote(cmd.ErrOrStderr(), &f.Header)
	if opt.Ranks, err = parseRanks(fl.rankList, f); err != nil {
		return err
	}
	bar := progress.New()
	defer bar.Done()
	if bar != nil {
		stage := "writing " + fl.format
		opt.Progress = func(done, total int64) { bar.Update(stage, int(done), int(total)) }
	}
	st, err := tf.write(cmd.OutOrStdout(), fl.out, f, opt)
	if err != nil || !tf.counted {
		return err
	}
	bar.Done()
	if fl.out != "" && fl.out != "-" {
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d events of %d ranks to %s\n", st.Events, st.Ranks, fl.out)
	}
	return nil
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
