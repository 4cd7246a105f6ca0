package export

import (
	"io"
	"testing"

	"mpiflow/flowgraph"
)

// benchEvents is the size of the benchmark job: 8 ranks of 100k events.
const benchRanks, benchEventsPerRank = 8, 100_000

// benchExport runs write over a generated job and reports events/s.
func benchExport(b *testing.B, write func(w io.Writer, f *flowgraph.File) (int64, error)) {
	f, _ := genFile(b, benchRanks, benchEventsPerRank)
	b.ResetTimer()
	var events int64
	for b.Loop() {
		n, err := write(io.Discard, f)
		if err != nil {
			b.Fatal(err)
		}
		events += n
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkExportCSV(b *testing.B) {
	benchExport(b, func(w io.Writer, f *flowgraph.File) (int64, error) {
		var n int64
		for i := range f.Index {
			r, err := f.ReadRank(i)
			if err != nil {
				return 0, err
			}
			if err := CSV(w, r, i == 0); err != nil {
				return 0, err
			}
			n += r.Graph.NumEvents
		}
		return n, nil
	})
}

func BenchmarkExportChrome(b *testing.B) {
	benchExport(b, func(w io.Writer, f *flowgraph.File) (int64, error) {
		st, err := Chrome(w, f, Options{})
		return st.Events, err
	})
}

func BenchmarkExportPaje(b *testing.B) {
	benchExport(b, func(w io.Writer, f *flowgraph.File) (int64, error) {
		st, err := Paje(w, f, Options{})
		return st.Events, err
	})
}
