package whatif

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/internal/robusttest"
	"memlab.dev/memlab/snapshot"
)

func trace(es ...snapshot.TraceEntry) *snapshot.Snapshot {
	return &snapshot.Snapshot{Traces: [][]snapshot.TraceEntry{es}}
}

func alloc(addr uint64, size int64) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: addr, Size: size}
}

func freeReq(addr uint64, size int64) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionFreeRequested, Addr: addr, Size: size}
}

func freeDone(addr uint64, size int64) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: addr, Size: size}
}

// oomEntry is an oom entry: a request of size bytes failed with the driver reporting
// free bytes free.
func oomEntry(size, free int64) snapshot.TraceEntry {
	return snapshot.TraceEntry{Action: snapshot.ActionOOM, Size: size, Meta: &snapshot.EntryMeta{DeviceFree: free}}
}

// TestRobustBadHistories: malformed histories are errors that name the device, the
// event index and what is wrong; nothing panics.
func TestRobustBadHistories(t *testing.T) {
	const a = 0x7f0000000000
	tests := []struct {
		name  string
		s     *snapshot.Snapshot
		words []string
	}{
		{"nil snapshot", nil, []string{"nil snapshot"}},
		{"no history", &snapshot.Snapshot{}, []string{"no allocation history"}},
		{"unknown action", trace(alloc(a, 512), snapshot.TraceEntry{Action: 200}), []string{"event 1", "unknown action", "Action(200)"}},
		{"free of an address never allocated", trace(alloc(a, 512), freeReq(a+4096, 512)), []string{"event 1", "free_requested", "never allocated"}},
		{"double free", trace(alloc(a, 512), freeReq(a, 512), freeDone(a, 512), freeReq(a, 512)), []string{"event 3", "never allocated"}},
		{"double free while pending", trace(alloc(a, 512), freeReq(a, 512), alloc(a+512, 512), freeReq(a, 512)), []string{"event 3", "already freed"}},
		{"alloc of a live address", trace(alloc(a, 512), alloc(a, 1024)), []string{"event 1", "already allocated", "event 0"}},
		{"completion before its request", trace(alloc(a, 512), freeDone(a, 512)), []string{"event 1", "no free_requested"}},
		{"zero-size alloc", trace(alloc(a, 0)), []string{"event 0", "size 0"}},
		{"negative alloc", trace(alloc(a, -5)), []string{"event 0", "size -5"}},
		{"negative device_free", trace(alloc(a, 512), oomEntry(1<<30, -1)), []string{"event 1", "oom", "device_free -1"}},
		{"device_free past any device", trace(alloc(a, 512), segAlloc(a+1<<30, 1<<30, 0), oomEntry(1<<30, 1<<63-1)), []string{"event 2", "device_free 9223372036854775807"}},
	}
	for _, tc := range tests {
		var err error
		robusttest.NoPanic(t, tc.name, func() { _, err = Replay(tc.s, nil, Options{}) })
		robusttest.WantErr(t, tc.name, err, tc.words...)
	}
}

// TestRobustBadSettings: a setting outside its range is refused, naming it.
func TestRobustBadSettings(t *testing.T) {
	s := trace(alloc(0x1000, 512), freeReq(0x1000, 512), freeDone(0x1000, 512))
	cfg := allocator.DefaultConfig()
	for _, tc := range []struct {
		name  string
		st    Setting
		words []string
	}{
		{"negative cap", Setting{Conf: cfg, Cap: -1}, []string{"setting 0", "negative cap"}},
		{"fraction above 1", Setting{Conf: cfg, Fraction: 1.5}, []string{"fraction 1.5"}},
		{"fraction and cap", Setting{Conf: cfg, Fraction: 0.5, Cap: 1 << 30}, []string{"both a fraction and a cap"}},
	} {
		var err error
		robusttest.NoPanic(t, tc.name, func() { _, err = Replay(s, []Setting{tc.st}, Options{}) })
		robusttest.WantErr(t, tc.name, err, tc.words...)
	}
}

// TestRobustMaliciousPickle: a pickle that would run a command when unpickled by Python
// is refused and nothing runs.
func TestRobustMaliciousPickle(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	// protocol 0: GLOBAL os.system, then call it with ("touch <marker>",)
	evil := []byte("cos\nsystem\n(S'touch " + marker + "'\ntR.")
	path := filepath.Join(dir, "evil.pickle")
	if err := os.WriteFile(path, evil, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	robusttest.NoPanic(t, "malicious pickle", func() { _, err = File(path, nil, Options{}) })
	if err == nil || !errors.Is(err, snapshot.ErrRefused) {
		t.Errorf("err = %v, want one wrapping snapshot.ErrRefused", err)
	}
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Error("the pickle's command ran")
	}
}

