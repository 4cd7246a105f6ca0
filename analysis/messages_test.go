package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPairMessagesBackwards: a pairing whose receive ends before its send
// starts is left out and counted.
func TestPairMessagesBackwards(t *testing.T) {
	got := PairMessages([]*MessageEnds{
		{rank: 0, ends: [2]map[int][]int64{dirSend: {1: {10, 20}}}},
		{rank: 1, ends: [2]map[int][]int64{dirRecv: {0: {5, 25}}}},
	})
	assert.Equal(t, MessagePairs{Msgs: []Message{{Src: 0, Send: 20, Dst: 1, Recv: 25}}, Backwards: 1}, got)
}

// TestPairMessagesOrder: messages sent at once by one rank to several come
// in one order, whatever the order of the maps they are paired from.
func TestPairMessagesOrder(t *testing.T) {
	list := []*MessageEnds{{rank: 0, ends: [2]map[int][]int64{dirSend: {}}}}
	var want []Message
	for b := 1; b <= 8; b++ {
		list[0].ends[dirSend][b] = []int64{10}
		list = append(list, &MessageEnds{rank: b, ends: [2]map[int][]int64{dirRecv: {0: {20 - int64(b)}}}})
		want = append(want, Message{Src: 0, Send: 10, Dst: int64(b), Recv: 20 - int64(b)})
	}
	for range 20 {
		assert.Equal(t, MessagePairs{Msgs: want}, PairMessages(list))
	}
}

// TestPairMessagesAmbiguous: the sends of a partner that some call site
// shares with others, or whose counts differ from the receives, are not
// paired.
func TestPairMessagesAmbiguous(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []*MessageEnds
	}{
		{"several partners", []*MessageEnds{
			{rank: 0, ends: [2]map[int][]int64{dirSend: {1: {10}}}, ambiguous: [2]map[int]bool{dirSend: {1: true}}},
			{rank: 1, ends: [2]map[int][]int64{dirRecv: {0: {15}}}},
		}},
		{"counts differ", []*MessageEnds{
			{rank: 0, ends: [2]map[int][]int64{dirSend: {1: {10, 20}}}},
			{rank: 1, ends: [2]map[int][]int64{dirRecv: {0: {15}}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, MessagePairs{Ambiguous: true}, PairMessages(tc.list))
		})
	}
}

// TestP2PDir: the calls that name one partner, by direction.
func TestP2PDir(t *testing.T) {
	for call, want := range map[string]int{"MPI_Isend": dirSend, "MPI_Rsend": dirSend, "MPI_Mrecv": dirRecv,
		"MPI_Irecv": dirRecv, "MPI_Sendrecv": -1, "MPI_Bcast": -1} {
		assert.Equal(t, want, p2pDir(call), call)
	}
}
