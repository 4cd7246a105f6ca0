package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"mpiflow/internal/units"
	"mpiflow/jobdb"
)

// PrintJobs writes the jobs of a job database, one a row.
func PrintJobs(w io.Writer, jobs []jobdb.Job, f Format) error {
	if f == FormatJSON {
		if jobs == nil {
			jobs = []jobdb.Job{}
		}
		return WriteJSON(w, jobs)
	}
	tw := tabwriter.NewWriter(TerminalText(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tstart\tuser\tjob\tranks\twall(s)\t%mpi\timbalance\tbytes\tcommand")
	for _, j := range jobs {
		cmdline := OneLine(j.Command)
		if j.Incomplete {
			cmdline += " (incomplete)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%.1f\t%.2f\t%s\t%s\n", j.ID, j.Start, OneLine(j.User), OneLine(j.JobID),
			j.Ranks, units.NS(j.WallclockNs), 100*j.MPIShare, j.Imbalance, units.Bytes(float64(j.Bytes)), cmdline)
	}
	return tw.Flush()
}

// PrintRows writes the rows of an SQL query with columns cols: as a table
// (NULL for a null value), or in JSON as an array of objects.
func PrintRows(w io.Writer, cols []string, rows [][]any, f Format) error {
	if f == FormatJSON {
		out := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			m := make(map[string]any, len(cols))
			for i, c := range cols {
				if b, ok := r[i].([]byte); ok {
					m[c] = string(b)
				} else {
					m[c] = r[i]
				}
			}
			out = append(out, m)
		}
		return WriteJSON(w, out)
	}
	tw := tabwriter.NewWriter(TerminalText(w), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(escapeAll(cols), "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			switch v := v.(type) {
			case nil:
				cells[i] = "NULL"
			case []byte:
				cells[i] = OneLine(string(v))
			default:
				cells[i] = OneLine(fmt.Sprint(v))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// escapeAll is OneLine of each string.
func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = OneLine(s)
	}
	return out
}
