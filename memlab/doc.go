// Package memlab is the lab bench of the memlab course: one call opens a
// device (a real CUDA GPU or the simulated one) with PyTorch's caching
// allocator in front of it, and the torch.cuda memory API reads the same in Go.
//
//	lab := memlab.MustOpen(memlab.Sim("24GiB"), memlab.AllocConf("max_split_size_mb:128"))
//	defer lab.Close()
//	x, _ := tensor.Empty(lab, tensor.Float32, 1024, 1024) // 4 MiB through the allocator
//	fmt.Println(memlab.MemoryAllocated(), memlab.MemoryReserved())
//
// Three numbers answer "how much memory am I using?", and they differ:
//
//   - allocated ([MemoryAllocated]): bytes in blocks that live tensors hold,
//     rounded up to the allocator's 512-byte granularity;
//   - reserved ([MemoryReserved]): bytes in segments the allocator holds from the
//     device, allocated or cached for reuse; freeing a tensor does not lower it,
//     [EmptyCache] does;
//   - driver-used ([DriverUsed], from [MemGetInfo]): what the driver, and so
//     nvidia-smi, counts as used on the device: reserved memory plus the CUDA
//     context, libraries' workspaces and every other process.
//
// A [*Lab] is a [tensor.Device], so tensors allocate through its allocator. The
// last lab opened is the current one, which the package-level functions
// ([MemoryAllocated], [EmptyCache], [Snapshot], …) act on, as torch.cuda acts on
// the current device. A [Recorder] subscribes to allocator events and turns them
// into memory curves; [CheckLeaks] is the leak-check idiom of section 2.4.
// [Lab.NewMemPool] and [MemPool.Use] are torch.cuda.MemPool and use_mem_pool, and
// [Lab.CaptureGraph] is the private pool a CUDA graph capture allocates into.
//
// GoNB runs every notebook cell as a fresh program, so nothing here relies on
// state surviving between cells: a cell opens its lab, runs, and plots. What a
// cell needs to read well is here too: [Must], [Must2] and [Check] stop the
// cell at the first error; [Show] displays a figure (inline in GoNB, through
// the figure sink elsewhere) that package memplot draws from what memlab
// records — memlab.Show(memplot.Curve("…", steps)) — while memlab itself links
// no plotting library, so that a cell that draws nothing builds and links
// quickly (GoNB drops the imports a cell does not use); [Table] shows as an HTML table; [Lab.Steps]
// records the memory after each step; [Measured] prints a "Measured:" line
// from the numbers measured; [Budget] makes any card behave like a small one.
// The notebooks written as Go (notebooks/src) list their cells as [Cell]s,
// which `memlab lab` and the tests run.
package memlab
