package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Renderer lays out DOT graphs: it returns one SVG document per DOT text,
// in order.
type Renderer interface {
	Render(ctx context.Context, dots []string) ([][]byte, error)
}

// Graphviz is the Renderer that runs Graphviz's dot executable Path ("dot"
// from PATH if empty), once per call.
type Graphviz struct {
	Path string
}

// Render lays out the DOT texts with one run of dot.
func (g Graphviz) Render(ctx context.Context, dots []string) ([][]byte, error) {
	return Render(ctx, g.Path, dots)
}

// ErrNoDot is returned by Render when Graphviz is not installed.
var ErrNoDot = errors.New("graphviz 'dot' not found (install the graphviz package)")

// Graphviz runs at most renderTimeout and may write at most maxSVGBytes:
// a pathological graph must not hang the report or fill the memory.
const (
	renderTimeout = 10 * time.Minute
	maxSVGBytes   = 256 << 20
)

// Render lays out the DOT texts with Graphviz in one run of dotPath ("dot"
// from PATH if empty) and returns one SVG document per text, as Graphviz
// wrote it.
func Render(ctx context.Context, dotPath string, dots []string) ([][]byte, error) {
	return renderDOT(ctx, dotPath, dots, renderTimeout, maxSVGBytes)
}

func renderDOT(ctx context.Context, dotPath string, dots []string, timeout time.Duration, maxOut int) ([][]byte, error) {
	if len(dots) == 0 {
		return nil, nil
	}
	if dotPath == "" {
		dotPath = "dot"
	}
	path, err := exec.LookPath(dotPath)
	if err != nil {
		return nil, ErrNoDot
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-Tsvg")
	cmd.Stdin = strings.NewReader(strings.Join(dots, "\n"))
	out := &cappedBuffer{max: maxOut, cancel: cancel}
	var errb bytes.Buffer
	cmd.Stdout = out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		switch {
		case out.over:
			return nil, fmt.Errorf("graphviz dot: wrote more than %d MiB of SVG, stopped", maxOut>>20)
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("graphviz dot: still running after %v, stopped", timeout)
		}
		return nil, fmt.Errorf("graphviz dot: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	// Graphviz writes one document per input graph, each starting with
	// an XML declaration.
	var docs [][]byte
	for _, part := range bytes.Split(out.Bytes(), []byte("<?xml")) {
		if len(bytes.TrimSpace(part)) > 0 {
			docs = append(docs, append([]byte("<?xml"), part...))
		}
	}
	if len(docs) != len(dots) {
		return nil, fmt.Errorf("graphviz dot: wrote %d SVG documents for %d graphs", len(docs), len(dots))
	}
	return docs, nil
}

// cappedBuffer takes at most max bytes: past them it calls cancel (which
// stops the writing process) and fails. (It does not embed bytes.Buffer,
// whose ReadFrom io.Copy would call instead of Write.)
type cappedBuffer struct {
	buf    bytes.Buffer
	max    int
	over   bool
	cancel func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		b.cancel()
		return 0, errors.New("output limit reached")
	}
	return b.buf.Write(p)
}

// Bytes returns what was written.
func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }
