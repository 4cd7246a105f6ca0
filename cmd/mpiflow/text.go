package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// terminalText returns a writer for tables printed to a terminal: control
// characters other than newline and tab, which a file's names may hold (an
// escape sequence in a function name or path), are written escaped (\x1b,
// \u0085) instead of reaching the terminal.
func terminalText(w io.Writer) io.Writer { return &escaper{w: w} }

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

// oneLine escapes every control character of s, newlines too, for a field
// of a banner line (a command-line argument with a newline would forge a
// line of its own).
func oneLine(s string) string { return escapeControl(s, "") }

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
