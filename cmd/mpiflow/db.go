package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mpiflow/internal/progress"
	"mpiflow/jobdb"
	"mpiflow/report"
)

func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "A database of many jobs (SQLite): add job files, list and query them",
		Long: `db keeps job files in one SQLite database (schema: docs/jobdb.md), so that
jobs can be compared and searched: "db add" loads files, "db jobs" lists
them, "db sql" runs any read-only query. The database is --db, else
$MPIFLOW_DB, else mpiflow.db in the working directory; any SQLite client
reads it.`,
	}
	cmd.AddCommand(newDBAddCmd(), newDBJobsCmd(), newDBSQLCmd())
	return cmd
}

// dbFlag adds --db to cmd.
func dbFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "db", "", "the database file (default $MPIFLOW_DB, else mpiflow.db)")
}

func dbPath(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv("MPIFLOW_DB"); p != "" {
		return p
	}
	return "mpiflow.db"
}

func newDBAddCmd() *cobra.Command {
	var dbFile string
	cmd := &cobra.Command{
		Use:   "add [--db FILE] PATH...",
		Short: "Load job files into the database",
		Long: `add loads job files into the database, each in one transaction. A
directory adds every *.mpiflow file below it (not the ranks' *.partial.mpiflow
files). A file already there (the same content) is not added again; a file
that cannot be read is named and skipped, the others are added, and the
command then exits non-zero. Several adds may run at once on one database.`,
		Example: `  mpiflow db add halo.*.mpiflow
  mpiflow db add --db /logs/jobs.db /logs/alice/2026`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := jobdb.FindJobFiles(args...)
			if err != nil {
				return err
			}
			db, err := jobdb.Open(dbPath(dbFile))
			if err != nil {
				return err
			}
			defer db.Close()
			bar := progress.New()
			db.Progress = bar.Func()
			res, err := db.Add(cmd.Context(), files...)
			bar.Done()
			fmt.Fprintf(cmd.ErrOrStderr(), "%d added, %d already present, %d failed\n", res.Added, res.Present, res.Failed)
			return err
		},
	}
	dbFlag(cmd, &dbFile)
	return cmd
}

// parseDate parses a --since or --until date: 2006-01-02 or RFC 3339.
func parseDate(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s %q: want a date, 2006-01-02 or 2006-01-02T15:04:05Z", flag, s)
}

func newDBJobsCmd() *cobra.Command {
	var dbFile, since, until string
	var f jobdb.Filter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "jobs [--db FILE]",
		Short: "List the jobs of the database",
		Long: `jobs lists the jobs of the database, filtered by user, command (a
substring of the command line) and start date (--since inclusive, --until
exclusive, UTC), by descending MPI share, imbalance ((max - mean) / mean of
the ranks' MPI time), bytes, start or wallclock.`,
		Example: `  mpiflow db jobs --sort mpi --limit 20
  mpiflow db jobs --user alice --since 2026-01-01 --command lmp --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkInt("limit", f.Limit, 0, -1); err != nil {
				return err
			}
			if _, ok := jobdb.SortKeys[f.Sort]; !ok {
				return fmt.Errorf("--sort %q: want mpi, imbalance, bytes, start or wallclock", f.Sort)
			}
			var err error
			if f.Since, err = parseDate("since", since); err != nil {
				return err
			}
			if f.Until, err = parseDate("until", until); err != nil {
				return err
			}
			path := dbPath(dbFile)
			db, err := jobdb.OpenReadOnly(path)
			if err != nil {
				return err
			}
			defer db.Close()
			jobs, err := db.Jobs(cmd.Context(), f)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return report.PrintJobs(cmd.OutOrStdout(), jobs, outputFormat(asJSON))
		},
	}
	dbFlag(cmd, &dbFile)
	cmd.Flags().StringVar(&f.User, "user", "", "only the jobs of this user")
	cmd.Flags().StringVar(&f.Command, "command", "", "only the jobs whose command line contains this")
	cmd.Flags().StringVar(&since, "since", "", "only the jobs started at or after this date (UTC)")
	cmd.Flags().StringVar(&until, "until", "", "only the jobs started before this date (UTC)")
	cmd.Flags().StringVar(&f.Sort, "sort", "start", "order: mpi, imbalance, bytes, start or wallclock (descending)")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "at most this many jobs (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func newDBSQLCmd() *cobra.Command {
	var dbFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `sql [--db FILE] "SELECT ..."`,
		Short: "Run a read-only SQL query on the database",
		Long: `sql runs one SELECT (or WITH) statement on the database, opened read-only,
and prints its rows. The tables and their columns are in docs/jobdb.md.`,
		Example: `  mpiflow db sql "SELECT call, sum(time_ns)/1e9 AS s FROM calls GROUP BY call ORDER BY s DESC"
  mpiflow db sql --json "SELECT command, mpi_share FROM jobs WHERE imbalance > 0.5"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := dbPath(dbFile)
			db, err := jobdb.OpenReadOnly(path)
			if err != nil {
				return err
			}
			defer db.Close()
			cols, rows, err := db.Query(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return report.PrintRows(cmd.OutOrStdout(), cols, rows, outputFormat(asJSON))
		},
	}
	dbFlag(cmd, &dbFile)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (an array of objects) instead of a table")
	return cmd
}
