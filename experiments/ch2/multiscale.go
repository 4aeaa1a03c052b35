package ch2

import (
	"memlab.dev/memlab/experiments/workloads"
	"memlab.dev/memlab/snapshot"
)

// MultiScale is the shipped snapshot of a ResNet trained on inputs of
// changing resolution (reference/workloads-2.11), recorded on an H200 under
// PyTorch 2.11's defaults: the chapter's multi-scale anecdote.
const MultiScale = "resnet_multiscale_train"

// Snapshot reads a snapshot shipped in reference/workloads-2.11, by its
// program and the tag of the setting it was recorded under
// ("resnet_multiscale_train", "default"); see package workloads.
func Snapshot(program, tag string) (*snapshot.Snapshot, error) {
	return workloads.Load(program + "__" + tag + ".pickle")
}

// Tag is the file-name tag of a PYTORCH_CUDA_ALLOC_CONF string
// ([workloads.Tag]).
func Tag(conf string) string { return workloads.Tag(conf) }

// PyTorchStats reads torch.cuda.memory_stats() as PyTorch measured it at the
// end of a shipped run (its .facts.json), by program and setting tag.
func PyTorchStats(program, tag string) (map[string]int64, error) {
	r, err := workloads.ReadRun(program + "__" + tag)
	return r.Stats, err
}
