package snapshot

import (
	"bytes"
	"os"
	"sort"
	"testing"

	"memlab.dev/memlab/reference"
)

func (t *tree) keys(v value) []string {
	var ks []string
	if v.k != kDict {
		return nil
	}
	kv := t.dict(v).kv
	for i := 0; i < len(kv); i += 2 {
		ks = append(ks, t.keyStr(kv[i]))
	}
	sort.Strings(ks)
	return ks
}

func (t *tree) field(v value, path ...any) value {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v, _ = t.get(t.dict(v), p)
		case int:
			v = t.items(v)[p]
		}
	}
	return v
}

// TestWriteKeys: what Write produces has every key PyTorch 2.11 writes in the
// snapshot dict, its segments, blocks, trace entries and settings (checked on
// PyTorch's own snapshot_d.pickle), so that memory_viz, which reads those keys,
// opens memlab's files.
func TestWriteKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := testSnapshot().Write(&buf); err != nil {
		t.Fatal(err)
	}
	ours, err := unpickle(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	path, err := reference.File(reference.Torch211, "snapshot_d.pickle")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := unpickle(data)
	if err != nil {
		t.Fatal(err)
	}
	// PyTorch's first alloc entry (entry 0 is a "snapshot" marker).
	alloc := -1
	for i, e := range theirs.items(theirs.field(theirs.root, "device_traces", 0)) {
		if a, _ := theirs.get(theirs.dict(e), "action"); theirs.keyStr(a) == ActionAlloc.String() {
			alloc = i
			break
		}
	}
	for _, c := range []struct {
		what        string
		ours, their []any
	}{
		{"snapshot", nil, nil},
		{"segment", []any{"segments", 0}, []any{"segments", 0}},
		{"block", []any{"segments", 0, "blocks", 0}, []any{"segments", 0, "blocks", 0}},
		{"trace entry", []any{"device_traces", 0, 1}, []any{"device_traces", 0, alloc}},
		{"frame", []any{"device_traces", 0, 1, "frames", 0}, []any{"device_traces", 0, alloc, "frames", 0}},
		{"allocator_settings", []any{"allocator_settings"}, []any{"allocator_settings"}},
	} {
		have := map[string]bool{}
		for _, k := range ours.keys(ours.field(ours.root, c.ours...)) {
			have[k] = true
		}
		want := theirs.keys(theirs.field(theirs.root, c.their...))
		if len(want) == 0 {
			t.Fatalf("%s: PyTorch's has no keys", c.what)
		}
		for _, k := range want {
			if !have[k] {
				t.Errorf("%s lacks key %q that PyTorch writes (PyTorch: %v)", c.what, k, want)
			}
		}
	}
}
