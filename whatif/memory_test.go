package whatif

import (
	"runtime"
	"testing"

	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// TestPrepareBytesPerEntry bounds what preparing a history allocates per trace
// entry (runtime.MemStats.TotalAlloc, which no collector timing changes; not
// time), on a real workload with stack frames: issue 21's goal (memlab whatif
// holding at most 3× the snapshot's size) has the prepared history beside the
// converted trace (112 bytes an entry, about 1.3× the file). A history keeps a
// 40-byte op for most entries and a 4-byte stack index per entry; it allocated
// 83 bytes an entry before ops shrank and the per-entry frames and reserved
// memory arrays went.
func TestPrepareBytesPerEntry(t *testing.T) {
	path, err := reference.File(reference.Workloads211, "gpt2_generate__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(s.Traces[0])
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, err := prepare(s, 0)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if h.stackOf == nil {
		t.Fatal("a trace with frames prepared without them")
	}
	perEntry := float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	t.Logf("%d entries, %d ops: %.0f bytes allocated per entry", n, len(h.ops), perEntry)
	if perEntry > 48 {
		t.Errorf("preparing allocates %.0f bytes per trace entry, want at most 48", perEntry)
	}
}