// TestOOMCarriesFrames: under a cap too small for the history, the first OOM names its
// event, PyTorch's message and the frames recorded with the allocation.
func TestOOMCarriesFrames(t *testing.T) {
	frames := []snapshot.Frame{{Filename: "train.py", Line: 42, Name: "forward"}}
	big := alloc(0x7f0000000000, 1<<30)
	big.Frames = frames
	s := trace(alloc(0x7e0000000000, 1<<20), big, freeReq(0x7f0000000000, 1<<30), freeDone(0x7f0000000000, 1<<30))
	res, err := Replay(s, []Setting{{Conf: allocator.DefaultConfig(), Cap: 512 << 20}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	if r.OOMs != 1 || r.FirstOOM == nil {
		t.Fatalf("OOMs %d, first %v; want one", r.OOMs, r.FirstOOM)
	}
	o := r.FirstOOM
	if o.Event != 1 || len(o.Frames) != 1 || o.Frames[0] != frames[0] || !bytes.Contains([]byte(o.Message), []byte("CUDA out of memory. Tried to allocate 1024.00 MiB")) {
		t.Errorf("first OOM %+v", o)
	}
	if !bytes.Contains([]byte(o.Message), []byte("512.00 MiB allowed")) {
		t.Errorf("message lacks the cap: %s", o.Message)
	}
}

// FuzzReplay drives Replay with arbitrary histories (actions, addresses, sizes,
// streams and an OOM's free bytes from the input) under four settings: it must return a result or an error,
// never panic, and a result's peaks must be consistent.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 1, 1, 10, 0, 2, 1, 10, 0})
	f.Add([]byte{0, 1, 200, 1, 0, 2, 3, 0, 1, 1, 3, 0, 3, 0, 0, 0, 2, 1, 3, 0})
	actions := []snapshot.Action{snapshot.ActionAlloc, snapshot.ActionFreeRequested, snapshot.ActionFreeCompleted, snapshot.ActionSegmentFree, snapshot.ActionSegmentAlloc, snapshot.ActionOOM, snapshot.ActionSnapshot, 200}
	settings, err := ParseSettings("", "expandable_segments:True", "max_split_size_mb:64,roundup_power2_divisions:4")
	if err != nil {
		f.Fatal(err)
	}
	settings = append(settings, Setting{Conf: settings[0].Conf, Cap: 64 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		var tr []snapshot.TraceEntry
		for len(data) >= 4 && len(tr) < 400 {
			e := snapshot.TraceEntry{
				Action: actions[int(data[0])%len(actions)],
				Addr:   0x7f0000000000 + uint64(data[1]%16)<<20,
				Size:   int64(binary.LittleEndian.Uint16([]byte{data[2], data[3] & 0x7f})) << 10,
				Stream: uint64(data[3] >> 7),
			}
			if e.Action == snapshot.ActionOOM { // the driver's free bytes then, up to 255 MiB
				e.Meta = &snapshot.EntryMeta{DeviceFree: int64(data[1]) << 20}
			}
			tr = append(tr, e)
			data = data[4:]
		}
		if len(tr) == 0 {
			return
		}
		res, err := Replay(trace(tr...), settings, Options{TotalMemory: 1 << 30})
		if err != nil {
			return
		}
		for _, r := range res.Runs {
			if r.MaxAllocated > r.MaxReserved || r.Stats["allocated_bytes.all.current"] < 0 {
				t.Fatalf("%s: allocated peak %d above reserved peak %d", r.Setting.Label(), r.MaxAllocated, r.MaxReserved)
			}
			// a replay stops at its first new OOM, or at a recorded one it serves, or
			// runs through with only the recorded ones failed
			newOOM := r.Stopped >= 0 && !r.Served()
			if r.NewOOMs > r.OOMs || newOOM != (r.NewOOMs == 1) || !newOOM && r.NewOOMs != 0 {
				t.Fatalf("%s: %d new OOMs of %d, stopped at %d, served %v", r.Setting.Label(), r.NewOOMs, r.OOMs, r.Stopped, r.Served())
			}
		}
	})
}
