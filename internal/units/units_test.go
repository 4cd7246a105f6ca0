package units

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0 B"}, {8, "8 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{3.2 * (1 << 20), "3.2 MiB"}, {5 << 30, "5.0 GiB"}, {math.NaN(), "n/a"},
	} {
		assert.Equal(t, tc.want, Bytes(tc.in), "%v", tc.in)
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {31.694, "31.69"}, {1, "1.00"}, {0.0042123, "0.00421"}, {4.4123e-5, "4.41e-05"}, {math.NaN(), "n/a"},
	} {
		assert.Equal(t, tc.want, Seconds(tc.in), "%v", tc.in)
	}
	assert.Equal(t, "0.0015", NS(1_500_000))
}

func TestCounts(t *testing.T) {
	assert.Equal(t, "31", Count(31))
	assert.Equal(t, "2.5", Count(2.5))
	assert.Equal(t, "5701", Count(5701.4))
	assert.Equal(t, "6.48", PerIteration(6.4757))
	assert.Equal(t, "1", PerIteration(1))
	assert.Equal(t, "1200", PerIteration(1200.258))
}
