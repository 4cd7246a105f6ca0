package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMetricsFromCounters(t *testing.T) {
	assert.Equal(t, []string{"time", "count", "bytes"}, Metrics(nil))
	assert.Equal(t, []string{"time", "count", "bytes", "ipc", "mips", "mflops", "missrate"},
		Metrics([]string{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS", "PAPI_L1_DCM"}))
	vals := make([]float64, 7)
	m := Metrics([]string{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS", "PAPI_L1_DCM"})
	// 2e6 instructions in 1e6 cycles and 1 ms: IPC 2, 2000 MIPS; 5e5 flops:
	// 500 MFLOPS; 1000 misses per 2e6 instructions: 0.5 per 1000.
	derived(m, newCounterMap([]string{"PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS", "PAPI_L1_DCM"}),
		[]int64{2_000_000, 1_000_000, 500_000, 1000}, 1_000_000, vals)
	assert.InDelta(t, 2, vals[3], 1e-9)
	assert.InDelta(t, 2000, vals[4], 1e-9)
	assert.InDelta(t, 500, vals[5], 1e-9)
	assert.InDelta(t, 0.5, vals[6], 1e-9)
}
