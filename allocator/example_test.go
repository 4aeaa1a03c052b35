package allocator_test

import (
	"errors"
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/replay"
)

const MiB = 1 << 20

// newAllocator returns an allocator over a simulated 80 GiB device.
func newAllocator(conf string) *allocator.Allocator {
	cfg, err := allocator.ParseConfig(conf)
	if err != nil {
		panic(err)
	}
	a, err := allocator.New(replay.NewSimMemory(80<<30), cfg)
	if err != nil {
		panic(err)
	}
	return a
}

// Requested, allocated and reserved differ even for one small tensor.
func ExampleAllocator_Malloc() {
	a := newAllocator("")
	if _, err := a.Malloc(1000); err != nil { // torch.empty(1000, dtype=torch.uint8)
		panic(err)
	}
	s := a.MemoryStats()
	fmt.Println("requested:", s["requested_bytes.all.current"])
	fmt.Println("allocated:", a.MemoryAllocated())
	fmt.Println("reserved: ", a.MemoryReserved())
	fmt.Println("pool:     ", a.Snapshot().Segments[0].Pool)
	// Output:
	// requested: 1000
	// allocated: 1024
	// reserved:  2097152
	// pool:      small
}

// The chapter's fragmentation story: 1024, 512 and 256 MiB tensors, each freed, then a
// 768 MiB one. The cached 1 GiB segment serves every request; the 768 MiB tensor is
// carved from it without a new device allocation and without OOM, as in PyTorch.
func ExampleAllocator_Malloc_fragmentation() {
	a := newAllocator("")
	for _, n := range []int64{1024, 512, 256} {
		p, err := a.Malloc(n * MiB)
		if err != nil {
			panic(err)
		}
		if err := a.Free(p); err != nil {
			panic(err)
		}
	}
	if _, err := a.Malloc(768 * MiB); err != nil {
		panic(err)
	}
	for _, seg := range a.Snapshot().Segments {
		for _, b := range seg.Blocks {
			fmt.Printf("%4d MiB %s\n", b.Size/MiB, b.State)
		}
	}
	s := a.MemoryStats()
	fmt.Println("allocated MiB:", a.MemoryAllocated()/MiB, "reserved MiB:", a.MemoryReserved()/MiB)
	fmt.Println("device allocations:", s["num_device_alloc"])
	fmt.Println("non-releasable MiB:", s["inactive_split_bytes.all.current"]/MiB)
	// Output:
	//  768 MiB active_allocated
	//  256 MiB inactive
	// allocated MiB: 768 reserved MiB: 1024
	// device allocations: 1
	// non-releasable MiB: 256
}

// With max_split_size_mb:128 every request of 128 MiB or more is "oversize": it never
// splits a cached block and reuses one only if it is less than 20 MiB larger.
func ExampleAllocator_Malloc_maxSplitSize() {
	a := newAllocator("max_split_size_mb:128")
	for _, n := range []int64{1024, 512, 256} {
		p, _ := a.Malloc(n * MiB)
		_ = a.Free(p)
	}
	_, _ = a.Malloc(768 * MiB)
	fmt.Println("reserved MiB:", a.MemoryReserved()/MiB, "segments:", len(a.Snapshot().Segments))
	_ = a.EmptyCache()
	fmt.Println("after EmptyCache:", a.MemoryReserved()/MiB)
	// Output:
	// reserved MiB: 2560 segments: 4
	// after EmptyCache: 768
}

func ExampleParseConfig() {
	cfg, err := allocator.ParseConfig("max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:4]")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.MaxSplitSize/MiB, cfg.RoundupPower2Divisions)
	fmt.Println(allocator.RoundSize(600*MiB+1, cfg)/MiB, "MiB")

	_, err = allocator.ParseConfig("expandable_segments:yes")
	fmt.Println(err)
	// Output:
	// 128 [1 1 1 1 1 1 1 1 1 2 4 4 4 4 4 4]
	// 768 MiB
	// allocator: config key "expandable_segments" value "yes": Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'yes' (accepted: True or False)
}

func ExampleFormatSize() {
	for _, n := range []int64{512, 1536, 20 * MiB, 1 << 30, 150109880320} {
		fmt.Println(allocator.FormatSize(n))
	}
	// Output:
	// 512 bytes
	// 1.50 KiB
	// 20.00 MiB
	// 1024.00 MiB
	// 139.80 GiB
}

// Under a memory fraction the allocator fails before the device does, with PyTorch's
// message; it stays usable afterwards.
func ExampleOutOfMemoryError() {
	a := newAllocator("")
	if err := a.SetPerProcessMemoryFraction(1.0 / 80); err != nil { // 1 GiB of 80
		panic(err)
	}
	_, err := a.Malloc(1536 * MiB)
	var oom *allocator.OutOfMemoryError
	fmt.Println(errors.As(err, &oom), oom.AllocSize/MiB, oom.Allowed/MiB)
	fmt.Println(strings.SplitAfter(err.Error(), "unallocated.")[0])
	_, err = a.Malloc(512 * MiB)
	fmt.Println(err, a.MemoryStats()["num_ooms"])
	// Output:
	// true 1536 1024
	// CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 80.00 GiB of which 80.00 GiB is free. 1024.00 MiB allowed; Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.
	// <nil> 1
}

