// Package mpicall classifies MPI calls by name: the group of a call
// (point-to-point, collective, wait, I/O or other) and the direction of
// the point-to-point calls that send or receive one message. Its table is
// generated with the wrappers from interpose/gen/mpi.spec (the rules are
// in interpose/gen/taxonomy.go); names the spec lacks, such as those of
// imported traces, are grouped by their prefix.
package mpicall

import "strings"

//go:generate go run ../interpose/gen -spec ../interpose/gen/mpi.spec -taxonomy calls_gen.go

// Call groups.
const (
	P2P        = "p2p"        // point-to-point, partitioned and one-sided
	Collective = "collective" // blocking, nonblocking or persistent
	Wait       = "wait"       // MPI_Wait*, MPI_Test*, MPI_Parrived and RMA synchronization
	IO         = "io"         // MPI_File_*
	Other      = "other"
)

// Key is the name of a call's group in the table: without the MPI_ or
// PMPI_ prefix, lower case, large-count (_c) forms as their int forms and
// persistent (_init) ones as the calls they start.
func Key(call string) string {
	k := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(call, "MPI_"), "PMPI_"))
	return strings.TrimSuffix(strings.TrimSuffix(k, "_c"), "_init")
}

// Group returns the group of an MPI call (P2P, Collective, Wait, IO or
// Other); its large-count (_c) and persistent (_init) forms have the group
// of the call (Key).
func Group(call string) string {
	k := Key(call)
	if g, ok := specGroup(k); ok {
		return g
	}
	return prefixGroup(k)
}

// Dir is the direction of a point-to-point call relative to its recorded
// partner.
type Dir int

// Directions.
const (
	DirNone     Dir = iota // no message, or not to a single partner
	DirSend                // sends one message to the partner
	DirRecv                // receives one message from the partner
	DirSendRecv            // sends to the partner (dest) and receives (MPI_Sendrecv)
)

// Direction returns the direction of an MPI call named as the wrappers
// name it; large-count (_c) forms are their int forms.
func Direction(call string) Dir {
	return specDirection(strings.TrimSuffix(call, "_c"))
}
