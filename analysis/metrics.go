package analysis

import (
	"math"
	"slices"
	"strings"
)

// Metric names of graph elements. Time, count and bytes exist always
// (bytes for nodes only); the counter metrics exist for edges when the
// recording has the counters they are derived from.
const (
	MetricTime   = "time"
	MetricCount  = "count"
	MetricBytes  = "bytes"
	MetricIPC    = "ipc"
	MetricMIPS   = "mips"
	MetricMFLOPS = "mflops"
	MetricMiss   = "missrate"
)

// counterMap locates the counters that derived metrics need, -1 if absent.
type counterMap struct {
	ins, cyc, fp, miss, access int
}

func newCounterMap(names []string) counterMap {
	cm := counterMap{ins: -1, cyc: -1, fp: -1, miss: -1, access: -1}
	for i, n := range names {
		u := strings.ToUpper(n)
		switch {
		case strings.Contains(u, "TOT_INS") || u == "INSTRUCTIONS":
			cm.ins = i
		case strings.Contains(u, "TOT_CYC") || u == "CYCLES":
			if cm.cyc < 0 {
				cm.cyc = i
			}
		case strings.Contains(u, "FP_OPS") || strings.Contains(u, "DP_OPS") || strings.Contains(u, "SP_OPS") || strings.Contains(u, "FP_INS"):
			if cm.fp < 0 {
				cm.fp = i
			}
		case strings.HasSuffix(u, "_DCM") || strings.HasSuffix(u, "_TCM") || strings.Contains(u, "CACHE-MISSES") || strings.Contains(u, "CACHE_MISSES"):
			if cm.miss < 0 {
				cm.miss = i
			}
		case strings.HasSuffix(u, "_DCA") || strings.HasSuffix(u, "_TCA") || strings.Contains(u, "CACHE-REFERENCES") || strings.Contains(u, "CACHE_REFERENCES"):
			if cm.access < 0 {
				cm.access = i
			}
		}
	}
	return cm
}

// Metrics lists the metrics available for a recording with the given
// counter names, in display order.
func Metrics(counters []string) []string {
	cm := newCounterMap(counters)
	out := []string{MetricTime, MetricCount, MetricBytes}
	if cm.ins >= 0 && cm.cyc >= 0 {
		out = append(out, MetricIPC)
	}
	if cm.ins >= 0 {
		out = append(out, MetricMIPS)
	}
	if cm.fp >= 0 {
		out = append(out, MetricMFLOPS)
	}
	if cm.miss >= 0 && (cm.access >= 0 || cm.ins >= 0) {
		out = append(out, MetricMiss)
	}
	return out
}

// MetricUnit is the unit shown in legends.
func MetricUnit(m string) string {
	switch m {
	case MetricTime:
		return "s"
	case MetricCount:
		return "calls/phases"
	case MetricBytes:
		return "B"
	case MetricIPC:
		return "instr/cycle"
	case MetricMIPS:
		return "MIPS"
	case MetricMFLOPS:
		return "MFLOPS"
	case MetricMiss:
		return "misses per access (or per 1000 instr)"
	}
	return ""
}

// derived computes the counter metrics of a compute phase from its counter
// sums and time in ns.
func derived(metrics []string, cm counterMap, ctr []int64, timeNS int64, vals []float64) {
	get := func(i int) float64 {
		if i < 0 || i >= len(ctr) {
			return math.NaN()
		}
		return float64(ctr[i])
	}
	us := float64(timeNS) / 1e3
	for k, m := range metrics {
		v := math.NaN()
		switch m {
		case MetricIPC:
			if c := get(cm.cyc); c > 0 {
				v = get(cm.ins) / c
			}
		case MetricMIPS:
			if us > 0 {
				v = get(cm.ins) / us
			}
		case MetricMFLOPS:
			if us > 0 {
				v = get(cm.fp) / us
			}
		case MetricMiss:
			if a := get(cm.access); a > 0 {
				v = get(cm.miss) / a
			} else if i := get(cm.ins); i > 0 {
				v = 1000 * get(cm.miss) / i
			}
		default:
			continue
		}
		vals[k] = v
	}
}

func newVals(metrics []string, time float64, count float64, bytes float64) []float64 {
	v := make([]float64, len(metrics))
	for k, m := range metrics {
		switch m {
		case MetricTime:
			v[k] = time
		case MetricCount:
			v[k] = count
		case MetricBytes:
			v[k] = bytes
		default:
			v[k] = math.NaN()
		}
	}
	return v
}

// MetricIndex returns the position of m in metrics, -1 if absent.
func MetricIndex(metrics []string, m string) int { return slices.Index(metrics, m) }
