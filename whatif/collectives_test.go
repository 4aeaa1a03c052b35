package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestCollectivesWarning: a replay of a snapshot in which torch.distributed made
// allocations (DDP's buckets, FSDP's buffers) warns that a run of the same program can
// free them at other points; DDP's shipped runs did (programsKnown). A single-process
// program's replay does not warn.
func TestCollectivesWarning(t *testing.T) {
	for _, c := range []struct {
		dir, prog, want string
	}{
		// DDP's parameter checks and broadcasts at its start, its first buckets
		// (327,650,304 bytes, the largest) and those it rebuilds at the second step
		{reference.Programs211, "ddp_accum_train_bf16__default.pickle", "device 0: torch.distributed made 16 allocations (937.42 MiB in all, the largest 312.47 MiB)"},
		// FSDP2's all-gathers and reduce-scatters, on rank 0 of two
		{reference.Ranks211, "fsdp2_train_ranks__default.rank0.pickle", "device 0: torch.distributed made"},
		{reference.Programs211, "gcn_sparse_full_batch_train__default.pickle", ""},
	} {
		s := referenceSnapshot(t, c.dir, c.prog)
		res, err := Replay(s, settings(t, ""), Options{NoAddressRange: true, NoTimingRange: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range res.Warnings {
			if strings.Contains(w, "torch.distributed made") {
				got = append(got, w)
			}
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: warns %q, but no allocation of it came from torch.distributed", c.prog, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%s: warnings %q, want one starting %q", c.prog, res.Warnings, c.want)
		}
		if len(got) == 1 {
			t.Log(got[0])
		}
	}
}

// TestFromDistributedSkipsCppFrames: a snapshot recorded with stacks="all" (what
// `_record_memory_history()` records by default) puts C++ frames before the Python
// ones; DDP's allocation is still DDP's, and a model's inside DDP's forward is not.
func TestFromDistributedSkipsCppFrames(t *testing.T) {
	cpp := snapshot.Frame{Filename: "??", Name: "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)"}
	ddp := snapshot.Frame{Filename: "/venv/lib/python3.12/site-packages/torch/nn/parallel/distributed.py", Name: "_rebuild_buckets"}
	model := snapshot.Frame{Filename: "/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py", Name: "forward"}
	if !fromDistributed([]snapshot.Frame{cpp, ddp, model}) {
		t.Error("DDP's allocation under a C++ frame not read as torch.distributed's")
	}
	if fromDistributed([]snapshot.Frame{cpp, model, ddp}) {
		t.Error("a model's allocation inside DDP's forward read as torch.distributed's")
	}
}

// TestDDPBucket: DDP's Reducer's allocations (its first buckets, at construction; the
// rebuilt ones, at the second step's forward) are buckets whatever C++ frames come
// first; DDP's parameter broadcast (torch/distributed/utils.py), a model's allocation
// inside DDP's forward and an allocation without frames are not.
func TestDDPBucket(t *testing.T) {
	ddp := "/venv/lib/python3.12/site-packages/torch/nn/parallel/distributed.py"
	cpp := snapshot.Frame{Filename: "??", Name: "c10d::Reducer::initialize_buckets(std::vector<std::vector<unsigned long>>)"}
	user := snapshot.Frame{Filename: "/home/me/train.py", Name: "main"}
	for _, c := range []struct {
		frames []snapshot.Frame
		want   bucketKind
	}{
		{[]snapshot.Frame{cpp, {Filename: ddp, Name: "_ddp_init_helper"}, {Filename: ddp, Name: "__init__"}, user}, firstBucket},
		{[]snapshot.Frame{{Filename: ddp, Name: "_pre_forward"}, {Filename: ddp, Name: "forward"}, user}, rebuiltBucket},
		{[]snapshot.Frame{{Filename: ddp, Name: "__init__"}, user}, notBucket},
		{[]snapshot.Frame{{Filename: "/venv/lib/python3.12/site-packages/torch/distributed/utils.py", Name: "_sync_params_and_buffers"}, {Filename: ddp, Name: "__init__"}, user}, notBucket},
		{[]snapshot.Frame{{Filename: "/venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py", Name: "forward"}, {Filename: ddp, Name: "_run_ddp_forward"}, user}, notBucket},
		{nil, notBucket},
	} {
		if got := ddpBucket(c.frames); got != c.want {
			t.Errorf("ddpBucket(%v) = %v, want %v", c.frames, got, c.want)
		}
	}
}
