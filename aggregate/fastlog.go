package aggregate

import "math"

// logTableBits is the number of mantissa bits that index logTable.
const logTableBits = 8

// logTable[i] holds 1/c and ln(c) for c = 1 + i/256, the left end of the
// i-th of 256 sub-intervals of [1, 2).
var logTable = func() (t [1 << logTableBits][2]float64) {
	for i := range t {
		c := 1 + float64(i)/(1<<logTableBits)
		t[i] = [2]float64{1 / c, math.Log(c)}
	}
	return t
}()

// fastLog is the natural logarithm of x > 0, accurate to about 1e-15 and
// three to four times faster than math.Log, which dominates the cost of
// the gain and loss matrices. x = 2^e m with m in [1, 2) and m = c (1 + r)
// with c from a 256-entry table, so r < 1/256 and five terms of the series
// of ln(1 + r) leave an error below r^6/6 < 1e-15.
func fastLog(x float64) float64 {
	b := math.Float64bits(x)
	e := int(b>>52&0x7ff) - 1023
	if e == -1023 || e == 1024 || b>>63 != 0 {
		// Zero, subnormal, infinite, NaN or negative: the slow path.
		return math.Log(x)
	}
	i := b >> (52 - logTableBits) & (1<<logTableBits - 1)
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	t := &logTable[i]
	r := m*t[0] - 1
	p := r * (1 + r*(-1.0/2+r*(1.0/3+r*(-1.0/4+r*(1.0/5)))))
	return float64(e)*math.Ln2 + t[1] + p
}
