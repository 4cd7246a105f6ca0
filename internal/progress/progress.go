// Package progress shows how far a long command has come, on standard
// error and only when it is a terminal, so that piped output stays clean.
package progress

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar shows one bar per stage of a command. A nil *Bar shows nothing, so
// callers need not check.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	stage string
	bar   *progressbar.ProgressBar
}

// New returns a Bar on standard error, or nil when standard error is not
// a terminal.
func New() *Bar {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return &Bar{w: os.Stderr}
}

// Update shows that done of total units of stage are done. It is safe for
// concurrent use; its signature is that of the Progress callbacks of the
// analysis and report options.
func (b *Bar) Update(stage string, done, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar == nil || stage != b.stage {
		if b.bar != nil {
			b.bar.Clear()
		}
		b.stage = stage
		b.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(stage),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(0))
	}
	b.bar.Set(done)
}

// Func returns b.Update, or nil for a nil Bar, for options that skip
// progress work when the callback is nil.
func (b *Bar) Func() func(stage string, done, total int) {
	if b == nil {
		return nil
	}
	return b.Update
}

// Done clears the bar.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.bar.Clear()
		b.bar = nil
	}
}
