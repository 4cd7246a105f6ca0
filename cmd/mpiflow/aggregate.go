package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/importer"
	otf2in "mpiflow/importer/otf2"
	"mpiflow/report"
)

// stateReader reads one trace format as a state trace for the aggregator.
type stateReader struct {
	format importer.Format
	what   string // the format in the error that lists them
	// open reads the trace at path; header is nil for foreign traces.
	open func(path string, group bool, pj importer.PajeOptions) (aggregate.Source, *flowgraph.Header, error)
}

// stateReaders are the formats aggregate reads.
func stateReaders() []stateReader {
	return []stateReader{
		{importer.FormatMpiflow, "mpiflow file", openMpiflowStates},
		{importer.FormatPaje, "Pajé trace", foreignStates(func(path string, pj importer.PajeOptions) (*importer.Trace, error) {
			tr, err := importer.ReadPaje(path, pj)
			return tr, pajeFlags(path, err)
		})},
		{importer.FormatOTF2, "OTF2 archive", foreignStates(func(path string, _ importer.PajeOptions) (*importer.Trace, error) {
			return otf2in.Read(path)
		})},
	}
}

// pajeOptionFlags name the Pajé import options as aggregate's flags.
var pajeOptionFlags = map[string]string{"StateType": "--state-type", "VariableType": "--variable-type", "Variables": "--variables"}

// pajeFlags names the flag that fixes err, an error of ReadPaje(path),
// if one does.
func pajeFlags(path string, err error) error {
	var oe *importer.OptionError
	if errors.As(err, &oe) {
		return fmt.Errorf("%s: %s (%s)", path, oe.Msg, pajeOptionFlags[oe.Option])
	}
	return err
}

// openStateTrace opens an mpiflow file, a Pajé trace or an OTF2 archive as
// a state trace for the aggregator. header is nil for foreign traces.
func openStateTrace(path string, group bool, pj importer.PajeOptions) (aggregate.Source, *flowgraph.Header, error) {
	format, err := importer.Sniff(path)
	if err != nil {
		return nil, nil, err
	}
	readers := stateReaders()
	var what []string
	for _, r := range readers {
		if r.format == format {
			return r.open(path, group, pj)
		}
		what = append(what, r.what)
	}
	last := len(what) - 1
	return nil, nil, fmt.Errorf("%s: not an %s or %s", path, strings.Join(what[:last], ", "), what[last])
}

// openMpiflowStates reads an mpiflow file's ranks as a state trace.
func openMpiflowStates(path string, group bool, pj importer.PajeOptions) (aggregate.Source, *flowgraph.Header, error) {
	if pj != (importer.PajeOptions{}) {
		return nil, nil, fmt.Errorf("%s: --state-type, --variables and --variable-type apply to Pajé traces, this is an mpiflow file", path)
	}
	job, err := load(path, "", analysis.Options{NoLoops: true, NoResolve: true, NoSequences: true})
	if err != nil {
		return nil, nil, err
	}
	src, err := aggregate.NewRankSource(&job.Header, job.Recorded(), aggregate.FlowOptions{Group: group, Load: job.Reread})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return src, &job.Header, nil
}

// foreignStates opens a trace of another tool with read, its MPI calls
// grouped with group (variables have none).
func foreignStates(read func(string, importer.PajeOptions) (*importer.Trace, error)) func(string, bool, importer.PajeOptions) (aggregate.Source, *flowgraph.Header, error) {
	return func(path string, group bool, pj importer.PajeOptions) (aggregate.Source, *flowgraph.Header, error) {
		tr, err := read(path, pj)
		if err != nil {
			return nil, nil, err
		}
		if group && tr.Values == nil {
			tr.MapStates(func(s string) string {
				if s == aggregate.ComputeState {
					return s
				}
				return aggregate.CallGroup(s)
			})
		}
		return tr.Source(), nil, nil
	}
}

