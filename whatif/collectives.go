package whatif

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// collectivesWarning says whether torch.distributed code (DDP's gradient buckets,
// FSDP's buffers) made allocations in device d's trace, as their stack frames show, and
// how many bytes. A block a collective used is freed when the communication library
// lets go of it, on the host's threads: PyTorch's runs of one DDP program freed its
// first gradient buckets at the second step's first forward or only during its second
// backward (reference/programs-2.11, ddp_accum_train_bf16), and their peaks differ by
// those buckets. A snapshot holds only its own run's points, so the replay keeps them;
// the warning says so. "" when no allocation has such frames (or none has frames).
func collectivesWarning(d int, trace []snapshot.TraceEntry) string {
	distributed := map[*snapshot.Frame]bool{} // by a stack's first frame: stacks are shared
	var n int
	var total, largest int64
	for i := range trace {
		e := &trace[i]
		if e.Action != snapshot.ActionAlloc || len(e.Frames) == 0 {
			continue
		}
		dist, ok := distributed[&e.Frames[0]]
		if !ok {
			dist = fromDistributed(e.Frames)
			distributed[&e.Frames[0]] = dist
		}
		if dist {
			n++
			total += e.Size
			largest = max(largest, e.Size)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("device %d: torch.distributed made %s (%s in all, the largest %s), such as DDP's gradient buckets or FSDP's buffers; a block a collective used is freed when the communication library lets go of it, which depends on the host's threads, so another run of this program, under this setting or any other, can free such blocks at other points and measure peaks higher or lower by the size of those it frees at other points; the replay keeps this run's points",
		d, plural(n, "allocation", "allocations"), allocator.FormatSize(total), allocator.FormatSize(largest))
}

// fromDistributed reports whether torch.distributed or DDP
// (torch/nn/parallel/distributed.py) made an allocation: whether one of the stack's
// innermost frames inside an installed PyTorch (…-packages/torch/), before the first
// outside it (a model's code, the program's), is theirs. An allocation a model makes
// inside DDP's forward is not.
func fromDistributed(frames []snapshot.Frame) bool {
	for _, f := range frames {
		name := strings.ReplaceAll(f.Filename, `\`, "/")
		switch {
		case strings.Contains(name, "/torch/distributed/") || strings.HasSuffix(name, "/torch/nn/parallel/distributed.py"):
			return true
		case !strings.Contains(name, "-packages/torch/"):
			return false
		}
	}
	return false
}
