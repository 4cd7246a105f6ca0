package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mpiflow/internal/inputfile"
	"strings"
)

// Format is a trace file format the aggregator can read.
type Format string

// Formats told apart by Sniff.
const (
	FormatMpiflow Format = "mpiflow" // read with analysis.Load and aggregate.NewRankSource
	FormatPaje    Format = "paje"    // read with ReadPaje
	FormatOTF2    Format = "otf2"    // read with importer/otf2.Read
)

// Sniff tells the format of the file at path from its first bytes (and,
// for OTF2, the .otf2 name of the archive's anchor file).
func Sniff(path string) (Format, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s: is a directory (for an OTF2 archive give its .otf2 anchor file)", path)
	}
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("MPIFLOW\x00")):
		return FormatMpiflow, nil
	case strings.HasSuffix(path, ".otf2"):
		return FormatOTF2, nil
	case bytes.Contains(head, []byte("%EventDef")):
		return FormatPaje, nil
	}
	return "", fmt.Errorf("%s: unknown trace format (want an mpiflow file, a Pajé trace or an OTF2 anchor file NAME.otf2)", path)
}

// MapStates renames the states of t with f (for instance to group MPI calls
// into classes); states that get the same name become one.
func (t *Trace) MapStates(f func(string) string) {
	index := map[string]int{}
	var names []string
	remap := make([]int, len(t.StateNames))
	for i, s := range t.StateNames {
		m := f(s)
		k, ok := index[m]
		if !ok {
			k = len(names)
			index[m] = k
			names = append(names, m)
		}
		remap[i] = k
	}
	for _, evs := range t.Events {
		for i := range evs {
			evs[i].State = remap[evs[i].State]
		}
	}
	t.StateNames = names
}
