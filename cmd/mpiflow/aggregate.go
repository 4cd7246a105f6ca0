package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"mpiflow/aggregate"
	"mpiflow/analysis"
	"mpiflow/flowgraph"
	"mpiflow/importer"
	otf2in "mpiflow/importer/otf2"
)

// openStateTrace opens an mpiflow file, a Pajé trace or an OTF2 archive as
// a state trace for the aggregator. header is nil for foreign traces.
func openStateTrace(path string, group bool, stateType string) (aggregate.Source, *flowgraph.Header, error) {
	format, err := importer.Sniff(path)
	if err != nil {
		return nil, nil, err
	}
	var tr *importer.Trace
	switch format {
	case importer.FormatMpiflow:
		if stateType != "" {
			return nil, nil, fmt.Errorf("%s: --state-type applies to Pajé traces, this is an mpiflow file", path)
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
	case importer.FormatPaje:
		tr, err = importer.ReadPaje(path, importer.PajeOptions{StateType: stateType})
	case importer.FormatOTF2:
		tr, err = otf2in.Read(path)
	default:
		return nil, nil, fmt.Errorf("%s: not an mpiflow file, Pajé trace or OTF2 archive", path)
	}
	if err != nil {
		return nil, nil, err
	}
	if group {
		tr.MapStates(func(s string) string {
			if s == aggregate.ComputeState {
				return s
			}
			return aggregate.CallGroup(s)
		})
	}
	return tr, nil, nil
}

func newAggregateCmd() *cobra.Command {
	var (
		nslices   int
		pflag     string
		hierarchy string
		pvalues   bool
		asJSON    bool
		group     bool
		mode      string
		top       int
		threshold float64
		stateType string
	)
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
other tools can be aggregated too.`,
		Example: `  mpiflow aggregate run.mpiflow
  mpiflow aggregate trace.paje --p 0.6      # a Pajé trace of another tool
  mpiflow aggregate scorep/traces.otf2      # an OTF2 archive (Score-P)
  mpiflow aggregate run.mpiflow --slices 60 --p 0.7 --group
  mpiflow aggregate run.mpiflow --pvalues --p auto
  mpiflow aggregate run.mpiflow --hierarchy site.json --json > aggregates.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := aggregate.RunOptions{Slices: nslices, PValues: pvalues, Threshold: threshold}
			switch pflag {
			case "auto":
				opt.P = -1
			default:
				p, err := strconv.ParseFloat(pflag, 64)
				if err != nil || !(p >= 0 && p <= 1) {
					return fmt.Errorf("--p %q: want a number in [0, 1] or \"auto\"", pflag)
				}
				opt.P = p
			}
			switch mode {
			case "spacetime", "":
				opt.Mode = aggregate.SpaceTime
			case "space":
				opt.Mode = aggregate.SpaceOnly
			case "time":
				opt.Mode = aggregate.TimeOnly
			default:
				return fmt.Errorf("--mode %q: want spacetime, space or time", mode)
			}
			if err := errors.Join(checkInt("slices", nslices, 1, aggregate.MaxSlices), checkInt("top", top, 0, -1),
				checkOpen("threshold", threshold, 0, 1)); err != nil {
				return err
			}
			if hierarchy != "" {
				spec, err := aggregate.LoadSpec(hierarchy)
				if err != nil {
					return err
				}
				opt.Spec = spec
			}
			src, header, err := openStateTrace(args[0], group, stateType)
			if err != nil {
				return err // the readers' errors name the file
			}
			res, err := aggregate.Run(src, opt)
			if err != nil {
				return fmt.Errorf("aggregate %s: %w", args[0], err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			out := terminalText(cmd.OutOrStdout())
			if header != nil {
				incompleteNote(out, header)
			}
			fmt.Fprintf(out, "%s: ", args[0])
			return res.WriteText(out, top)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&nslices, "slices", aggregate.DefaultSlices, "number of time slices, 1 to 1000 (the cost grows as slices^3)")
	fl.StringVar(&pflag, "p", "0.5", `trade-off between detail (0) and summary (1), or "auto"`)
	fl.StringVar(&hierarchy, "hierarchy", "", "JSON file giving the rank hierarchy (default rank -> host -> job)")
	fl.BoolVar(&pvalues, "pvalues", false, "also list the significant p values and the suggested p")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&group, "group", false, "group calls into p2p, collective, wait, io and other")
	fl.StringVar(&mode, "mode", "spacetime", "spacetime, space (time integrated) or time (ranks integrated)")
	fl.IntVar(&top, "top", 20, "number of aggregates listed in the summary")
	fl.StringVar(&stateType, "state-type", "", "Pajé input: the state type to aggregate (default: all, a resource per container and type)")
	fl.Float64Var(&threshold, "threshold", aggregate.DefaultThreshold, "p resolution of --pvalues")
	return cmd
}
