package snapshot

import (
	"bytes"
	"math/big"
	"os"
	"testing"

	"memlab.dev/memlab/reference"
)

// unknownLine is the line torch.compile's generated frames carry: 2^64 − 1.
var unknownLine = new(big.Int).SetUint64(1<<64 - 1)

// TestUnknownLine: a frame whose line is 2^64 − 1 (torch.compile's "unknown line",
// a Python int beyond int64) reads as UnknownLine, in trace entries and blocks, and
// Write writes it back as 2^64 − 1.
func TestUnknownLine(t *testing.T) {
	compiled := kvs{{"name", "forward"}, {"filename", "<eval_with_key>.3"}, {"line", unknownLine}}
	root := edit(baseSnapshot(), "device_traces.0.1.frames", []any{compiled, frame("main", 9)}, false)
	root = edit(root, "segments.0.blocks.0.frames", []any{compiled}, false)
	s, err := Read(bytes.NewReader(pk(root)))
	if err != nil {
		t.Fatal(err)
	}
	want := Frame{Name: "forward", Filename: "<eval_with_key>.3", Line: UnknownLine}
	if got := s.Traces[0][1].Frames; len(got) != 2 || got[0] != want || got[1].Line != 9 {
		t.Errorf("entry frames %+v, want %+v first", got, want)
	}
	if got := s.Segments[0].Blocks[0].Frames; len(got) != 1 || got[0] != want {
		t.Errorf("block frames %+v, want %+v", got, want)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	tr, err := unpickle(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	line := tr.field(tr.root, "device_traces", 0, 1, "frames", 0, "line")
	if line.k != kUint || tr.bits(line) != 1<<64-1 {
		t.Errorf("Write wrote the unknown line as kind %v, bits %d; want 2^64 − 1", line.k, tr.bits(line))
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Traces[0][1].Frames[0]; got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

// TestFrameLineErrors: a line that is neither a line number nor 2^64 − 1 is an
// error that says what the value was (not "want int, got int").
func TestFrameLineErrors(t *testing.T) {
	for _, c := range []struct {
		line any
		want string
	}{
		{new(big.Int).SetUint64(1<<64 - 2), "snapshot: device_traces[0][1].frames[0].line: 18446744073709551614 is out of range (want a line number, or 2^64 − 1 for an unknown line)"},
		{new(big.Int).Lsh(big.NewInt(1), 64), "snapshot: device_traces[0][1].frames[0].line: 18446744073709551616 is out of range (want a line number, or 2^64 − 1 for an unknown line)"},
		{1 << 40, "snapshot: device_traces[0][1].frames[0].line: 1099511627776 is out of range"},
		{-1 << 40, "snapshot: device_traces[0][1].frames[0].line: -1099511627776 is out of range"},
		{"7", "snapshot: device_traces[0][1].frames[0].line: want int, got str"},
		{2.5, "snapshot: device_traces[0][1].frames[0].line: want int, got float"},
	} {
		root := edit(baseSnapshot(), "device_traces.0.1.frames", []any{kvs{{"name", "f"}, {"filename", "x.py"}, {"line", c.line}}}, false)
		_, err := Read(bytes.NewReader(pk(root)))
		if err == nil || err.Error() != c.want {
			t.Errorf("line %v: got error\n  %v\nwant\n  %s", c.line, err, c.want)
		}
	}
}

// TestPoolIDs: segments' segment_pool_id, and trace entries' pool_id (written by
// PyTorch versions after 2.11), are read; an entry without one has a nil PoolID.
func TestPoolIDs(t *testing.T) {
	root := edit(baseSnapshot(), "segments.0.segment_pool_id", tup{0, 3}, false)
	s, err := Read(bytes.NewReader(pk(root)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Segments[0].PoolID; got != [2]uint64{0, 3} {
		t.Errorf("segment_pool_id read as %v, want [0 3]", got)
	}
	for i, e := range s.Traces[0] {
		if e.HasPool() {
			t.Errorf("entry %d without pool_id: pool %v", i, e.Pool())
		}
	}
	withPool := kvs{{"action", "alloc"}, {"addr", 1 << 21}, {"size", 500}, {"stream", 0}, {"time_us", 101},
		{"compile_context", "N/A"}, {"user_metadata", ""}, {"pool_id", tup{2, 0}}, {"frames", []any{}}}
	s, err = Read(bytes.NewReader(pk(edit(root, "device_traces.0.1", withPool, false))))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Traces[0][1]; !e.HasPool() || e.Pool() != [2]uint64{2, 0} {
		t.Errorf("pool_id read as %v (present: %v), want [2 0]", e.Pool(), e.HasPool())
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if e := back.Traces[0][1]; !e.HasPool() || e.Pool() != [2]uint64{2, 0} {
		t.Errorf("pool_id written and read back as %v (present: %v)", e.Pool(), e.HasPool())
	}
	if e := back.Traces[0][0]; e.HasPool() {
		t.Errorf("Write added a pool_id to an entry without one")
	}
	if back.Segments[0].PoolID != [2]uint64{0, 3} {
		t.Errorf("segment_pool_id written and read back as %v", back.Segments[0].PoolID)
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{tup{1}, "snapshot: device_traces[0][1].pool_id: want a tuple of 2 ints, got 1 items"},
		{"p", "snapshot: device_traces[0][1].pool_id: want a tuple of 2 ints, got str"},
		{tup{-1, 0}, "snapshot: device_traces[0][1].pool_id: want a non-negative int, got -1"},
	} {
		_, err := Read(bytes.NewReader(pk(edit(edit(root, "device_traces.0.1", withPool, false), "device_traces.0.1.pool_id", c.v, false))))
		if err == nil || err.Error() != c.want {
			t.Errorf("pool_id %v: got error\n  %v\nwant\n  %s", c.v, err, c.want)
		}
	}
}

// TestEveryTraceField: every key of PyTorch 2.11's trace entries and frames (in its
// own snapshots, shipped under reference/) is one the reader converts, so none is
// dropped unread.
func TestEveryTraceField(t *testing.T) {
	for _, f := range []struct{ set, name string }{
		{reference.Torch211, "snapshot_d.pickle"},
		{reference.Workloads211, "gpt2_generate__default.pickle"},
	} {
		path, err := reference.File(f.set, f.name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := unpickle(data)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, dev := range tr.items(tr.field(tr.root, "device_traces")) {
			for _, e := range tr.items(dev) {
				for _, k := range tr.keys(e) {
					seen[k] = true
				}
				if fr, ok := tr.get(tr.dict(e), "frames"); ok {
					for _, f := range tr.items(fr) {
						for _, k := range tr.keys(f) {
							seen["frame."+k] = true
						}
					}
				}
			}
		}
		if len(seen) == 0 {
			t.Fatalf("%s: no trace entries", f.name)
		}
		for k := range seen {
			name := k
			if len(k) > 6 && k[:6] == "frame." {
				name = k[6:]
			}
			if fieldCodes[name] == fUnknown {
				t.Errorf("%s: PyTorch's trace entries have key %q, which the reader does not convert", f.name, k)
			}
		}
	}
}

// TestVersionHint: the keys a snapshot has bound the PyTorch that wrote it.
func TestVersionHint(t *testing.T) {
	withPool := kvs{{"action", "alloc"}, {"addr", 1 << 21}, {"size", 500}, {"stream", 0}, {"pool_id", tup{0, 1}}}
	for _, c := range []struct {
		root any
		want string
	}{
		{baseSnapshot(), "2.5 or later"},
		{edit(baseSnapshot(), "allocator_settings.graph_capture_record_stream_reuse", false, false), "2.5 or later"}, // edit does not add keys
		{append(baseSnapshot()[:2:2], kv{"allocator_settings", kvs{{"graph_capture_record_stream_reuse", false}}}), "2.10 or later"},
		{edit(baseSnapshot(), "device_traces.0.1", withPool, false), "later than 2.11"},
		{edit(baseSnapshot(), "allocator_settings", nil, true), ""},
	} {
		s, err := Read(bytes.NewReader(pk(c.root)))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.VersionHint(); got != c.want {
			t.Errorf("VersionHint() = %q, want %q", got, c.want)
		}
	}
	path, err := reference.File(reference.Workloads211, "gpt2_generate__default.pickle")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.VersionHint(); got != "2.10 or later" {
		t.Errorf("PyTorch 2.11's snapshot: VersionHint() = %q, want 2.10 or later", got)
	}
}
