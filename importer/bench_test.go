package importer

import (
	"bytes"
	"path/filepath"
	"testing"

	"mpiflow/export"
	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

func BenchmarkParsePaje(b *testing.B) {
	h, ranks := flowgen.Run(flowgen.Options{Seed: 3, Events: 100_000, Depth: 3, Sites: 12, Branchy: true}, 8, 4)
	path := filepath.Join(b.TempDir(), "job.mpiflow")
	if err := flowgraph.WriteFile(path, h, ranks); err != nil {
		b.Fatal(err)
	}
	f, err := flowgraph.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	st, err := export.Paje(&buf, f, export.Options{})
	if err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var events int64
	for b.Loop() {
		if _, err := ParsePaje(bytes.NewReader(data), "bench.paje", PajeOptions{}); err != nil {
			b.Fatal(err)
		}
		events += st.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
