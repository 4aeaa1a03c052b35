package replay

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFindsDifferences tampers with recorded ground truth and requires Check to
// report the first difference at the right place.
func TestCheckFindsDifferences(t *testing.T) {
	path := filepath.Join("testdata", "torch-2.11-extra", "oom_default.jsonl.gz")
	tests := []struct {
		name   string
		tamper func(tr *Trace)
		op     int
		field  string
	}{
		{"stat", func(tr *Trace) { tr.States[3].Stats["num_device_alloc"]++ }, 3, "stats.num_device_alloc"},
		{"reserved", func(tr *Trace) { *tr.States[7].MemoryReserved += 512 }, 7, "memory_reserved"},
		{"block state", func(tr *Trace) { tr.States[2].Segments[0].Blocks[0].State = "I" }, 2, "segments[0].blocks[0]"},
		{"seg sizes", func(tr *Trace) { tr.States[4].SegSizes = append(tr.States[4].SegSizes, 1) }, 4, "seg_sizes"},
		{"oom message", func(tr *Trace) { tr.States[5].Msg += "!" }, 5, "msg"},
		{"summary", func(tr *Trace) { tr.Summary = strings.Replace(tr.Summary, "CUDA OOMs: 5", "CUDA OOMs: 6", 1) }, -1, "line 4"},
		{"settings", func(tr *Trace) {
			tr.Header.AllocatorSettings = []byte(`{"roundup_power2_divisions":{"1":2}}`)
		}, -1, "allocator_settings.roundup_power2_divisions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(tr)
			res, err := Check(tr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK() {
				t.Fatal("tampered ground truth matched")
			}
			if res.Diff.Op != tc.op || !strings.HasPrefix(res.Diff.Field, tc.field) {
				t.Fatalf("difference %q at op %d, want %q at op %d", res.Diff.Field, res.Diff.Op, tc.field, tc.op)
			}
			if tc.op >= 0 && res.Matched != tc.op {
				t.Errorf("matched %d ops before the difference, want %d", res.Matched, tc.op)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty trace"},
		{`[["a",-1]]`, "negative"},
		{`[["x"]]`, "unknown kind"},
		{`[["a"]]`, "takes one integer"},
		{`[["frac",2]]`, "[0, 1]"},
		{`[["e",1]]`, "takes no argument"},
		{`{"kind":"op","i":0,"op":["e"]}`, "no header"},
		{`{"kind":"header","total_memory":1073741824,"ops":[["e"]]}` + "\n" + `{"kind":"op","i":1,"op":["e"]}`, "has i=1"},
		{`{"kind":"weird"}`, "unknown kind"},
	}
	for _, tc := range tests {
		_, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}
