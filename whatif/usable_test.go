package whatif

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/reference"
	"memlab.dev/memlab/snapshot"
)

// contextMemory is a device whose driver reports, besides what the program holds, a
// CUDA context's worth of memory in use: its total is the usable memory plus ctx.
type contextMemory struct {
	*deviceMemory
	ctx uint64
}

func (m contextMemory) MemGetInfo() (free, total uint64, err error) {
	free, total, err = m.deviceMemory.MemGetInfo()
	return free, total + m.ctx, err
}

// fragmentedOOM runs, on a device with 8 GiB usable behind a 1 GiB context, a
// program that holds 1 GiB, fills 20 MiB segments with 6 MiB blocks, frees two of
// each three (holes no 12 MiB request fits) and then asks for 12 MiB blocks until one
// fails. It returns the snapshot and the recorded memory_stats.
func fragmentedOOM(t *testing.T) (*snapshot.Snapshot, map[string]int64) {
	t.Helper()
	cfg, err := allocator.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	a, err := allocator.New(contextMemory{newDeviceMemory(8 << 30), 1 << 30}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.RecordHistory(allocator.HistoryOptions{Enabled: true})
	must := func(_ uint64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.MallocStream(1<<30, 0))
	var blocks []uint64
	for range 1000 {
		p, err := a.MallocStream(6<<20, 0)
		must(p, err)
		blocks = append(blocks, p)
	}
	for i, p := range blocks {
		if i%3 != 1 {
			if err := a.Free(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; ; i++ {
		_, err := a.MallocStream(12<<20, 0)
		var oom *allocator.OutOfMemoryError
		if errors.As(err, &oom) {
			break
		}
		must(0, err)
		if i > 1000 {
			t.Fatal("the program never ran out of memory")
		}
	}
	return snapshot.FromAllocator(a.Snapshot()), a.MemoryStats()
}

// TestRecordedOOMBoundsTheDevice: a snapshot of a program that ran out of device
// memory replays, under its own setting, to the same OOM and figures — the oom
// entry's device_free says how much the CUDA context and others left the program —
// and under expandable segments, which would have served the request, without it,
// which the run's note and the advice say.
func TestRecordedOOMBoundsTheDevice(t *testing.T) {
	s, recorded := fragmentedOOM(t)
	res, err := Replay(s, settings(t, "", "expandable_segments:True"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.About.Usable) != 1 {
		t.Fatalf("About.Usable = %v; want the recorded OOM's bound", res.About.Usable)
	}
	if u := res.About.Usable[0]; u.Bytes != 8<<30 || u.Reserved+u.DeviceFree != u.Bytes || u.Held != u.Bytes-driverPage {
		t.Errorf("usable %+v; want 8 GiB, reserved + device_free, a driver page of it kept back", u)
	}
	if h := res.About.String(); !strings.Contains(h, "8.00 GiB usable (the recorded OOM at event") || !strings.Contains(h, "the replay keeps 2.00 MiB of it for the driver") {
		t.Errorf("header %q does not give the usable memory", res.About.String())
	}
	own := res.Runs[0]
	for _, k := range []string{"num_ooms", "num_alloc_retries", "num_device_alloc", "num_device_free",
		"reserved_bytes.all.peak", "allocated_bytes.all.peak", "inactive_split_bytes.all.peak"} {
		if own.Stats[k] != recorded[k] {
			t.Errorf("own setting: %s = %d, the recorded run's %d", k, own.Stats[k], recorded[k])
		}
	}
	if own.FirstOOM == nil || own.Avoided != nil || own.AvoidedOOMNote(true) != "" {
		t.Errorf("own setting: OOM %v, avoided %v; want the recorded OOM, none avoided", own.FirstOOM, own.Avoided)
	}
	exp := res.Runs[1]
	if exp.OOMs != 0 || len(exp.Avoided) != 1 || exp.Avoided[0] != own.FirstOOM.Event || !exp.Served() || exp.Stopped != own.FirstOOM.Event {
		t.Errorf("expandable: %d OOMs, avoided %v, served %v, stopped at %d; want none, the recorded one at event %d served and stopped at", exp.OOMs, exp.Avoided, exp.Served(), exp.Stopped, own.FirstOOM.Event)
	}
	if n := exp.AvoidedOOMNote(false); !strings.Contains(n, "does not happen under this setting: the replay stops there") {
		t.Errorf("expandable's note %q", n)
	}
	if nc := exp.notComparable(); !slices.Contains(nc, "num_ooms") || !slices.Contains(nc, "reserved_bytes.all.peak") {
		t.Errorf("expandable's figures not comparable: %v; want every one, OOMs too", nc)
	}
	own0 := res.Runs[0].Setting
	res.Advise(&own0)
	if a := res.Advice; a == nil || !a.BaselineOOM || a.Best != nil || !slices.Equal(a.Serves, []string{"expandable"}) || a.ServesAt != own.FirstOOM.Event {
		t.Errorf("advice %+v; want none for sure, expandable serving the failed request", a)
	}
	if txt := res.Advice.String(); !strings.Contains(txt, "expandable serves a request it failed") {
		t.Errorf("advice %q does not name the setting that serves the failed request", txt)
	}
	// Replayed on (--keep-going), the run goes past the served request.
	res, err = Replay(s, settings(t, "expandable_segments:True"), Options{ContinueAfterOOM: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Runs[0]; r.Served() || r.Stopped >= 0 || len(r.Avoided) != 1 {
		t.Errorf("--keep-going: served %v, stopped at %d, avoided %v; want it replayed on", r.Served(), r.Stopped, r.Avoided)
	}
}

// TestRecordedOOMKeepsNoMoreThanThePeakAllows: the page the replay's device keeps back
// of a recorded OOM's usable memory never takes what the run itself reserved in that
// stretch: a run that reached within a page of it before its OOM keeps back only the
// rest there, and its own replay serves every segment it made and fails where it
// failed; after the OOM, the whole page is kept back.
func TestRecordedOOMKeepsNoMoreThanThePeakAllows(t *testing.T) {
	const a = 0x7f0000000000
	s := trace(segAlloc(a, 6<<30, 0), alloc(a, 6<<30), freeReq(a, 6<<30), freeDone(a, 6<<30),
		segFree(a, 6<<30, 0, nil),
		oomEntry(8<<30, 6<<30+1<<20))
	res, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := UsableMemory{Event: 5, DeviceFree: 6<<30 + 1<<20, Bytes: 6<<30 + 1<<20, Held: 6<<30 - 1<<20,
		Earlier: []UsableStep{{Until: 5, Held: 6 << 30}}}
	if len(res.About.Usable) != 1 || !reflect.DeepEqual(res.About.Usable[0], want) {
		t.Fatalf("usable %+v; want %+v: the run's 6 GiB peak held up to its OOM, a page less after", res.About.Usable, want)
	}
	if h := res.About.String(); !strings.Contains(h, "the replay keeps 2.00 MiB of it for the driver, and holds more up to event 5") {
		t.Errorf("header %q does not say what the replay keeps back, and where it holds more", h)
	}
	if r := res.Runs[0]; r.MaxReserved != 6<<30 || r.OOMs != 1 {
		t.Errorf("own replay: peak reserved %d, %d OOMs; want the run's 6 GiB and its one OOM", r.MaxReserved, r.OOMs)
	}
}

// TestEarlierOOMsHoldMore: before an OOM that said the program could reserve more than
// a later one (what else the process held on the device grew in between), the replay's
// device holds what that OOM said, so a setting that needs more than the later OOMs
// allow early in the run is not taken to run out there.
func TestEarlierOOMsHoldMore(t *testing.T) {
	const a, b = 0x7f0000000000, 0x7f8000000000
	// 7 GiB in one segment and an OOM saying 8 GiB and a page usable; the segment
	// released; then 1 GiB and an OOM saying 7.5 GiB.
	s := trace(segAlloc(a, 7<<30, 0), alloc(a, 7<<30), oomEntry(16<<30, 1<<30+driverPage),
		freeReq(a, 7<<30), freeDone(a, 7<<30), segFree(a, 7<<30, 0, nil),
		segAlloc(b, 1<<30, 0), alloc(b, 1<<30), oomEntry(16<<30, 13<<29))
	res, err := Replay(s, settings(t, "", "roundup_power2_divisions:2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.About.Usable) != 1 {
		t.Fatalf("usable %v (warnings %q); want the least OOM's bound", res.About.Usable, res.Warnings)
	}
	u := res.About.Usable[0]
	if u.Bytes != 15<<29 || u.Held != 15<<29-driverPage || len(u.Earlier) != 1 || u.Earlier[0].Until != 2 || u.Earlier[0].Held != 8<<30 {
		t.Errorf("usable %+v; want 7.5 GiB less a page, 8 GiB up to entry 2", u)
	}
	if r := res.Runs[0]; r.OOMs != 2 || r.Stats["reserved_bytes.all.peak"] != 7<<30 {
		t.Errorf("own replay: %d OOMs, peak reserved %d; want the run's two and 7 GiB", r.OOMs, r.Stats["reserved_bytes.all.peak"])
	}
	// Rounded up to 8 GiB, the first request fits in what the device held then.
	if r := res.Runs[1]; r.FirstOOM == nil || r.FirstOOM.Event != 2 || r.Stats["reserved_bytes.all.peak"] != 8<<30 {
		t.Errorf("roundup 2: first OOM %+v, peak reserved %d; want the recorded OOM at entry 2 after an 8 GiB segment", r.FirstOOM, r.Stats["reserved_bytes.all.peak"])
	}
}

// TestSmallerCardWarned: a snapshot of a run that ran out on an 80 GB card, replayed
// without the card's size, says the card may be smaller than the H200 assumed; given
// the size, it says nothing of it.
func TestSmallerCardWarned(t *testing.T) {
	ff, err := reference.File(reference.Programs211, "oom_split_batch_serve_fp16__default.facts.json")
	if err != nil {
		t.Fatal(err)
	}
	s, f := snapshotBeside(t, ff), readFacts(t, ff)
	for _, total := range []int64{0, f.TotalMemory} {
		res, err := Replay(s, nil, Options{TotalMemory: total, NoAddressRange: true})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(res.Warnings, "\n")
		if warned := strings.Contains(w, "if the card was smaller, give its memory"); warned != (total == 0) {
			t.Errorf("total %d: warnings %q; want the smaller card named only when no total was given", total, w)
		}
	}
}

// TestRecordedOOMBoundExceeded: an OOM that leaves less usable than the run reserved
// earlier (another process took memory meanwhile) bounds nothing, and a warning says so.
func TestRecordedOOMBoundExceeded(t *testing.T) {
	const a = 0x7f0000000000
	s := trace(segAlloc(a, 4<<30, 0), alloc(a, 4<<30), freeReq(a, 4<<30), freeDone(a, 4<<30),
		segFree(a, 4<<30, 0, nil),
		oomEntry(6<<30, 2<<30))
	res, err := Replay(s, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.About.Usable) != 0 || res.Runs[0].OOMs != 0 {
		t.Errorf("usable %v, %d OOMs; want no bound", res.About.Usable, res.Runs[0].OOMs)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "the recorded OOM at event 5 left 2.00 GiB usable") {
		t.Errorf("warnings %q do not say why the OOM bounds nothing", w)
	}
}

// TestUsableOfShippedOOMs: the OOMs of each shipped program that ran out at its card's
// own limit, under each setting under which it did and in its rerun, say how much the
// program could reserve there (its reserved bytes plus the oom entry's device_free). That
// never rises during a run: what else the process holds on the device only grows (by
// 2 MiB after the training program's second OOM, by 68 MiB after the splitting server's
// first, which came inside its first forward, before cuBLAS initialised at the first
// matmul: usable-fall.log). And every run's last OOM gives the same
// figure within a page, the least of the run's, which bounds the replay's device
// (About.Usable). BENCHMARKS.md quotes the lines, one a program.
func TestUsableOfShippedOOMs(t *testing.T) {
	runs := shippedOOMRuns(t)
	held := [2]int64{math.MaxInt64, 0} // of the card, outside the cache, over every OOM
	for _, prog := range slices.Sorted(maps.Keys(runs)) {
		ooms, lo, hi := 0, int64(math.MaxInt64), int64(0)
		lastLo, lastHi := int64(math.MaxInt64), int64(0)
		card := ""
		for _, ff := range runs[prog] {
			s := snapshotBeside(t, ff)
			p := &preparer{s: s, trace: s.Traces[0], h: &history{}}
			p.segmentsBefore()
			if err := p.recordedReserved(); err != nil {
				t.Fatal(err)
			}
			var usable []int64
			for i, e := range s.Traces[0] {
				if e.Action == snapshot.ActionOOM {
					u := p.reservedBefore(i) + e.DeviceFree()
					if n := len(usable); n > 0 && u > usable[n-1] {
						t.Errorf("%s: the OOM at entry %d says %d bytes usable, more than the one before it (%d)", ff, i, u, usable[n-1])
					}
					usable = append(usable, u)
					lo, hi = min(lo, u), max(hi, u)
				}
			}
			f := readFacts(t, ff)
			for _, u := range usable {
				held = [2]int64{min(held[0], f.TotalMemory-u), max(held[1], f.TotalMemory-u)}
			}
			if int64(len(usable)) != f.Stats["num_ooms"] {
				t.Fatalf("%s: %d oom entries, PyTorch counted %d OOMs", ff, len(usable), f.Stats["num_ooms"])
			}
			if card != "" && f.Device != card {
				t.Errorf("%s: recorded on an %s, the program's other runs on an %s", ff, f.Device, card)
			}
			card = f.Device
			ooms += len(usable)
			last := usable[len(usable)-1]
			lastLo, lastHi = min(lastLo, last), max(lastHi, last)
		}
		line := fmt.Sprintf("recorded OOMs at the device's limit: %d runs of %s on the %s, %d OOMs; reserved + device_free from %d to %d bytes (%d MiB apart), never rising within a run; the runs' last OOMs %d MiB apart", len(runs[prog]), prog, card, ooms, lo, hi, (hi-lo)>>20, (lastHi-lastLo)>>20)
		t.Log(line)
		if lastHi-lastLo > pageSize {
			t.Errorf("%s: the runs' last OOMs give usable memory %d bytes apart, more than a page", prog, lastHi-lastLo)
		}
		quotedInBenchmarks(t, "the recorded OOMs' usable memory line", line)
	}
	if held != heldSeen {
		t.Errorf("the shipped OOMs say the cards held %d to %d bytes outside the cache; heldSeen says %d to %d", held[0], held[1], heldSeen[0], heldSeen[1])
	}
}

// TestContextHeldWindow: the Evoformer stack's run under max_split_size_mb:128, whose
// cached blocks filled an H100 without an OOM, replays exactly when the device keeps
// 686 to 704 MiB of the card back (contextHeld is 694), not 680 or 708; with the whole
// card the replay reserves 0.7 GB more than PyTorch did.
func TestContextHeldWindow(t *testing.T) {
	const prog = "evoformer_pair_chunked_infer_bf16"
	pickles, err := reference.GlobPickles(reference.Programs211, prog+"__default.pickle")
	if err != nil || len(pickles) != 1 {
		t.Fatalf("%s's default snapshot: %v, %v", prog, pickles, err)
	}
	s, err := snapshot.ReadFile(pickles[0])
	if err != nil {
		t.Fatal(err)
	}
	ff, err := reference.Glob(reference.Programs211, prog+"__max_split_size_mb_128.facts.json")
	if err != nil || len(ff) != 1 {
		t.Fatalf("%s's facts under max_split_size_mb:128: %v, %v", prog, ff, err)
	}
	f := readFacts(t, ff[0])
	for _, c := range []struct {
		held  int64
		exact bool
	}{{680 << 20, false}, {686 << 20, true}, {contextHeld, true}, {704 << 20, true}, {708 << 20, false}} {
		// The replay keeps contextHeld back of TotalMemory: give it a card that leaves c.held.
		res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory - c.held + contextHeld, NoAddressRange: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := exactIn(res.Runs[0], f); got != c.exact {
			t.Errorf("with %d MiB held: exact %v, want %v (reserved %d, PyTorch %d)", c.held>>20, got, c.exact, res.Runs[0].MaxReserved, f.MaxReserved)
		}
	}
	// The whole card: what the replay gave before contextHeld.
	res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory + contextHeld, NoAddressRange: true})
	if err != nil {
		t.Fatal(err)
	}
	if more := res.Runs[0].MaxReserved - f.MaxReserved; more < 650e6 || more > 750e6 {
		t.Errorf("with the whole card the replay reserved %d bytes more than PyTorch, not about 0.7 GB", more)
	}
}

// shippedOOMRuns lists, by program, the facts files of the shipped runs (each
// setting's and the rerun's) that ran out of memory at the card's own limit: OOMs
// counted and no cap below the device.
func shippedOOMRuns(t *testing.T) map[string][]string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.facts.json", "rerun/*.facts.json"} {
		fs, err := reference.Glob(reference.Programs211, pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	runs := map[string][]string{}
	for _, ff := range files {
		f := readFacts(t, ff)
		if !f.ranOut() || f.Frac != nil && *f.Frac < 1 {
			continue
		}
		prog, _, _ := strings.Cut(filepath.Base(ff), "__")
		runs[prog] = append(runs[prog], ff)
	}
	for prog, fs := range runs {
		dflt := prog + "__default.facts.json"
		if !slices.ContainsFunc(fs, func(f string) bool { return filepath.Base(f) == dflt && filepath.Base(filepath.Dir(f)) != "rerun" }) ||
			!slices.ContainsFunc(fs, func(f string) bool { return filepath.Base(f) == dflt && filepath.Base(filepath.Dir(f)) == "rerun" }) {
			t.Errorf("%s: %d runs ran out at the device's limit, not its default run and its rerun among them", prog, len(fs))
		}
	}
	if len(runs) == 0 {
		t.Fatal("no shipped program ran out of memory at the device's own limit")
	}
	return runs
}

// TestOwnSnapshotsOfShippedOOMs: each run of a shipped program that ran out at its
// card's own limit, replayed from its own snapshot under its own setting, gives every figure
// PyTorch measured, on a device that keeps one driver page of the usable memory back
// (UsableMemory.Held). The runs show why: in some of them the driver refused a
// cudaMalloc (the allocator released cached segments and asked again, inside one
// request) that would have left free part of the last page the later OOMs said was
// usable; on a device holding all of it, the replays of max_split_size_mb:128 and the
// capped setting reserve up to 6 MiB more than PyTorch did.
func TestOwnSnapshotsOfShippedOOMs(t *testing.T) {
	refusedInPage := 0
	for _, ff := range slices.Concat(slices.Collect(maps.Values(shippedOOMRuns(t)))...) {
		s, f := snapshotBeside(t, ff), readFacts(t, ff)
		what := filepath.Base(filepath.Dir(ff)) + "/" + filepath.Base(ff)
		res, err := Replay(s, []Setting{f.setting(t)}, Options{TotalMemory: f.TotalMemory, NoAddressRange: true})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		r := res.Runs[0]
		check(t, what+" from its own snapshot", r, f, acceptanceKeys)
		if len(res.About.Usable) != 1 {
			t.Fatalf("%s: usable %v, want the recorded OOMs' bound", what, res.About.Usable)
		}
		u := res.About.Usable[0]
		if u.Held != u.Bytes-driverPage {
			t.Errorf("%s: the replay holds %d of %d usable bytes, want one driver page less", what, u.Held, u.Bytes)
		}
		if n := refusedWithin(t, s, u.Bytes-driverPage, u.Bytes); n > 0 {
			refusedInPage++
			t.Logf("%s: %d cudaMalloc calls refused that would have left part of the last page free", what, n)
		}
	}
	if refusedInPage == 0 {
		t.Error("no run had a cudaMalloc refused inside the last page of its usable memory: the page kept back has no measurement behind it")
	}
}

// refusedWithin counts the device allocations on device 0 of s the driver refused
// though they would have brought the reserved memory to more than lo and no more than
// hi: segment releases inside one request followed by its new segment (PyTorch's retry
// path frees cached segments only after a cudaMalloc failed), where the reserved
// memory before those releases plus the new segment lies in (lo, hi].
func refusedWithin(t *testing.T, s *snapshot.Snapshot, lo, hi int64) int {
	t.Helper()
	p := &preparer{s: s, trace: s.Traces[0], h: &history{}}
	p.segmentsBefore()
	if err := p.recordedReserved(); err != nil {
		t.Fatal(err)
	}
	n := 0
	reserved, released := p.initialReserved, int64(0)
	for _, e := range p.trace {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			if at := reserved + released + e.Size; released > 0 && at > lo && at <= hi {
				n++
			}
			reserved += e.Size
			released = 0
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			reserved -= e.Size
			released += e.Size
		default:
			released = 0
		}
	}
	return n
}
