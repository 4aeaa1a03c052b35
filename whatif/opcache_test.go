package whatif

import (
	"path/filepath"
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
// (stacks="all", what `_record_memory_history()` records by default), the first
// with PyTorch's frames taken off (as if the program called the convolution itself),
// and timm's Big Transfer ResNet, whose convolutions timm's own code calls (recorded
// 2026-12-06 11:33 UTC; before the same-call rule, two pools invented), must replay
// as PyTorch measured them, every release an empty_cache, and say that PyTorch's code
// emptied the cache.
func TestCudnnBenchmarkEmptiesTheCache(t *testing.T) {
	for _, c := range []struct {
		name, where string
		own         bool // PyTorch's frames taken off: the program calls the convolution itself
		releases    int
	}{
		{"resnet_cudnn_benchmark_train_bf16__default.pickle", "torch/nn/modules/conv.py's _conv_forward (and perhaps 54 times more", false, 100},
		{"stacks-all/resnet_cudnn_benchmark_train_bf16__default.pickle", "torch/nn/modules/conv.py's _conv_forward and at::native::run_single_conv:", false, 100},
		{"resnet_cudnn_benchmark_train_bf16__default.pickle", "inside torchvision/models/resnet.py's _forward_impl", true, 100},
		// timm's weight-standardised convolutions call torch.nn.functional.conv2d
		// themselves: the innermost frame of most releases is timm's
		{"bit_stdconv_cudnn_benchmark_train_bf16__default.pickle", "inside timm/layers/std_conv.py's forward and torch/nn/modules/conv.py's _conv_forward (and perhaps 78 times more", false, 120},
	} {
		s := referenceSnapshot(t, reference.Programs211, c.name)
		if c.own {
			// as if the program called torch.nn.functional.conv2d itself, as timm's
			// layers do: the innermost Python frame is the caller's (torchvision's here)
			for k := range s.Traces[0] {
				e := &s.Traces[0][k]
				for len(e.Frames) > 1 && strings.Contains(e.Frames[0].Filename, torchPackage) {
					e.Frames = e.Frames[1:]
				}
			}
		}
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
		if releases != c.releases || emptied != releases {
			t.Errorf("%s: %d of %d releases read as empty_cache, want all of %d", c.name, emptied, releases, c.releases)
		}
		res, err := Replay(s, settings(t, ""), Options{TotalMemory: f.TotalMemory, NoAddressRange: true, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.name, res.Runs[0], f, acceptanceKeys)
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

// TestCudnnBenchmarkHalvesItsWorkspace: where a cuDNN benchmark's workspace does not
// fit, PyTorch catches the OOM and asks for half as much. The default setting capped
// at 1.00, 0.97, 0.94 and 0.90 × the default run's peak allocated ran out on the H100
// (reference/programs-2.11/tight/), the first after two such OOMs it caught, at a
// batch norm's 14 MiB, the third after one; replayed under each cap, the shipped
// default snapshot must end where PyTorch's run did, with its OOMs, retries,
// cudaMalloc and cudaFree calls and peak reserved (the runs' own small requests
// differ: peak allocated within 1 MiB).
// Before the halving the replay stopped at the first workspace, event 1758, with 128
// cudaMalloc calls against PyTorch's 387.
func TestCudnnBenchmarkHalvesItsWorkspace(t *testing.T) {
	s := referenceSnapshot(t, reference.Programs211, "resnet_cudnn_benchmark_train_bf16__default.pickle")
	dir, err := reference.Dir(reference.Programs211)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m      string
		halved int
	}{{"1p00", 2}, {"0p97", 0}, {"0p94", 1}, {"0p90", 0}} {
		f := readFacts(t, filepath.Join(dir, "tight", "resnet_cudnn_benchmark_train_bf16__capped_"+c.m+"_peak.facts.json"))
		if f.Frac == nil || f.OOM == nil {
			t.Fatalf("%s: the tight run's facts have no fraction or no OOM", c.m)
		}
		res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Runs[0]
		check(t, "capped at "+c.m+" × the peak", r, f, []string{"reserved_bytes.all.peak", "num_device_alloc", "num_device_free", "num_alloc_retries", "num_ooms"})
		if d := r.Stats["allocated_bytes.all.peak"] - f.Stats["allocated_bytes.all.peak"]; d < -1<<20 || d > 1<<20 {
			t.Errorf("capped at %s × the peak: peak allocated %d, PyTorch measured %d", c.m, r.Stats["allocated_bytes.all.peak"], f.Stats["allocated_bytes.all.peak"])
		}
		if r.HalvedWorkspaces != c.halved {
			t.Errorf("capped at %s × the peak: %d workspaces halved, want %d", c.m, r.HalvedWorkspaces, c.halved)
		}
		want := (*f.OOM)[:strings.Index(*f.OOM, ". GPU")]
		if r.FirstOOM == nil || !strings.HasPrefix(r.FirstOOM.Message, want) {
			t.Errorf("capped at %s × the peak: the replay's OOM %+v, PyTorch's %q", c.m, r.FirstOOM, want)
		}
	}
}
