package parallel

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, tt := range []struct{ n, workers int }{{0, 4}, {1, 4}, {100, 1}, {100, 3}, {7, 0}, {5, -2}} {
		calls := make([]int32, tt.n)
		err := For(tt.n, tt.workers, func(i int) error {
			atomic.AddInt32(&calls[i], 1)
			return nil
		})
		require.NoError(t, err)
		for i, c := range calls {
			assert.Equal(t, int32(1), c, "n=%d workers=%d index %d", tt.n, tt.workers, i)
		}
	}
}

func TestForBoundsWorkers(t *testing.T) {
	var running, most int32
	err := For(50, 3, func(int) error {
		r := atomic.AddInt32(&running, 1)
		for {
			m := atomic.LoadInt32(&most)
			if r <= m || atomic.CompareAndSwapInt32(&most, m, r) {
				break
			}
		}
		for range 1000 {
			_ = atomic.LoadInt32(&running)
		}
		atomic.AddInt32(&running, -1)
		return nil
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, most, int32(3))
	assert.GreaterOrEqual(t, most, int32(1))
}

// With one worker the calls run in order, so the first error stops the
// rest: index 3 fails and no later index is called.
func TestForStopsAtFirstError(t *testing.T) {
	bad := errors.New("bad")
	var last int32 = -1
	err := For(10, 1, func(i int) error {
		atomic.StoreInt32(&last, int32(i))
		if i == 3 {
			return bad
		}
		return nil
	})
	assert.ErrorIs(t, err, bad)
	assert.Equal(t, int32(3), last)
}
