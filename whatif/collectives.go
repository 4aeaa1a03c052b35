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
// allocation has frames); held frees of DDP's gradient buckets (op.held) get a timing
// range, which it names, early of them (history.earliest) one down to the rebuild.
func (c *collectiveAllocs) warning(d, held, early int) string {
	if c.n == 0 {
		return ""
	}
	keeps := "the replay keeps this run's points"
	if held > 0 {
		keeps = fmt.Sprintf("the replay keeps this run's points, and its timing range (where computed) also makes the %s of DDP's gradient buckets later, up to the end", plural(held, "free", "frees"))
		if early > 0 {
			keeps += fmt.Sprintf(", and makes %s of DDP's first buckets, which this run made only after the buckets' rebuild, at the rebuild too", plural(early, "free", "frees"))
		}
	}
	return fmt.Sprintf("device %d: torch.distributed made %s (%s in all, the largest %s), such as DDP's gradient buckets or FSDP's buffers; a block a collective used is freed when the communication library lets go of it, which depends on the host's threads, so another run of this program, under this setting or any other, can free such blocks at other points and measure peaks higher or lower by the size of those it frees at other points; %s",
		d, plural(c.n, "allocation", "allocations"), allocator.FormatSize(c.total), allocator.FormatSize(c.largest), keeps)
}

// bucketKind says whether an allocation is one of DDP's gradient buckets, and which.
type bucketKind uint8

const (
	notBucket     bucketKind = iota
	firstBucket              // made when DistributedDataParallel is constructed (`_ddp_init_helper`)
	rebuiltBucket            // made at the rebuild, in the second step's forward (`_pre_forward`)
)

// ddpBucket says whether DDP's Reducer made an allocation: its gradient buckets, the
// first when DistributedDataParallel is constructed (`_ddp_init_helper`), the rebuilt
// ones at the second step's forward (`_pre_forward`), the innermost Python frame being
// that function of torch/nn/parallel/distributed.py (the Reducer itself is C++; C++
// frames are passed over). A bucket is freed when the last holder lets go of it:
// PyTorch's runs of one DDP program (reference/programs-2.11, ddp_accum_train_bf16,
// and its repeats) freed its first buckets either at the rebuild or, holding them
// through the second step's forward, at one point of its backward, about half of them
// each way, so the replay's timing range lets go of such a block at other points too
// (op.held): later, and for a first bucket its snapshot freed after the rebuild, at the
// rebuild (history.earliest).
func ddpBucket(frames []snapshot.Frame) bucketKind {
	for _, f := range frames {
		file, ok := pythonFile(f)
		if !ok {
			continue
		}
		if !strings.HasSuffix(file, "/torch/nn/parallel/distributed.py") {
			return notBucket
		}
		switch f.Name {
		case "_ddp_init_helper":
			return firstBucket
		case "_pre_forward":
			return rebuiltBucket
		}
		return notBucket
	}
	return notBucket
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
