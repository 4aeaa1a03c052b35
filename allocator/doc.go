// Package allocator is a caching allocator for device memory that makes the same
// decisions as PyTorch 2.11's native CUDA caching allocator, so that what a learner sees
// in memlab is what happens in PyTorch.
//
// An [Allocator] sits on a [Memory] — a real GPU, the simulated device, or a test fake —
// and serves Malloc and Free from segments it obtains from that memory and keeps
// (caches) after their blocks are freed. The policy is PyTorch's, rule by rule: sizes
// are rounded to 512 bytes (or to power-of-two divisions with
// roundup_power2_divisions); requests of at most 1 MiB use the small pool and 2 MiB
// segments, larger ones the large pool with 20 MiB segments (under 10 MiB) or segments
// of their own size rounded to 2 MiB; a request takes the best-fitting cached block
// ordered by (size, address), splitting it when the remainder is worth keeping; freed
// blocks merge with free neighbours; when nothing fits, the allocator asks the device
// for a new segment, then frees oversize cached segments, then frees every cached
// segment and retries, and only then fails with an [OutOfMemoryError] whose text is
// PyTorch's. Configuration uses PYTORCH_CUDA_ALLOC_CONF syntax ([ParseConfig],
// [ConfigFromEnv]), including max_split_size_mb, garbage_collection_threshold under a
// memory fraction, and expandable segments (one growing mapped range per pool).
//
// # Allocated, active, requested, reserved
//
// Four numbers describe the memory, and the statistics report each of them (with
// PyTorch's key names, see [Allocator.MemoryStats]):
//
//   - Requested: the bytes the program asked for (torch.empty(n) requests n).
//   - Allocated: the bytes of the blocks handed out for those requests. A block is at
//     least the request rounded up to 512 bytes, and may be larger: in the large pool a
//     remainder of 1 MiB or less is not split off, so a 19.5 MiB request holds a whole
//     20 MiB segment. [Allocator.MemoryAllocated] is torch.cuda.memory_allocated().
//   - Active: allocated blocks plus blocks freed by the program that the allocator
//     cannot reuse yet, because another CUDA stream may still use them
//     ([Allocator.RecordStream]; the block state is "active_pending_free" until
//     [Allocator.CompleteFree] or a synchronisation). Without record_stream, active
//     equals allocated.
//   - Reserved: the bytes of all segments held from the device, allocated or cached.
//     [Allocator.MemoryReserved] is torch.cuda.memory_reserved(), and it is what the
//     device (and nvidia-smi, plus the CUDA context) sees as used. Free blocks inside
//     a segment that still holds an allocation cannot be given back: that is the
//     "non-releasable" memory (inactive_split_bytes) of fragmentation.
//
// Freeing a block lowers allocated but not reserved: the memory stays cached for the
// next request. [Allocator.EmptyCache] gives whole free segments back to the device.
//
// # What is modelled
//
// One device per Allocator, any number of streams: free blocks are cached per stream
// ([Allocator.MallocStream]), expandable segments belong to a stream, and a block used
// on other streams ([Allocator.RecordStream]) returns to the cache only when its free
// completes ([Allocator.CompleteFree], or the synchronisation of EmptyCache and of the
// out-of-memory retry). Every decision for a single-stream trace matches PyTorch 2.11: the replay
// package checks it op by op against ground truth recorded on an H200, and the final
// [Allocator.MemorySummary] byte for byte; package whatif checks multi-stream programs
// against PyTorch's own figures.
//
// # Private pools
//
// CUDA graph capture and torch.cuda.MemPool route allocations into private pools, each
// with its own small and large block pools ([PoolID], [Allocator.CreateOrIncrefPool],
// [Allocator.BeginAllocateToPool], [Allocator.EndAllocateToPool],
// [Allocator.ReleasePool]; [Allocator.MallocInPool] for replays). A private pool's
// blocks never serve the default pool's requests, nor the reverse; a freed block goes
// back to the pool that owns it. A pool's memory goes back to the device only after
// its last use is released, and then only on [Allocator.EmptyCache] (or
// [Allocator.EmptyCachePool]) or the out-of-memory release, segment by whole free
// segment. While a capture is under way the out-of-memory path does not free every
// cached segment and EmptyCache leaves the default pool alone, as in PyTorch. The
// statistics count private-pool segments in their aggregate and small/large rows;
// snapshots give each segment its pool id (segment_pool_id). privatepool.go says which
// PyTorch source this follows and what is not modelled.
//
// The allocator is safe for concurrent use; one mutex guards it, as PyTorch's
// per-device lock does. A Malloc+Free that hits the cache does not allocate Go memory.
// [Allocator.Snapshot] returns the segment and block layout (memory_snapshot()), and
// with [Allocator.RecordHistory] the recent events, which
// [Snapshot.WriteMemoryVizJSON] exports for pytorch.org/memory_viz;
// [Allocator.Subscribe] delivers events as they happen, for live plots.
package allocator
