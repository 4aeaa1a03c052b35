// Package sim is memlab's simulated GPU: a device.Device whose memory lives
// in host RAM and whose kernels are the reference kernels of kernels/cpu.
//
// It behaves like the CUDA driver wherever a lesson can see the difference:
//
//   - Addresses look like device pointers (from 0x7f0000000000), are aligned to
//     2 MiB and depend only on the sequence of calls: a freed range is reused by
//     the next allocation that fits (first fit), as the driver tends to do.
//   - Every Malloc is rounded up to whole 2 MiB pages, the granularity in which
//     the driver takes large allocations from the device (the caching
//     allocator's segments are 2 MiB multiples anyway), and MemGetInfo counts
//     those pages: free = Capacity − ContextOverhead − allocated − mapped.
//   - Running out of capacity returns an [*OutOfMemoryError], whose
//     OutOfMemory method reports true, with CUDA's message.
//   - The virtual-memory calls (ReserveAddress, Map, Unmap, FreeAddress) make the
//     driver's checks: alignment to [Granularity], ranges inside one
//     reservation, pages mapped at most once, unmapping only mapped pages, and
//     freeing a reservation only when nothing in it is mapped.
//   - Memory costs no host RAM until a kernel or a copy touches it: a replayed
//     allocator trace of a 64 GiB workload runs on a laptop. Touched memory is
//     backed by anonymous memory mappings reserved without swap (on Linux and
//     macOS), released when the allocation is freed or the pages unmapped.
//   - Calls to the driver cost time on a real GPU (74 µs for a cuMemAlloc and
//     cuMemFree pair on an H200, more for large sizes). The device counts a
//     modelled latency per call in [Stats] and, unless told not to, spends it.
//
// A Device is safe for concurrent use.
package sim
