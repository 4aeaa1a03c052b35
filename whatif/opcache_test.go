package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestCalledEmptyCache: an empty_cache is read from the Python function's frame, or
// from the caching allocator's emptyCache among C++ frames, but not from a MemPool's
// destruction, which empties only its own pool.
func TestCalledEmptyCache(t *testing.T) {
	py := func(file, name string) snapshot.Frame { return snapshot.Frame{Filename: file, Name: name, Line: 1} }
	cpp := func(name string) snapshot.Frame { return snapshot.Frame{Filename: "??", Name: name} }
	emptyCache := cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache(std::pair<unsigned long long, unsigned long long>)")
	conv := py("/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py", "_conv_forward")
	for _, c := range []struct {
		what            string
		frames          []snapshot.Frame
		called, torchOp bool
	}{
		{"torch.cuda.empty_cache", []snapshot.Frame{py("/venv/lib/python3.12/site-packages/torch/cuda/memory.py", "empty_cache"), py("train.py", "main")}, true, true},
		{"cuDNN's benchmark, Python frames", []snapshot.Frame{conv, py("train.py", "main")}, false, true},
		{"cuDNN's benchmark, C++ frames", []snapshot.Frame{emptyCache, cpp("at::native::run_single_conv(cudnnBackendDescriptorType_t)"), conv}, true, true},
		{"a MemPool's destruction", []snapshot.Frame{emptyCache, cpp("c10::cuda::MemPool::~MemPool()"), py("serve.py", "drop_pool")}, false, false},
		{"the program's own code", []snapshot.Frame{py("serve.py", "drop_pool")}, false, false},
		{"no Python frame", []snapshot.Frame{cpp("at::native::run_single_conv(cudnnBackendDescriptorType_t)")}, false, false},
	} {
		if got := calledEmptyCache(c.frames); got != c.called {
			t.Errorf("%s: calledEmptyCache = %v, want %v", c.what, got, c.called)
		}
		if got := insideTorchOp(c.frames); got != c.torchOp {
			t.Errorf("%s: insideTorchOp = %v, want %v", c.what, got, c.torchOp)
		}
	}
}

// TestCudnnBenchmarkEmptiesTheCache: a convolution under torch.backends.cudnn.benchmark
// empties the cache after timing its algorithms, from C++, where a snapshot with
// Python frames shows only the convolution. Read as a MemPool's destruction (as it
// was before 2026-12-06), the replay of the default run under its own setting made
// 286 cudaMalloc calls against PyTorch's 399, and invented twelve private pools. Both
// recordings of the default run, with Python frames and with C++ frames too
// (stacks="all", what `_record_memory_history()` records by default), must replay as
// PyTorch measured them, every release an empty_cache, and say that PyTorch's code
// emptied the cache.
func TestCudnnBenchmarkEmptiesTheCache(t *testing.T) {
	for _, c := range []struct {
		name, where string
	}{
		{"resnet_cudnn_benchmark_train_bf16__default.pickle", "torch/nn/modules/conv.py's _conv_forward (and perhaps 54 times more"},
		{"stacks-all/resnet_cudnn_benchmark_train_bf16__default.pickle", "torch/nn/modules/conv.py's _conv_forward and at::native::run_single_conv:"},
	} {
		s := referenceSnapshot(t, reference.Programs211, c.name)
		p, err := reference.Pickle(reference.Programs211, c.name)
		if err != nil {
			t.Fatal(err)
		}
		f := readFacts(t, reference.TrimPickle(p)+".facts.json")
		h, err := prepare(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if h.pools != nil {
			t.Errorf("%s: the replay infers private pools %v: %q", c.name, h.pools.ids, h.pools.notes)
		}
		releases, emptied := 0, 0
		for i, e := range s.Traces[0] {
			if e.Action == snapshot.ActionSegmentFree && (i == 0 || s.Traces[0][i-1].Action != snapshot.ActionSegmentFree) {
				releases++
			}
		}
		for _, o := range h.ops {
			if o.kind == opEmptyCache {
				emptied++
			}
		}
		if releases != 100 || emptied != releases {
			t.Errorf("%s: %d of %d releases read as empty_cache, want all of 100", c.name, emptied, releases)
		}
		res, err := Replay(s, settings(t, ""), Options{TotalMemory: f.TotalMemory, NoAddressRange: true, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		for _, k := range []string{"allocated_bytes.all.peak", "reserved_bytes.all.peak", "num_device_alloc", "num_device_free", "inactive_split_bytes.all.peak"} {
			if r.Stats[k] != f.Stats[k] {
				t.Errorf("%s: %s = %d, PyTorch measured %d", c.name, k, r.Stats[k], f.Stats[k])
			}
		}
		var warned []string
		for _, w := range res.Warnings {
			if strings.Contains(w, "PyTorch's own code emptied the cache") {
				warned = append(warned, w)
			}
		}
		if len(warned) != 1 || !strings.Contains(warned[0], c.where) || !strings.Contains(warned[0], "cudnn.benchmark") {
			t.Errorf("%s: warnings %q, want one naming %q and cudnn.benchmark", c.name, res.Warnings, c.where)
		}
	}
}
