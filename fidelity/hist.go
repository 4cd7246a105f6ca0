package fidelity

import "math/bits"

// subBits sets the histogram's resolution: values below 2^(subBits+1) are
// exact, larger ones fall in buckets 2^-subBits of their value wide.
const subBits = 7

// hist counts non-negative values in log-linear buckets, so percentiles of
// any number of values take bounded memory (at most 8k buckets) and are
// within 1% of the exact ones; the maximum is exact.
type hist struct {
	counts []int64
	n      int64
	max    int64
}

func bucketOf(v int64) int {
	const exact = 2 << subBits
	if v < exact {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - subBits - 1 // >= 1
	mant := int(v >> e)                      // in [2^subBits, 2^(subBits+1))
	return exact + (e-1)<<subBits + mant - 1<<subBits
}

// lowest is the smallest value of bucket b.
func lowest(b int) int64 {
	const exact = 2 << subBits
	if b < exact {
		return int64(b)
	}
	b -= exact
	e := b>>subBits + 1
	mant := int64(b&(1<<subBits-1) + 1<<subBits)
	return mant << e
}

// add counts v (negative values count as their absolute value).
func (h *hist) add(v int64) {
	if v < 0 {
		v = -v
	}
	b := bucketOf(v)
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]int64, b+1-len(h.counts))...)
	}
	h.counts[b]++
	h.n++
	h.max = max(h.max, v)
}

// merge adds the values of o.
func (h *hist) merge(o *hist) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]int64, len(o.counts)-len(h.counts))...)
	}
	for b, c := range o.counts {
		h.counts[b] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile is the nearest-rank q-quantile (0 < q <= 1): the smallest value
// of the bucket that holds the ceil(q*n)-th smallest value; 0 without
// values.
func (h *hist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	k := int64(q*float64(h.n) + 0.999999999)
	k = min(max(k, 1), h.n)
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= k {
			return min(lowest(b), h.max)
		}
	}
	return h.max
}

// Percentiles summarizes the distribution of an error, in ns.
type Percentiles struct {
	P50 int64 `json:"p50"`
	P90 int64 `json:"p90"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

func (h *hist) percentiles() Percentiles {
	return Percentiles{P50: h.quantile(0.5), P90: h.quantile(0.9), P99: h.quantile(0.99), Max: h.max}
}
