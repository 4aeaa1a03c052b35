// Package ch4 holds the experiments of Chapter 4, "Reuse and sharing", as
// functions: notebook 04 calls them cell by cell, `memlab lab` runs them as a
// plain program, and `memlab ch4` runs section 4.4 on any device (the GPU
// included) at a chosen size. Each returns a result that prints as a table
// (its String method) and draws itself (its Plot method); the tests assert
// the qualitative facts the notebook's prose states.
//
// Sections:
//
//   - 4.1 in-place operations (原地操作): [ReluPeak] (relu vs relu_ peak
//     memory), [SharedBranch] (an in-place op on a tensor two branches read),
//     [SavedTensorError] (autograd's saved-tensor version error);
//   - 4.2 views (视图): [ViewCopies] (which of view, reshape, contiguous,
//     transpose, slice, expand and permute copy, shown as allocations);
//   - 4.3 memory pools (内存池): [PoolLatency] (fresh cudaMalloc, the caching
//     allocator and a pool.TensorPool per step), [KVStrategies] (a KV cache
//     grown with cat, preallocated, and paged, over many sequences);
//   - 4.4 all together (综合应用): [Inference] (the model package's
//     transformer on variable-length requests, baseline against each
//     optimisation and all of them).
//
// Experiments open their own devices from a [Setup]. On the simulated device
// the driver calls are charged the latency measured on an H200, so that a
// cudaMalloc costs time there as it does on a GPU.
package ch4
