package snapshot_test

import (
	"bytes"
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

// BenchmarkReadMillion reads a snapshot of about a million trace entries: the
// resnet workload's trace repeated (with its stacks) to 1,000,000 entries, written
// by Write. The whatif goal (1 M events under 8 configurations in 5 s) needs this
// well under a second.
func BenchmarkReadMillion(b *testing.B) {
	path, err := reference.File(reference.Workloads211, "resnet_multiscale_train__default.pickle")
	if err != nil {
		b.Fatal(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000000
	src := s.Traces[0]
	span := src[len(src)-1].TimeUS - src[0].TimeUS + 1
	big := make([]snapshot.TraceEntry, 0, n)
	for rep := int64(0); len(big) < n; rep++ {
		for _, e := range src[:min(len(src), n-len(big))] {
			e.TimeUS += rep * span // time runs on: Read refuses a trace whose time runs backwards
			big = append(big, e)
		}
	}
	s.Traces[0] = big
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := snapshot.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
