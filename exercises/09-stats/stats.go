// Package stats is exercise 09 of the memlab course: the bookkeeping behind
// torch.cuda.memory_allocated(), memory_reserved() and memory_stats(), replayed
// from the allocator's decisions. See README.md.
//
// 中文：练习 09：memory_allocated 与 memory_reserved，
// 以及 memory_stats() 里每个量的四个计数器 current、peak、
// allocated、freed。题目见 README.zh-CN.md。
package stats

import "fmt"

// Stat is one memory_stats() statistic: Current value, Peak (highest Current since
// the last ResetPeak), Allocated (sum of all increases) and Freed (sum of all
// decreases). The zero value is a Stat at zero.
type Stat struct {
	Current, Peak, Allocated, Freed uint64
}

// Kind is the kind of an allocator event.
type Kind int

// The allocator decisions that move the statistics.
const (
	SegmentAlloc Kind = iota + 1 // cudaMalloc of a segment of Size bytes
	SegmentFree                  // cudaFree of a segment of Size bytes
	Alloc                        // a block of Size bytes given to a request of Requested bytes
	Free                         // that block taken back
)

// String returns the event kind's name.
func (k Kind) String() string {
	switch k {
	case SegmentAlloc:
		return "SegmentAlloc"
	case SegmentFree:
		return "SegmentFree"
	case Alloc:
		return "Alloc"
	case Free:
		return "Free"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is one allocator decision.
type Event struct {
	Kind      Kind
	Size      uint64 // segment size, or block size (rounded, with any unsplit slack)
	Requested uint64 // Alloc and Free only: the bytes the tensor asked for
}

// Stats are the statistics a Tracker keeps, named after memory_stats() keys.
type Stats struct {
	Allocated   Stat // allocated_bytes: block bytes in use (memory_allocated)
	Requested   Stat // requested_bytes: the unrounded requests of those blocks
	Reserved    Stat // reserved_bytes: segment bytes held from CUDA (memory_reserved)
	Allocations Stat // allocation: number of blocks in use
	Segments    Stat // segment: number of segments held
}

// Tracker replays allocator events into Stats. The zero value is an empty tracker.
type Tracker struct {
	stats Stats
}

// Stats returns the statistics so far.
func (t *Tracker) Stats() Stats { return t.stats }

// MemoryAllocated returns torch.cuda.memory_allocated(): Allocated.Current.
func (t *Tracker) MemoryAllocated() uint64 { return t.stats.Allocated.Current }

// MemoryReserved returns torch.cuda.memory_reserved(): Reserved.Current.
func (t *Tracker) MemoryReserved() uint64 { return t.stats.Reserved.Current }
