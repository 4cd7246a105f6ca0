package flowgraph

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// irregularSeqs returns the first n bytes of the encoded sequences of the
// edges of a poll loop whose polls succeed after a varying number of
// tries, the kind of sequences that dominate large files.
func irregularSeqs(n int) []byte {
	x := uint64(1)
	var raw []byte
	for len(raw) < n {
		var s Seq
		e := int64(1)
		for range 100 {
			x = x*6364136223846793005 + 1442695040888963407
			tries := int64(x>>59) + 1
			for range tries {
				s.Append(e)
				e++
			}
			e += 3
		}
		raw = s.AppendBinary(raw)
	}
	return raw[:n]
}

func TestPack(t *testing.T) {
	for _, n := range []int{0, 1, 64, 65, 200, 1000, 100_000, 3 << 20} {
		raw := irregularSeqs(n)
		b := pack(raw)
		if n > 200 {
			assert.Equal(t, byte(packZstd), b[0], "%d bytes compress", n)
			assert.Less(t, len(b), n)
		}
		got, err := unpack(b)
		require.NoError(t, err, "%d bytes", n)
		assert.Equal(t, string(raw), string(got), "%d bytes", n)
	}
	// a crafted frame: far more bytes than a real graph compresses from
	zeros := make([]byte, 3<<20)
	_, err := unpack(zstdEncoder().EncodeAll(zeros, binary.AppendUvarint([]byte{packZstd}, uint64(len(zeros)))))
	assert.ErrorContains(t, err, "bad length")
	packed := pack(make([]byte, 5000))
	for name, b := range map[string][]byte{
		"empty":         {},
		"unknown codec": {7, 1, 2},
		"no length":     {packZstd},
		"huge length":   {packZstd, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"wrong length":  append([]byte{packZstd, 0x80, 0x20}, packed[3:]...),
		"truncated":     packed[:len(packed)-3],
	} {
		_, err := unpack(b)
		assert.Error(t, err, name)
	}
}

// TestPackWithinRatio: a part that zstd packs more than maxPackRatio times
// (a MiB of zeros) is stored so that readers take it back.
func TestPackWithinRatio(t *testing.T) {
	for _, n := range []int{100, 64 << 10, 1 << 20} {
		raw := make([]byte, n)
		b := pack(raw)
		got, err := unpack(b)
		require.NoError(t, err, "%d zero bytes", n)
		assert.Equal(t, raw, got)
	}
}

// bigTables returns tables of n nodes, edges and sites, whose encoding is
// larger than streamTables from n = 10,000.
func bigTables(n int) graphTables {
	var t graphTables
	for i := range n {
		t.Nodes = append(t.Nodes, Node{Key: NodeKey{Call: "MPI_Send", Site: i, Partner: i % 7}, Count: int64(i + 1),
			Time: Stat{Total: int64(3 * i), Min: 1, Max: int64(i)}, Partners: []PartnerCount{{Rank: i % 3, Count: 2}}})
		t.Edges = append(t.Edges, Edge{Src: i, Dst: (i + 1) % n, Count: 1, Time: Stat{Total: int64(i)}, Counters: []int64{int64(i)}})
		t.Sites = append(t.Sites, CallSite{Addr: uint64(0x400000 + i), Object: "/bin/app", Offset: uint64(i)})
	}
	return t
}

// TestDecodeTables: large tables, decoded as they are unpacked, are the
// tables encoded; lengths they do not hold are errors.
func TestDecodeTables(t *testing.T) {
	want := bigTables(10_000)
	raw, err := msgpack.Marshal(&want)
	require.NoError(t, err)
	require.Greater(t, len(raw), streamTables)
	b := pack(raw)
	require.Equal(t, byte(packZstd), b[0])
	got, err := decodeTables(b)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// an array that claims 2^32-1 nodes, then bytes that do not compress
	// much: an error, not gigabytes allocated
	huge := pack(append([]byte{0x81, 0xa5, 'n', 'o', 'd', 'e', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}, irregularSeqs(2*streamTables)...))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err = decodeTables(huge)
	runtime.ReadMemStats(&m1)
	assert.ErrorContains(t, err, "elements")
	assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(64*len(huge)+16<<20), "bytes allocated")

	// a header that says more bytes than the frame holds
	short := pack(raw[:len(raw)-100])
	lying := append(binary.AppendUvarint([]byte{packZstd}, uint64(len(raw))), short[1+uvarintLen(len(raw)-100):]...)
	_, err = decodeTables(lying)
	assert.Error(t, err)
}

func uvarintLen(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }
