package nb05

/*md
# 05 · What if: your own snapshot under other allocator settings

A PyTorch memory snapshot records every allocation and free of a run. memlab replays that
history through its re-implementation of PyTorch's caching allocator under other
settings — `expandable_segments`, `max_split_size_mb`, `roundup_power2_divisions`, a cap
with `set_per_process_memory_fraction`, garbage collection — and reports what PyTorch
would have measured: peak allocated and reserved memory, `cudaMalloc`/`cudaFree` counts,
retries, out-of-memory errors (with the Python line that failed) and fragmentation. No
GPU is needed: the replay runs on memlab's simulated device.

The package is [`whatif`](../whatif/whatif.go) (`go doc memlab.dev/memlab/whatif`); the
same is a command: `go run ./cmd/memlab whatif my_snapshot.pickle
--conf expandable_segments:True --conf max_split_size_mb:128 --plot cmp.png`.
Every "Measured:" line below is printed by its cell from the replay; the same cells run as
`go test ./notebooks/...` and, without Jupyter, as `go run ./cmd/memlab lab -run 05`.

## Record a snapshot of your own program

Two lines around the part of your script you want to study (PyTorch 2.1 or later):

```python
torch.cuda.memory._record_memory_history(max_entries=1_000_000)   # before the first CUDA allocation
# ... your training or inference steps ...
torch.cuda.memory._dump_snapshot("my_snapshot.pickle")
```

Start recording before the program allocates: a history that begins later (or a ring
buffer of `max_entries` that wrapped) still replays, but `whatif` warns that the blocks
alive before its first event were re-made in address order. The pickle is read by a
decoder that accepts only the plain values PyTorch writes; it never runs code from the
file. To use yours, put its path in `snapshot.ReadFile(...)` below.

## A shipped training snapshot

We use snapshots that ship with memlab (`reference/workloads-2.11/`): GPT-2 (6 layers)
trained for three steps on an H200 under PyTorch 2.11's default settings, and the same
program recorded under four other settings, with PyTorch's own figures for each run.
*/

import (
	"fmt"

	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
	"memlab.dev/memlab/whatif"
)

// load reads a snapshot shipped in reference/workloads-2.11.
//
//nb:decl
func load(name string) *snapshot.Snapshot {
	return memlab.Must(snapshot.ReadFile(memlab.Must(reference.File(reference.Workloads211, name))))
}

//nb:cell
func loadSnapshot() {
	s := load("gpt2_train__default.pickle")
	own := memlab.Must(whatif.SnapshotSetting(s))
	allocs := 0
	for _, e := range s.Traces[0] {
		if e.Action == snapshot.ActionAlloc {
			allocs++
		}
	}
	fmt.Printf("devices: %d; stack frames recorded: %v; segments held at the end: %d\n",
		s.Devices(), s.HasFrames(), len(s.Segments))
	memlab.Measured("the snapshot holds %d trace entries on device 0 (%d allocations), recorded under PYTORCH_CUDA_ALLOC_CONF=%q",
		len(s.Traces[0]), allocs, own.Conf.String())
}
