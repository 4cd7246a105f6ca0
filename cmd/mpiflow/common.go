package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"mpiflow/flowgraph"
)

// incompleteNote is printed by every command that reads a run whose ranks
// did not all reach MPI_Finalize.
func incompleteNote(w io.Writer, h *flowgraph.Header) {
	if h.Incomplete {
		fmt.Fprintln(w, "# NOTE: incomplete run: some ranks did not reach MPI_Finalize; their data ends where they stopped")
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseRanks parses a rank list such as "0-3,8,10-11" into a set; an empty
// string selects all ranks (nil).
func parseRanks(s string) (map[int]bool, error) {
	if s == "" {
		return nil, nil
	}
	set := make(map[int]bool)
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad rank list %q: %q is not a rank", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("bad rank list %q: %q is not a range", s, part)
			}
		}
		for r := a; r <= b; r++ {
			set[r] = true
		}
	}
	return set, nil
}

// isTerminal reports whether f is a terminal, so that progress is shown
// only to people, never into pipes or files.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress prints "label i/n" on stderr when it is a terminal.
type progress struct {
	label string
	n     int
	on    bool
}

func newProgress(label string, n int) *progress {
	return &progress{label: label, n: n, on: isTerminal(os.Stderr) && n > 1}
}

func (p *progress) step(i int) {
	if p.on {
		fmt.Fprintf(os.Stderr, "\r%s %d/%d", p.label, i, p.n)
	}
}

func (p *progress) done() {
	if p.on {
		fmt.Fprintf(os.Stderr, "\r%s\r", strings.Repeat(" ", len(p.label)+24))
	}
}

// stages shows "stage done/total" on stderr for a build in several stages
// (report.Options.Progress) when stderr is a terminal.
type stages struct{ width int }

// stageProgress returns the progress callback for a build in stages and a
// function that clears the line at the end; the callback is nil when stderr
// is not a terminal, so piped output stays clean.
func stageProgress() (func(stage string, done, total int), func()) {
	if !isTerminal(os.Stderr) {
		return nil, func() {}
	}
	s := &stages{}
	return s.update, s.clear
}

func (s *stages) update(stage string, done, total int) {
	line := fmt.Sprintf("%s %d/%d", stage, done, total)
	fmt.Fprintf(os.Stderr, "\r%-*s", s.width, line)
	s.width = max(s.width, len(line))
}

func (s *stages) clear() {
	if s.width > 0 {
		fmt.Fprintf(os.Stderr, "\r%s\r", strings.Repeat(" ", s.width))
	}
}

// seconds formats ns as seconds with a precision that suits the value.
func seconds(ns int64) string {
	s := float64(ns) / 1e9
	switch {
	case s == 0:
		return "0"
	case s < 0.001:
		return strconv.FormatFloat(s, 'e', 2, 64)
	case s < 10:
		return strconv.FormatFloat(s, 'f', 4, 64)
	default:
		return strconv.FormatFloat(s, 'f', 2, 64)
	}
}

// byteSize formats a byte count with a binary unit.
func byteSize(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

func pct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

func dirOf(path string) string {
	d := filepath.Dir(path)
	if d == "" {
		return "."
	}
	return d
}
