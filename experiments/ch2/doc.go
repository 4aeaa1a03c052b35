// Package ch2 holds the bookkeeping of notebook 02's experiments (Chapter 2,
// "Memory mechanics") that would stand in the reader's way in a cell: the
// notebook's cells show the tensor and allocator calls of each experiment and
// call these for the rest.
//
//   - 2.1 storage and views: [DeviceBytes] and [HostBytesEach] (what views
//     cost on the device and on the host);
//   - 2.2 the caching allocator: [AllocTable] and [AllocRow] (five requests,
//     block by block), [GiBThenHalf] (the PYTORCH_CUDA_ALLOC_CONF probe),
//     [ChapterSequence] (the chapter's allocate-and-free sequence), [PyTorch] and [Compare] (memlab beside PyTorch 2.11's
//     recording of the same ops, op by op);
//   - 2.3 fragmentation: [Fragmenting] (a [Workload] whose live small tensors
//     pin the segments), the chapter's remedies ([Remedies], [Try]) and their
//     comparison ([Table]), [TooFragmented] and [DeviceFree] (free
//     memory that cannot serve a request);
//   - 2.4 the torch.cuda API: [TrainStep] and [Item] (the leak check's loop
//     body), [Steps] (a training loop's activations, per epoch), [Greedy] and [CapHalf] (two tenants on one device).
//
// Its figures (saved tensors, the remedies, two tenants) are drawn by package
// ch2plot, so that a cell that uses ch2 and draws nothing links no plotting
// library.
package ch2
