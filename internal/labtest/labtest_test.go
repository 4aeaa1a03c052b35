package labtest_test

import (
	"testing"

	"memlab.dev/memlab/internal/labtest"
	"memlab.dev/memlab/tensor"
)

func TestOpen(t *testing.T) {
	l := labtest.Open(t, "1GiB")
	free, total, err := l.MemGetInfo()
	if err != nil {
		t.Fatal(err)
	}
	if total != 1<<30 || free > total {
		t.Fatalf("MemGetInfo: free %d, total %d; want a 1 GiB device", free, total)
	}
	x, err := tensor.Zeros(l, tensor.Float32, 256)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.MemoryAllocated(); got != 1024 {
		t.Errorf("MemoryAllocated %d after a 1 KiB tensor, want 1024", got)
	}
	if err := x.Release(); err != nil {
		t.Fatal(err)
	}
}