// The fragmentation gauge notebooks plot: the largest free block against all free
// memory in the cache.
func ExampleSnapshot_Fragmentation() {
	a := newAllocator("")
	var ps []uint64
	for i := 0; i < 8; i++ {
		p, _ := a.Malloc(2 * MiB)
		ps = append(ps, p)
	}
	for i := 0; i < 8; i += 2 { // free every other block: four 2 MiB holes
		_ = a.Free(ps[i])
	}
	s := a.Snapshot()
	fmt.Println("free MiB:", s.TotalFree()/MiB, "largest MiB:", s.LargestFreeBlock()/MiB)
	fmt.Printf("fragmentation: %.2f\n", s.Fragmentation("large"))
	// Output:
	// free MiB: 12 largest MiB: 4
	// fragmentation: 0.67
}

func ExampleAllocator_Subscribe() {
	a := newAllocator("")
	cancel := a.Subscribe(func(e allocator.Event) {
		fmt.Printf("%-15s size=%-9d allocated=%-9d reserved=%d\n", e.Action, e.Size, e.Allocated, e.Reserved)
	})
	defer cancel()
	p, _ := a.Malloc(3 * MiB)
	_ = a.Free(p)
	_ = a.EmptyCache()
	// Output:
	// segment_alloc   size=20971520  allocated=0         reserved=20971520
	// alloc           size=3145728   allocated=3145728   reserved=20971520
	// free_requested  size=3145728   allocated=0         reserved=20971520
	// free_completed  size=3145728   allocated=0         reserved=20971520
	// segment_free    size=20971520  allocated=0         reserved=0
	// empty_cache     size=0         allocated=0         reserved=0
}

func ExampleAllocator_MemorySummary() {
	a := newAllocator("")
	_, _ = a.Malloc(800 * MiB)
	lines := strings.Split(a.MemorySummary(true), "\n")
	for _, l := range lines[:9] {
		fmt.Println(l)
	}
	// Output:
	// |===========================================================================|
	// |                  PyTorch CUDA memory summary, device ID 0                 |
	// |---------------------------------------------------------------------------|
	// |            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
	// |===========================================================================|
	// |        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
	// |---------------------------------------------------------------------------|
	// | Allocated memory      |    800 MiB |    800 MiB |    800 MiB |      0 B   |
	// |---------------------------------------------------------------------------|
}

// Free blocks belong to a stream: a side stream does not reuse what the default stream
// freed. A block used on another stream (Tensor.record_stream) is freed only when that
// use completes.
func ExampleAllocator_RecordStream() {
	a := newAllocator("")
	const side = 0x5a1de // a cudaStream_t
	x, _ := a.Malloc(8 * MiB)
	if err := a.Free(x); err != nil {
		panic(err)
	}
	y, _ := a.MallocStream(8*MiB, side)
	fmt.Println("side stream reuses the default stream's block:", y == x)

	if err := a.RecordStream(y, 0); err != nil { // y.record_stream(default stream)
		panic(err)
	}
	if err := a.Free(y); err != nil {
		panic(err)
	}
	s := a.MemoryStats()
	fmt.Println("allocated:", s["allocated_bytes.all.current"]/MiB, "MiB, active:", s["active_bytes.all.current"]/MiB, "MiB")
	if err := a.CompleteFree(y); err != nil { // the default stream is done with it
		panic(err)
	}
	z, _ := a.MallocStream(8*MiB, side)
	fmt.Println("after completion the side stream reuses it:", z == y)
	// Output:
	// side stream reuses the default stream's block: false
	// allocated: 0 MiB, active: 8 MiB
	// after completion the side stream reuses it: true
}

// A CUDA graph capture as the allocator sees it (torch.cuda.graph): requests on the
// capturing stream go to the graph's private pool, others to the default pool; the
// pool's memory is not given back while the graph lives, however empty it is.
func ExampleAllocator_BeginAllocateToPool() {
	a := newAllocator("")
	const capture = 7 // the capturing stream
	g := a.NewPoolID(false)
	if err := a.BeginAllocateToPool(g, func(stream uint64) bool { return stream == capture }); err != nil {
		panic(err)
	}
	out, _ := a.MallocStream(4*MiB, capture) // captured: the graph's pool
	x, _ := a.MallocStream(4*MiB, 0)         // another stream: the default pool
	if err := a.EndAllocateToPool(g); err != nil {
		panic(err)
	}
	for _, s := range a.Snapshot().Segments {
		fmt.Println("segment_pool_id", s.PoolID, s.TotalSize/MiB, "MiB")
	}
	_ = a.Free(out)
	_ = a.Free(x)
	_ = a.EmptyCache()
	fmt.Println("graph alive, after empty_cache:", a.MemoryReserved()/MiB, "MiB")
	_ = a.ReleasePool(g) // the graph is reset
	_ = a.EmptyCache()
	fmt.Println("graph reset, after empty_cache:", a.MemoryReserved()/MiB, "MiB")
	// Unordered output:
	// segment_pool_id (1, 0) 20 MiB
	// segment_pool_id (0, 0) 20 MiB
	// graph alive, after empty_cache: 20 MiB
	// graph reset, after empty_cache: 0 MiB
}
