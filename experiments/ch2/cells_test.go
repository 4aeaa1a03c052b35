package ch2

import (
	"errors"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

func TestSteps(t *testing.T) {
	l := memlab.MustOpen(memlab.Budget(1<<30), memlab.NotCurrent())
	defer l.Close()
	if err := Steps(l, 5, 256<<20); err != nil {
		t.Fatal(err)
	}
	st := l.MemoryStats()
	if l.MemoryAllocated() != 0 || st["num_device_alloc"] != 1 || l.MaxMemoryAllocated() != 256<<20 {
		t.Errorf("5 steps of 256 MiB: allocated %d, peak %d, %d cudaMalloc calls; want 0, 256 MiB, 1",
			l.MemoryAllocated(), l.MaxMemoryAllocated(), st["num_device_alloc"])
	}
	if err := Steps(l, 2, 2<<30); !memlab.IsOutOfMemory(err) {
		t.Errorf("a 2 GiB step in 1 GiB: %v, want out of memory", err)
	}
}

func TestDeviceCounts(t *testing.T) {
	l := memlab.MustOpen(memlab.Budget(1<<30), memlab.NotCurrent())
	defer l.Close()
	free0, err := DeviceFree(l)
	if err != nil {
		t.Fatal(err)
	}
	dev0, err := DeviceBytes(l)
	if err != nil {
		t.Fatal(err)
	}
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 64<<20))
	defer x.Release()
	free1, _ := DeviceFree(l)
	dev1, _ := DeviceBytes(l)
	if free0-free1 < 64<<20 {
		t.Errorf("a 64 MiB tensor moved mem_get_info's free by %d", free0-free1)
	}
	// allocated, reserved and the driver's count each grow by at least 64 MiB.
	if dev1-dev0 < 3*(64<<20) {
		t.Errorf("a 64 MiB tensor moved DeviceBytes by %d", dev1-dev0)
	}
}

func TestTooFragmented(t *testing.T) {
	oom := &allocator.OutOfMemoryError{}
	split := allocator.Snapshot{Segments: []allocator.Segment{
		{TotalSize: 2 * Request, Blocks: []allocator.Block{{Size: Request / 2, State: allocator.StateInactive}, {Size: Request / 2, State: allocator.StateActiveAllocated}, {Size: Request / 2, State: allocator.StateInactive}, {Size: Request / 2, State: allocator.StateInactive}}},
	}}
	whole := allocator.Snapshot{Segments: []allocator.Segment{{TotalSize: Request, Blocks: []allocator.Block{{Size: Request, State: allocator.StateInactive}}}}}
	for _, c := range []struct {
		name string
		snap allocator.Snapshot
		err  error
		want bool
	}{
		{"enough free bytes, none contiguous", split, oom, true},
		{"served", split, nil, false},
		{"another error", split, errors.New("bad"), false},
		{"a free block large enough", whole, oom, false},
		{"too few free bytes", allocator.Snapshot{}, oom, false},
	} {
		if got := TooFragmented(c.snap, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHostBytesEach(t *testing.T) {
	var kept [][]byte
	calls := 0
	n := HostBytesEach(10, func(i int) {
		calls++
		kept = append(kept, make([]byte, 1<<20))
	})
	if calls != 10 || n < 10<<20 {
		t.Errorf("10 calls of 1 MiB: %d calls, %d bytes", calls, n)
	}
	if len(kept) != 10 {
		t.Fatal(len(kept))
	}
}

func TestAllocRow(t *testing.T) {
	l := memlab.MustOpen(memlab.Budget(1<<30), memlab.NotCurrent())
	defer l.Close()
	other := memlab.MustOpen(memlab.Budget(1<<30), memlab.NotCurrent())
	defer other.Close()
	x := memlab.Must(tensor.Empty(l, tensor.Uint8, 24))
	defer x.Release()
	tab := AllocTable()
	if err := AllocRow(tab, l, "24 B", x); err != nil {
		t.Fatal(err)
	}
	want := []string{"24 B", "512 bytes", "small", "2.00 MiB", "512 bytes", "2.00 MiB", "1", "0"}
	if len(tab.Rows) != 1 || len(tab.Rows[0]) != len(tab.Header) || strings.Join(tab.Rows[0], "|") != strings.Join(want, "|") {
		t.Errorf("the row of a 24-byte tensor: %q, want %q", tab.Rows, want)
	}
	if err := AllocRow(tab, other, "24 B", x); err == nil || len(tab.Rows) != 1 {
		t.Errorf("a tensor of another lab: %v, %d rows", err, len(tab.Rows))
	}
}

func TestGiBThenHalf(t *testing.T) {
	def := memlab.MustOpen(memlab.Budget(4<<30), memlab.NotCurrent())
	defer def.Close()
	split := memlab.MustOpen(memlab.Budget(4<<30), memlab.NotCurrent(), memlab.AllocConf("max_split_size_mb:128"))
	defer split.Close()
	if err := GiBThenHalf(def, split); err != nil {
		t.Fatal(err)
	}
	if def.MemoryReserved() != 1<<30 || split.MemoryReserved() != 3<<29 || def.MemoryAllocated()+split.MemoryAllocated() != 0 {
		t.Errorf("reserved %d under the defaults, %d under max_split_size_mb:128, %d allocated; want 1 GiB, 1.5 GiB, 0",
			def.MemoryReserved(), split.MemoryReserved(), def.MemoryAllocated()+split.MemoryAllocated())
	}
	small := memlab.MustOpen(memlab.Budget(512<<20), memlab.NotCurrent())
	defer small.Close()
	if err := GiBThenHalf(small); !memlab.IsOutOfMemory(err) {
		t.Errorf("1 GiB in 512 MiB: %v, want out of memory", err)
	}
}
