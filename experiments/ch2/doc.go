// Package ch2 holds the bookkeeping of notebook 02's experiments (Chapter 2,
// "Memory mechanics") that would stand in the reader's way in a cell: the
// notebook's cells show the tensor and allocator calls of each experiment and
// call these for the rest.
//
//   - 2.2 the caching allocator: [ChapterSequence] (the chapter's allocate-and-
//     free sequence), [PyTorch] and [Compare] (memlab beside PyTorch 2.11's
//     recording of the same ops, op by op);
//   - 2.3 fragmentation: [Fragmenting] (a [Workload] whose live small tensors
//     pin the segments), the chapter's remedies ([Remedies], [Try]) and their
//     comparison ([Table], [Plot]);
//   - 2.4 the torch.cuda API: [TrainStep] and [Item] (the leak check's loop
//     body), [Greedy] and [CapHalf] (two tenants on one device).
package ch2
