package whatif

import (
	"fmt"
	"slices"
	"strings"

	"memlab.dev/memlab/snapshot"
)

// opEmptyCaches counts the empty_cache calls PyTorch's own code made inside an op, as
// the stack frames of the releases show (the preparer adds each release it reads as
// an empty_cache): under torch.backends.cudnn.benchmark = True a convolution times
// cuDNN's algorithms for each new input shape, in a workspace as large as the largest
// of them needs, and then empties the cache. The replay makes those calls under every
// setting, as PyTorch does; but which algorithm wins, and so which workspace sizes
// the program requests, is decided by timing: the ten shipped runs of one program
// made between 4,400 and 4,445 allocations, under one setting and under others, and
// differed there (reference/programs-2.11's resnet_cudnn_benchmark_train_bf16). And
// where the workspace it asks for does not fit, PyTorch catches the OOM and halves it
// (preparer.benchmarkWorkspace, replayer.halve). The warning says both.
type opEmptyCaches struct {
	n, frameless int
	where        []string // the ops, by innermost Python frame or C++ caller, in the order first seen
}

// add counts a release read as an empty_cache when PyTorch's code, not the
// program's call of torch.cuda.empty_cache, made it (a release with frames read as
// one, other than that call's, is PyTorch's: nothing else empties the cache); and one
// without frames, which may be such a call (a backward pass runs outside Python's
// frames).
func (c *opEmptyCaches) add(frames []snapshot.Frame) {
	var op string
	switch {
	case len(frames) == 0:
		c.frameless++
		return
	case calledTorchEmptyCache(frames):
		return
	case cppEmptyCache(frames) && !insideTorchOp(frames):
		op = emptyCacheCaller(frames)
	default:
		op = innermostPython(frames)
	}
	c.n++
	if !slices.Contains(c.where, op) {
		c.where = append(c.where, op)
	}
}

// warning is device d's warning, "" when no op emptied the cache.
func (c *opEmptyCaches) warning(d int) string {
	if c.n == 0 {
		return ""
	}
	more := ""
	if c.frameless > 0 {
		more = fmt.Sprintf(" (and perhaps %s more, which have no stack frames, as a backward pass has none)", plural(c.frameless, "time", "times"))
	}
	return fmt.Sprintf("device %d: PyTorch's own code emptied the cache %s, inside %s%s: a convolution under torch.backends.cudnn.benchmark = True does, after timing cuDNN's algorithms for a new input shape; the replay empties it there under every setting, as PyTorch does, but the algorithms, and so the workspace sizes the program requests, are chosen by timing, so another run of this program, under this setting or any other, can request other sizes and measure other figures; the replay keeps this run's requests. Where a workspace the benchmark asks for does not fit, PyTorch catches the OOM and asks for half as much; the replay does the same for each it can tell apart (freed just before such an empty_cache), and runs out at any other",
		d, plural(c.n, "time", "times"), joinAnd(c.where), more)
}

// innermostPython names the innermost Python frame of frames: its file from the
// installed packages on ("torch/nn/modules/conv.py") and its function.
func innermostPython(frames []snapshot.Frame) string {
	for _, f := range frames {
		name, ok := pythonFile(f)
		if !ok {
			continue
		}
		if i := strings.Index(name, "-packages/"); i >= 0 {
			name = name[i+len("-packages/"):]
		}
		return name + "'s " + f.Name
	}
	return "an op"
}

// emptyCacheCaller names the C++ function that called the caching allocator's
// emptyCache (the frame after it), without its parameters.
func emptyCacheCaller(frames []snapshot.Frame) string {
	for i, f := range frames {
		if strings.Contains(f.Name, "::emptyCache(") && i+1 < len(frames) {
			name, _, _ := strings.Cut(frames[i+1].Name, "(")
			return name
		}
	}
	return "an op"
}
