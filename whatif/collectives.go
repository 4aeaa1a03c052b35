package whatif

import (
	"fmt"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/snapshot"
)

// collectiveAllocs counts the allocations of a trace that torch.distributed code made
// (DDP's gradient buckets, FSDP's buffers), as their stack frames show (the preparer
// adds each alloc entry). A block a collective used is freed when the communication
// library lets go of it, on the host's threads: PyTorch's runs of one DDP program freed
// its first gradient buckets at the second step's first forward or only during its
// second backward (reference/programs-2.11, ddp_accum_train_bf16), and their peaks
// differ by those buckets. A snapshot holds only its own run's points, so the replay
// keeps them; the warning says so.
type collectiveAllocs struct {
	byStack        map[*snapshot.Frame]bool // by a stack's first frame: Read shares stacks
	n              int
	total, largest int64
}

// add counts alloc entry e if torch.distributed made it.
func (c *collectiveAllocs) add(e *snapshot.TraceEntry) {
	if len(e.Frames) == 0 {
		return
	}
	dist, ok := c.byStack[&e.Frames[0]]
	if !ok {
		if c.byStack == nil {
			c.byStack = map[*snapshot.Frame]bool{}
		}
		dist = fromDistributed(e.Frames)
		c.byStack[&e.Frames[0]] = dist
	}
	if dist {
		c.n++
		c.total += e.Size
		c.largest = max(c.largest, e.Size)
	}
}

// warning is device d's warning, "" when torch.distributed made no allocation (or no
// allocation has frames).
func (c *collectiveAllocs) warning(d int) string {
	if c.n == 0 {
		return ""
	}
	return fmt.Sprintf("device %d: torch.distributed made %s (%s in all, the largest %s), such as DDP's gradient buckets or FSDP's buffers; a block a collective used is freed when the communication library lets go of it, which depends on the host's threads, so another run of this program, under this setting or any other, can free such blocks at other points and measure peaks higher or lower by the size of those it frees at other points; the replay keeps this run's points",
		d, plural(c.n, "allocation", "allocations"), allocator.FormatSize(c.total), allocator.FormatSize(c.largest))
}

// fromDistributed reports whether torch.distributed or DDP
// (torch/nn/parallel/distributed.py) made an allocation: whether one of the stack's
// innermost Python frames inside an installed PyTorch (torchPackage), before the first
// outside it (a model's code, the program's), is theirs; C++ frames are passed over.
// An allocation a model makes inside DDP's forward is not. With any "/torch/" as the
// boundary, DDP's snapshot counted 1,524 allocations instead of 16 (its transformers
// frames lay under /opt/torch/; TestCollectivesWarning, 2026-12-05).
func fromDistributed(frames []snapshot.Frame) bool {
	for _, f := range frames {
		file, ok := pythonFile(f)
		switch {
		case !ok:
		case strings.Contains(file, "/torch/distributed/") || strings.HasSuffix(file, "/torch/nn/parallel/distributed.py"):
			return true
		case !strings.Contains(file, torchPackage):
			return false
		}
	}
	return false
}
