// Package ch4 holds the experiments of Chapter 4, "Reuse and sharing", that
// are longer than a notebook cell: notebook 04 (notebooks/src/04-reuse-and-sharing)
// writes the rest of the chapter in its cells and calls these, and
// `memlab ch4` runs section 4.4 on any device (the GPU included) at a chosen
// size. Each returns a result that prints as a table (its String method) and
// draws itself; the tests assert the facts the notebook prints.
//
//   - 4.3 memory pools (内存池): [KVStrategies] (a KV cache grown with cat,
//     preallocated, and paged, over many sequences);
//   - 4.4 all together (综合应用): [Inference] (the model package's
//     transformer on variable-length requests, the baseline against each of
//     the chapter's techniques, pooled attention scores, the three together
//     ([model.Chapter]) alone and with pooled scores, memlab's extra
//     last-logits and everything), its [InferenceResult.Findings] (the
//     notebook's "Measured:" notes) and the runs recorded on an H200
//     ([LoadRecorded], written by `memlab ch4 -record`; [Recording.Note] names
//     the modes a recording predates).
//
// Notebook 04's plumbing is here too (notebook.go, chapterpool.go): what its
// cells call but do not teach — [RunBatch] runs the notebook's own forward
// pass (a [Generate]) on a batch, [OnDevice] on a simulated device of a given
// size, [MemoryOnly] makes the simulator account memory without computing
// (BERT-base's sizes in milliseconds, the same peaks and allocator calls),
// [BERTBase] is BERT-base's shapes, the chapter's pool classes
// ([ChapterPool], [OnePool]), and [Say] and [T] print in the workbook's
// edition.
//
// Experiments open their own devices from a [Setup]. On the simulated device
// the driver calls are charged the latency measured on an H200, so that a
// cudaMalloc costs time there as it does on a GPU.
package ch4
