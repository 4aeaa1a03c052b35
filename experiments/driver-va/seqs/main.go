// Command seqs writes the segment_alloc / segment_free sequence of every shipped
// workload snapshot as JSON ({"name": [["a"|"f", recorded address, size], ...]}), the
// input of measure.py, which replays the same cudaMalloc/cudaFree calls on a GPU.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seqs:", err)
		os.Exit(1)
	}
}

func run() error {
	files, err := reference.GlobPickles(reference.Workloads211, "*.pickle")
	if err != nil {
		return err
	}
	out := map[string][][3]any{}
	for _, f := range files {
		s, err := snapshot.ReadFile(f)
		if err != nil {
			return err
		}
		var seq [][3]any
		for _, e := range s.Traces[0] {
			switch e.Action {
			case snapshot.ActionSegmentAlloc:
				seq = append(seq, [3]any{"a", e.Addr, e.Size})
			case snapshot.ActionSegmentFree:
				seq = append(seq, [3]any{"f", e.Addr, e.Size})
			}
		}
		if len(seq) > 0 {
			out[filepath.Base(reference.TrimPickle(f))+".pickle"] = seq
		}
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
