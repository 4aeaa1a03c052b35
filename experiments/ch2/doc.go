// Package ch2 holds the experiments of Chapter 2, "Memory mechanics", as
// functions: notebook 02 calls them cell by cell, and `memlab lab` runs them as
// a plain program on machines without Jupyter (the GPU host). Each returns a
// result that prints as a readable table (its String method) and draws itself
// (its Plot method); the tests assert the numbers the notebook's prose states.
//
// Sections:
//
//   - 2.1 tensor storage (张量存储): [StorageVsViews], [SliceKeepsBase],
//     [TransposeStrides], [SavedTensors];
//   - 2.2 the caching allocator (缓存分配器): [AllocatedVsReserved],
//     [MaxSplitSize];
//   - 2.3 fragmentation (内存碎片): [ChapterSequence] (the chapter's
//     1024/512/256 → 768 MiB story, which PyTorch serves without OOM),
//     [Fragment] (a sequence that really fragments) and [Remedies];
//   - 2.4 the torch.cuda memory API (torch.cuda 内存 API): [APITour],
//     [LeakCheck], [SharedDevice].
//
// Experiments that need a particular allocator configuration or memory budget
// open their own labs from a [Setup]; the others take a [*memlab.Lab].
package ch2