func newAggregateCmd() *cobra.Command {
	var fl aggregateFlags
	cmd := &cobra.Command{
		Use:   "aggregate FILE",
		Short: "Summarize a run as Ocelotl-style spatiotemporal aggregates",
		Long: `aggregate cuts the time of every rank into regular slices and computes,
for each rank and slice, the time spent in each state
(MPI calls, or call groups with --group, and Compute between them). It then
finds the partition of ranks x slices into aggregates that best trades
complexity reduction against information loss (Lamarche-Perrin et al.,
Ocelotl): each aggregate is a node of the rank hierarchy (rank -> host -> job
by default, or --hierarchy) over an interval of slices.

--p sets the trade-off: 0 keeps every rank and slice, 1 merges everything;
"auto" picks the suggested p after computing the significant p values
(--pvalues lists them with the gain and loss of each partition); that takes
one run per bisection step, so it is slow on thousands of ranks.

A hierarchy file is JSON, for example
  {"name": "site", "children": [
    {"name": "cluster-a", "children": [{"name": "n1", "ranks": [0, 1]}]},
    {"name": "cluster-b", "ranks": ["2-15", 16]}]}
and must list every rank exactly once.

FILE can also be a Pajé trace (container tree as hierarchy) or an OTF2
archive's .otf2 anchor file (system tree as hierarchy), so traces recorded by
other tools can be aggregated too. A Pajé trace without states (SimGrid's)
has its variables aggregated, each cell a variable's time integral over the
slice as a share of its peak; --variables chooses them over states.`,
		Example: `  mpiflow aggregate run.mpiflow
  mpiflow aggregate trace.paje --p 0.6      # a Pajé trace of another tool
  mpiflow aggregate scorep/traces.otf2      # an OTF2 archive (Score-P)
  mpiflow aggregate simgrid.trace           # a Pajé trace of variables (SimGrid)
  mpiflow aggregate run.mpiflow --slices 60 --p 0.7 --group
  mpiflow aggregate run.mpiflow --pvalues --p auto
  mpiflow aggregate run.mpiflow --hierarchy site.json --json > aggregates.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fl.run(cmd, args[0])
		},
	}
	f := cmd.Flags()
	f.IntVar(&fl.nslices, "slices", aggregate.DefaultSlices, "number of time slices, 1 to 1000 (the cost grows as slices^3)")
	f.StringVar(&fl.pflag, "p", "0.5", `trade-off between detail (0) and summary (1), or "auto"`)
	f.StringVar(&fl.hierarchy, "hierarchy", "", "JSON file giving the rank hierarchy (default rank -> host -> job)")
	f.BoolVar(&fl.pvalues, "pvalues", false, "also list the significant p values and the suggested p")
	f.BoolVar(&fl.asJSON, "json", false, "print the result as JSON")
	f.BoolVar(&fl.group, "group", false, "group calls into p2p, collective, wait, io and other")
	f.StringVar(&fl.mode, "mode", "spacetime", "spacetime, space (time integrated) or time (ranks integrated)")
	f.IntVar(&fl.top, "top", 20, "number of aggregates listed in the summary")
	f.StringVar(&fl.pj.StateType, "state-type", "", "Pajé input: the state type to aggregate (default: all, a resource per container and type)")
	f.BoolVar(&fl.pj.Variables, "variables", false, "Pajé input: aggregate the variables (time-integrated), not the states (default when the trace has no states)")
	f.StringVar(&fl.pj.VariableType, "variable-type", "", "Pajé input: the variable type to aggregate (implies --variables; default: all)")
	f.Float64Var(&fl.threshold, "threshold", aggregate.DefaultThreshold, "p resolution of --pvalues")
	return cmd
}

// aggregateFlags are the flags of mpiflow aggregate.
type aggregateFlags struct {
	nslices   int
	pflag     string
	hierarchy string
	pvalues   bool
	asJSON    bool
	group     bool
	mode      string
	top       int
	threshold float64
	pj        importer.PajeOptions // Pajé input: states or variables
}

// options checks the flags and returns the aggregator's options.
func (fl *aggregateFlags) options() (aggregate.RunOptions, error) {
	opt := aggregate.RunOptions{Slices: fl.nslices, PValues: fl.pvalues, Threshold: fl.threshold}
	switch fl.pflag {
	case "auto":
		opt.P = -1
	default:
		p, err := strconv.ParseFloat(fl.pflag, 64)
		if err != nil || !(p >= 0 && p <= 1) {
			return opt, fmt.Errorf("--p %q: want a number in [0, 1] or \"auto\"", fl.pflag)
		}
		opt.P = p
	}
	switch fl.mode {
	case "spacetime", "":
		opt.Mode = aggregate.SpaceTime
	case "space":
		opt.Mode = aggregate.SpaceOnly
	case "time":
		opt.Mode = aggregate.TimeOnly
	default:
		return opt, fmt.Errorf("--mode %q: want spacetime, space or time", fl.mode)
	}
	if fl.pj.StateType != "" && (fl.pj.Variables || fl.pj.VariableType != "") {
		return opt, errors.New("--state-type chooses states, --variables and --variable-type variables: give one")
	}
	if err := errors.Join(checkInt("slices", fl.nslices, 1, aggregate.MaxSlices), checkInt("top", fl.top, 0, -1),
		checkOpen("threshold", fl.threshold, 0, 1)); err != nil {
		return opt, err
	}
	if fl.hierarchy != "" {
		spec, err := aggregate.LoadSpec(fl.hierarchy)
		if err != nil {
			return opt, err
		}
		opt.Spec = spec
	}
	return opt, nil
}

// run aggregates the trace at path and prints the result.
func (fl *aggregateFlags) run(cmd *cobra.Command, path string) error {
	opt, err := fl.options()
	if err != nil {
		return err
	}
	src, header, err := openStateTrace(path, fl.group, fl.pj)
	if err != nil {
		return err // the readers' errors name the file
	}
	res, err := aggregate.Run(src, opt)
	if err != nil {
		return fmt.Errorf("aggregate %s: %w", path, err)
	}
	if fl.asJSON {
		return report.WriteJSON(cmd.OutOrStdout(), res)
	}
	out := report.TerminalText(cmd.OutOrStdout())
	if header != nil {
		report.IncompleteNote(out, header)
	}
	fmt.Fprintf(out, "%s: ", path)
	return res.WriteText(out, fl.top)
}
