package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"mpiflow/flowgraph"
)

// Format is an output format of the presenters for the terminal
// (PrintStats, PrintLoops, PrintDiff, PrintScaling).
type Format int

const (
	// FormatText is tables for a terminal, with the control characters
	// of the file's text escaped (TerminalText).
	FormatText Format = iota
	// FormatJSON is one indented JSON document (WriteJSON).
	FormatJSON
)

// WriteJSON writes v as indented JSON, as every JSON output of mpiflow.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// present writes v in the format f: as JSON, or with text to a terminal.
func present(w io.Writer, f Format, v any, text func(io.Writer) error) error {
	if f == FormatJSON {
		return WriteJSON(w, v)
	}
	return text(TerminalText(w))
}

// IncompleteNote is printed by every command that reads a run whose ranks
// did not all reach MPI_Finalize.
func IncompleteNote(w io.Writer, h *flowgraph.Header) {
	if h.Incomplete {
		fmt.Fprintln(w, "# NOTE: incomplete run: some ranks did not reach MPI_Finalize; their data ends where they stopped")
	}
}

// TerminalText returns a writer for tables printed to a terminal: control
// characters other than newline and tab, which a file's names may hold (an
// escape sequence in a function name or path), are written escaped (\x1b,
// \u0085) instead of reaching the terminal.
func TerminalText(w io.Writer) io.Writer { return &escaper{w: w} }

type escaper struct{ w io.Writer }

func (e *escaper) Write(p []byte) (int, error) {
	if !hasControl(string(p), "\n\t") {
		return e.w.Write(p)
	}
	if _, err := io.WriteString(e.w, escapeControl(string(p), "\n\t")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// OneLine escapes every control character of s, newlines too, for a field
// of a banner line (a command-line argument with a newline would forge a
// line of its own).
func OneLine(s string) string { return escapeControl(s, "") }

// isControl tells the C0 and C1 control characters and DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }

func hasControl(s, keep string) bool {
	for _, r := range s {
		if isControl(r) && !strings.ContainsRune(keep, r) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// escapeControl writes the control characters of s but those of keep as
// Go escapes, and bytes that are not UTF-8 as \xNN.
func escapeControl(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r) && !strings.ContainsRune(keep, r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
