package report

import (
	"fmt"
	"math"
	"strings"

	"mpiflow/analysis"
	"mpiflow/internal/units"
)

// formatMetric formats a metric value for legends and tooltips.
func formatMetric(m string, v float64) string {
	switch m {
	case analysis.MetricTime:
		return units.Seconds(v) + " s"
	case analysis.MetricCount:
		return units.Count(v)
	case analysis.MetricBytes:
		return units.Bytes(v)
	default:
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.3g", v)
	}
}

// Label is the text drawn on an element, as in the paper: node
// "MPI_Allreduce 8 B cs=68 t=31.69", edge "200 (0.01)", loop node with its
// header call, iterations and accumulated time ("Loop 5 · MPI_Irecv").
func Label(e *analysis.Elem, metrics []string) string {
	val := func(m string) float64 {
		if i := analysis.MetricIndex(metrics, m); i >= 0 {
			return e.Vals[i]
		}
		return math.NaN()
	}
	t, n := val(analysis.MetricTime), val(analysis.MetricCount)
	switch e.Kind {
	case analysis.KindLoop:
		return fmt.Sprintf("%s \u00b7 %s\n%s it t=%s", e.Name, e.Call, units.Count(n), units.Seconds(t))
	case analysis.KindEdge:
		return fmt.Sprintf("%s (%s)", units.Count(n), units.Seconds(t))
	}
	if e.Merged > 0 {
		return fmt.Sprintf("%s other nodes\n%s calls t=%s", units.Count(float64(e.Merged)), units.Count(n), units.Seconds(t))
	}
	size := 0.0
	if n > 0 {
		size = val(analysis.MetricBytes) / n
	}
	if e.Site >= 0 {
		return fmt.Sprintf("%s %s cs=%d t=%s", e.Call, units.Bytes(size), e.Site, units.Seconds(t))
	}
	return fmt.Sprintf("%s %s t=%s", e.Call, units.Bytes(size), units.Seconds(t))
}

// Tooltip is the hover text of an element: call site function, file and
// line, the function's full signature, and every metric.
func Tooltip(e *analysis.Elem, metrics []string, lg *analysis.Level) string {
	var b strings.Builder
	switch e.Kind {
	case analysis.KindNode:
		if e.Merged > 0 {
			b.WriteString(e.Where)
			break
		}
		// The call site id links the hover text to the label's cs=N.
		fmt.Fprintf(&b, "%s at %s", shortName(e), e.Where)
		b.WriteString(signatureLine(e))
	case analysis.KindLoop:
		fmt.Fprintf(&b, "%s: header %s at %s; %s entries, %s calls, %.1f%% of the rank's time (click to open)",
			e.Name, e.Call, e.Where, units.Count(e.Entries), units.Count(e.Calls), 100*e.Share)
		b.WriteString(signatureLine(e))
		t := e.Vals[analysis.MetricIndex(metrics, analysis.MetricTime)]
		if n := e.Vals[analysis.MetricIndex(metrics, analysis.MetricCount)]; n > 0 {
			fmt.Fprintf(&b, "\nper iteration: %s s, %s calls", units.Seconds(t/n), units.PerIteration(e.Calls/n))
		}
	case analysis.KindEdge:
		src, dst := &lg.Nodes[e.Src], &lg.Nodes[e.Dst]
		fmt.Fprintf(&b, "compute phase %s -> %s", shortName(src), shortName(dst))
		if e.Back {
			b.WriteString(" (back edge: from the end of an iteration to the start of the next)")
		}
	}
	for k, m := range metrics {
		if math.IsNaN(e.Vals[k]) {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s", m, formatMetric(m, e.Vals[k]))
	}
	return b.String()
}

// signatureLine is a line of the tooltip with the full signature of the
// call site's function, if Where shortens it.
func signatureLine(e *analysis.Elem) string {
	if e.Signature == "" {
		return ""
	}
	return "\nfunction " + e.Signature
}

func shortName(e *analysis.Elem) string {
	if e.Kind == analysis.KindLoop {
		return e.Name
	}
	if e.Site >= 0 {
		return fmt.Sprintf("%s cs=%d", e.Call, e.Site)
	}
	return e.Call
}

// loopKeyIndex gives, per level of levels, the index in keyIdx of its
// loop node's key (-1 for the top level or a loop not found).
func loopKeyIndex(levels []analysis.Level, keyIdx map[string]int) []int {
	out := make([]int, len(levels))
	for i := range out {
		out[i] = -1
	}
	for l := range levels {
		for _, e := range levels[l].Nodes {
			if e.Kind != analysis.KindLoop || e.Loop < 0 || e.Loop >= len(out) {
				continue
			}
			if k, ok := keyIdx[e.Key]; ok {
				out[e.Loop] = k
			}
		}
	}
	return out
}
