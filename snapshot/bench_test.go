package snapshot_test

import (
	"io"
	"os"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// BenchmarkRead decodes the largest reference snapshots; b.N reads, with the
// events per second reported.
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct{ folder, name string }{
		{reference.Workloads211, "resnet_multiscale_train__default.pickle"},
		{reference.Torch211, "snapshot_d.pickle"},
	} {
		b.Run(c.name, func(b *testing.B) {
			path, err := reference.File(c.folder, c.name)
			if err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				s, err := snapshot.Read(bytesReader(data))
				if err != nil {
					b.Fatal(err)
				}
				events = 0
				for _, t := range s.Traces {
					events += len(t)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkWrite pickles the largest workload snapshot.
func BenchmarkWrite(b *testing.B) {
	path, err := reference.File(reference.Workloads211, "resnet_multiscale_train__default.pickle")
	if err != nil {
		b.Fatal(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
