//go:build cgo && !nootf2

package otf2

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/aggregate"
	"mpiflow/importer"
)

// fuzzTrace builds a trace from data: a header of 1 byte (locations - 1,
// up to 4), 8 bytes resolution and 8 bytes offset, then records of 11
// bytes: location, flags (bit 0 Enter), region, and an 8-byte tick.
func fuzzTrace(data []byte) (*importer.Trace, error) {
	if len(data) < 17 {
		return nil, nil
	}
	nres := int(data[0]%4) + 1
	tr := &importer.Trace{Name: "fuzz"}
	for r := range nres {
		tr.Containers = append(tr.Containers, importer.Container{Name: string(rune('a' + r)), Parent: -1, Resource: r})
		tr.Res = append(tr.Res, aggregate.Resource{Name: string(rune('a' + r))})
	}
	res := binary.LittleEndian.Uint64(data[1:])
	if res == 0 {
		return nil, nil // read() rejects a zero resolution before the events
	}
	e := newEvents(tr, res, binary.LittleEndian.Uint64(data[9:]), map[uint32]string{1: "MPI_Send"})
	for data = data[17:]; len(data) >= 11; data = data[11:] {
		if err := e.add(int(data[0])%nres, binary.LittleEndian.Uint64(data[3:]), uint32(data[2]), data[1]&1 != 0); err != nil {
			return nil, err
		}
	}
	return tr, e.finish()
}

func record(loc, flags, region byte, tick uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{loc, flags, region}, tick)
}

func TestEventsChecks(t *testing.T) {
	head := append([]byte{1}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1000), 10)...)
	tests := []struct {
		name string
		recs [][]byte
		want string
	}{
		{"before offset", [][]byte{record(0, 1, 1, 5)}, "time 5 before the global offset 10"},
		{"out of range", [][]byte{record(0, 1, 1, 1<<63)}, "out of range"},
		{"goes back", [][]byte{record(0, 1, 1, 20), record(0, 0, 1, 15)}, `location "a": time goes back`},
		{"unmatched leave", [][]byte{record(1, 1, 1, 20), record(1, 0, 2, 30)}, `location "b": Leave of region "" at 20000000 ns`},
		{"no events", nil, "no Enter/Leave events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := append([]byte(nil), head...)
			for _, r := range tt.recs {
				data = append(data, r...)
			}
			_, err := fuzzTrace(data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	data := append(append(append([]byte(nil), head...), record(0, 1, 1, 1010)...), record(0, 0, 1, 1510)...)
	tr, err := fuzzTrace(data)
	require.NoError(t, err)
	assert.Equal(t, [][]aggregate.StateEvent{{{Resource: 0, State: 0, Start: 1e9, End: 1.5e9}}, nil}, tr.Events)
	assert.Equal(t, []string{"MPI_Send"}, tr.StateNames)
}

// FuzzEvents feeds arbitrary Enter/Leave events and clock properties to
// the checks of the OTF2 reader: errors or a consistent trace, never a
// panic.
func FuzzEvents(f *testing.F) {
	head := append([]byte{1}, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1000), 10)...)
	f.Add(append(append(append([]byte(nil), head...), record(0, 1, 1, 1010)...), record(0, 0, 1, 1510)...))
	f.Add(append(append(append([]byte(nil), head...), record(1, 1, 1, 20)...), record(1, 1, 2, 30)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := fuzzTrace(data)
		if err != nil || tr == nil {
			return
		}
		require.Len(t, tr.Events, len(tr.Res))
		for r, evs := range tr.Events {
			for i, ev := range evs {
				require.Equal(t, r, ev.Resource)
				require.Less(t, ev.Start, ev.End)
				require.GreaterOrEqual(t, ev.Start, tr.Start)
				require.LessOrEqual(t, ev.End, tr.End)
				require.True(t, ev.State >= 0 && ev.State < len(tr.StateNames))
				if i > 0 {
					require.LessOrEqual(t, evs[i-1].End, ev.Start, "intervals in time order")
				}
			}
		}
		_, err = aggregate.NewHierarchy(tr.DefaultSpec(), tr.Resources())
		require.NoError(t, err)
	})
}
