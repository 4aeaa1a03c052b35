package allocator

import (
	_ "embed"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// pytorchStatKeys is sorted(torch.cuda.memory_stats().keys()) after one
// allocation, recorded by allocator/testdata/pytorch_stat_keys.py on the H200.
//
//go:embed testdata/pytorch-stat-keys.json
var pytorchStatKeys []byte

// torchStatKeys returns the recorded keys, failing the test if the record is
// missing or not PyTorch 2.11's.
func torchStatKeys(t *testing.T) []string {
	t.Helper()
	var rec struct {
		Torch, Device string
		Keys          []string
	}
	if err := json.Unmarshal(pytorchStatKeys, &rec); err != nil {
		t.Fatalf("testdata/pytorch-stat-keys.json: %v", err)
	}
	if !strings.HasPrefix(rec.Torch, "2.11") || len(rec.Keys) == 0 {
		t.Fatalf("testdata/pytorch-stat-keys.json: torch %q, %d keys; want PyTorch 2.11's keys", rec.Torch, len(rec.Keys))
	}
	return rec.Keys
}

func TestStatKeysMatchPyTorch(t *testing.T) {
	want := torchStatKeys(t)
	if got := StatKeys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("StatKeys() has %d keys, PyTorch 2.11 has %d:\n%v", len(got), len(want), got)
	}
	a, _ := newTestAllocator(t, "", uint64(giB))
	stats := a.MemoryStats()
	for _, k := range want {
		if _, ok := stats[k]; !ok {
			t.Errorf("MemoryStats lacks PyTorch's key %q", k)
		}
	}
	if len(stats) != len(want) {
		t.Fatalf("MemoryStats has %d keys, want %d", len(stats), len(want))
	}
}
