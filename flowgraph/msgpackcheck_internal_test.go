package flowgraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

func TestCheckLengths(t *testing.T) {
	valid, err := msgpack.Marshal(map[string]any{
		"a": []any{1, -1, 300, -300, 70000, int64(1) << 40, 1.5, float32(2.5), "s", []byte{1, 2}, nil, true},
		"m": map[string]any{"x": []int{}, "y": make([]int, 20)},
		"s": string(make([]byte, 40)),
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"valid", valid, true},
		{"fixext16", append([]byte{0xd8, 1}, make([]byte, 16)...), true},
		{"ext8", []byte{0xc7, 2, 5, 0, 0}, true},
		{"empty", nil, false},
		{"array32 of 2^32-1", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, false},
		{"map16 past the end", []byte{0xde, 0x00, 0x02, 1, 2, 3}, false},
		{"array with one element missing", []byte{0x93, 1, 2}, false},
		{"str32 past the end", []byte{0xdb, 0, 0, 1, 0, 'a'}, false},
		{"bin8 length cut", []byte{0xc4}, false},
		{"invalid byte", []byte{0xc1}, false},
		{"nested arrays claiming more than remains", []byte{0x92, 0x9f, 0x9f}, false},
		{"truncated valid", valid[:len(valid)-1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLengths(tc.in)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// A rank block whose array header claims billions of elements is an
// error, not an allocation of gigabytes.
func TestDecodeRankHugeArray(t *testing.T) {
	// One key per map: Go's map order would put "rank" last half the time.
	b, err := msgpack.Marshal(map[string]any{"graph": map[string]any{"nodes": []any{}}})
	require.NoError(t, err)
	i := len(b) - 1
	require.Equal(t, byte(0x90), b[i])
	b = append(b[:i], 0xdd, 0xa7, 0x69, 0x6e, 0x69)
	_, err = DecodeRank(b)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "elements")
}
