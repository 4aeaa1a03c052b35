package sim_test

import (
	"testing"

	"memlab.dev/memlab/device/sim"
)

// BenchmarkMallocFree measures one Malloc and Free with 1000 other segments
// live, the cost a replayed allocator trace pays per cudaMalloc (with no
// modelled latency).
func BenchmarkMallocFree(b *testing.B) {
	d, err := sim.New(sim.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for i := range 1000 {
		if _, err := d.Malloc(uint64(1+i%5) * 2 << 20); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		a, err := d.Malloc(20 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Free(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMapUnmap measures mapping and unmapping one 2 MiB page of a large
// reservation.
func BenchmarkMapUnmap(b *testing.B) {
	d, err := sim.New(sim.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	r, err := d.ReserveAddress(90 << 30)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := d.Map(r, sim.Granularity); err != nil {
			b.Fatal(err)
		}
		if err := d.Unmap(r, sim.Granularity); err != nil {
			b.Fatal(err)
		}
	}
}
