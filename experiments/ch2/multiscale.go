package ch2

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// MultiScale is the shipped snapshot of a ResNet trained on inputs of
// changing resolution (reference/workloads-2.11), recorded on an H200 under
// PyTorch 2.11's defaults: the chapter's multi-scale anecdote.
const MultiScale = "resnet_multiscale_train"

// Snapshot reads a snapshot shipped in reference/workloads-2.11, by its
// program and the tag of the setting it was recorded under
// ("resnet_multiscale_train", "default").
func Snapshot(program, tag string) (*snapshot.Snapshot, error) {
	path, err := reference.File(reference.Workloads211, program+"__"+tag+".pickle")
	if err != nil {
		return nil, fmt.Errorf("ch2: %w", err)
	}
	return snapshot.ReadFile(path)
}

// Tag is the file-name tag of a PYTORCH_CUDA_ALLOC_CONF string in
// reference/workloads-2.11: "default" for "", else the string with ':'
// written '_', ',' '__' and '.' 'p' ("max_split_size_mb:128" →
// "max_split_size_mb_128").
func Tag(conf string) string {
	if conf == "" {
		return "default"
	}
	return strings.NewReplacer(":", "_", ",", "__", ".", "p").Replace(conf)
}

// PyTorchStats reads torch.cuda.memory_stats() as PyTorch measured it at the
// end of a shipped run (its .facts.json), by program and setting tag.
func PyTorchStats(program, tag string) (map[string]int64, error) {
	path, err := reference.File(reference.Workloads211, program+"__"+tag+".facts.json")
	if err != nil {
		return nil, fmt.Errorf("ch2: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ch2: %w", err)
	}
	var f struct {
		Stats map[string]int64 `json:"memory_stats"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("ch2: %s: %w", path, err)
	}
	if len(f.Stats) == 0 {
		return nil, fmt.Errorf("ch2: %s: no memory_stats", path)
	}
	return f.Stats, nil
}
