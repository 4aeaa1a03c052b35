package whatif

import (
	"slices"
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memplot"
)

// TestColumns: one row per run as wide as the header, the setting in short, the
// device column only when the runs span devices, and WriteTable prints the same
// rows followed by each setting's full PYTORCH_CUDA_ALLOC_CONF.
func TestColumns(t *testing.T) {
	const a = 0x7f0000000000
	s := trace(alloc(a, 3<<20), freeReq(a, 3<<20), freeDone(a, 3<<20))
	settings, err := ParseSettings("", "max_split_size_mb:128,expandable_segments:True")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(s, settings, Options{})
	if err != nil {
		t.Fatal(err)
	}
	header, rows := res.Columns()
	if header[0] != "setting" || header[1] != "peak allocated" || len(rows) != 2 {
		t.Fatalf("header %q, %d rows", header, len(rows))
	}
	for i, r := range rows {
		if len(r) != len(header) {
			t.Errorf("row %d has %d cells for %d columns", i, len(r), len(header))
		}
	}
	if rows[0][0] != "default" || rows[1][0] != "max_split 128 + expandable" {
		t.Errorf("settings %q, %q", rows[0][0], rows[1][0])
	}
	if rows[0][1] != allocator.FormatSize(3<<20) {
		t.Errorf("peak allocated %q, want 3.00 MiB", rows[0][1])
	}
	var out strings.Builder
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, r := range rows {
		if !strings.Contains(text, r[0]) || !strings.Contains(text, r[len(r)-1]) {
			t.Errorf("WriteTable lacks row %q:\n%s", r, text)
		}
	}
	if !strings.Contains(text, "\nmax_split 128 + expandable: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True\n") {
		t.Errorf("WriteTable does not give the full setting:\n%s", text)
	}
	two := &Result{Runs: []Run{{Setting: settings[0], Device: 0}, {Setting: settings[0], Device: 1}}}
	header, rows = two.Columns()
	if header[1] != "device" || rows[1][1] != "1" {
		t.Errorf("two devices: header %q, row %q", header, rows[1])
	}
}

// TestTimingNoteOnlyWithARange: the note on GPU timing is printed for a row whose
// table cells carry a [low, high] range, naming those columns, and not for one
// whose range is only in memory_stats keys the table does not show; the settings of
// one device that share their timings get one explanation and a line each.
func TestTimingNoteOnlyWithARange(t *testing.T) {
	st := Setting{Conf: allocator.DefaultConfig()}
	exp, err := ParseSettings("expandable_segments:True")
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Runs: []Run{
		{Setting: st, Device: 0, CrossStreamFrees: 3, TimingSchedules: 9, TimingRange: map[string][2]int64{"active_bytes.all.peak": {1, 2}}},
		{Setting: st, Device: 1, CrossStreamFrees: 3, TimingSchedules: 9, TimingRange: map[string][2]int64{"reserved_bytes.all.peak": {1 << 20, 2 << 20}, "num_device_alloc": {3, 4}}},
		{Setting: exp[0], Device: 1, CrossStreamFrees: 3, TimingSchedules: 9, TimingRange: map[string][2]int64{"reserved_bytes.all.peak": {1 << 20, 2 << 20}}},
	}}
	var out strings.Builder
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "device 0: ") {
		t.Errorf("a timing note for device 0, whose row shows no range:\n%s", text)
	}
	if n := strings.Count(text, "GPU timing, device 1: 3 cross-stream frees (record_stream)"); n != 1 {
		t.Errorf("device 1's timing explained %d times, want once:\n%s", n, text)
	}
	for _, line := range []string{"\n  default: peak reserved, cudaMalloc\n", "\n  expandable: peak reserved\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("no line %q naming a setting's ranged columns:\n%s", line, text)
		}
	}
	if !strings.Contains(text, "0 bytes [1.00 MiB, 2.00 MiB]") {
		t.Errorf("device 1's row does not carry its range:\n%s", text)
	}
}

// TestLimitNotes: a cap that refused nothing and a collection that never ran say
// so; a threshold without a cap says PyTorch ignores it; engaged ones say how much.
func TestLimitNotes(t *testing.T) {
	gc, err := ParseSettings("garbage_collection_threshold:0.6")
	if err != nil {
		t.Fatal(err)
	}
	capped := gc[0]
	capped.Cap = 20 << 30
	for _, c := range []struct {
		run  Run
		want []string
	}{
		{Run{Setting: Setting{Conf: allocator.DefaultConfig()}}, nil},
		{Run{Setting: capped, Allowed: 20 << 30, MaxReserved: 1 << 30}, []string{
			"the cap of 20.00 GiB never engaged: no device allocation reached it (peak reserved 1024.00 MiB), so the figures are those without a cap",
			"garbage_collection_threshold:0.6 never engaged: reserved memory never exceeded 0.6 × the cap (12.00 GiB) when an allocation missed the cache"}},
		{Run{Setting: gc[0]}, []string{
			"garbage_collection_threshold:0.6 never engaged: PyTorch collects only under a memory cap (set_per_process_memory_fraction; --cap or --fraction here)"}},
		{Run{Setting: capped, Allowed: 20 << 30, MaxReserved: 19 << 30, Limits: allocator.Limits{CapRefusals: 1, GCPasses: 2, GCReleased: 3, GCReleasedBytes: 6 << 20}}, []string{
			"the cap of 20.00 GiB refused 1 device allocation (each sent the allocator to free cached segments and retry, or to an OOM)",
			"garbage_collection_threshold:0.6: the collection ran 2 times and freed 3 segments (6.00 MiB)"}},
	} {
		got := c.run.LimitNotes(About{TotalMemory: H200Memory})
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: notes\n  %q\nwant\n  %q", c.run.Setting.Label(), got, c.want)
		}
	}
}

// TestFullCardNote: a run whose peak reserved, or its range's high end, comes within
// nearCard of the device is told that its figures hang on what the card held
// outside PyTorch's cache; a run below it, one under a cap below it, one on a device a
// recorded OOM bounds and one on a toy device are not. The replay keeps contextHeld of
// a card back, and nothing of a toy device.
func TestFullCardNote(t *testing.T) {
	const total = 8 << 30
	ab := About{TotalMemory: total}
	bounded := About{TotalMemory: total, Usable: []UsableMemory{{Device: 0, Bytes: total - 1<<29}}}
	st := Setting{Conf: allocator.DefaultConfig()}
	for _, c := range []struct {
		what string
		run  Run
		ab   About
		want bool
	}{
		{"near the card", Run{Setting: st, MaxReserved: total - 1<<28}, ab, true},
		{"below the margin", Run{Setting: st, MaxReserved: total - 2<<30}, ab, false},
		{"its range's high end near the card", Run{Setting: st, MaxReserved: total - 2<<30,
			AddressRange: map[string][2]int64{"reserved_bytes.all.peak": {total - 2<<30, total - 1<<20}}}, ab, true},
		{"under a cap below the margin", Run{Setting: st, MaxReserved: total - 1<<28, Allowed: total / 2}, ab, false},
		{"on a device a recorded OOM bounds", Run{Setting: st, MaxReserved: total - 1<<28}, bounded, false},
		{"on another device than the bounded one", Run{Setting: st, Device: 1, MaxReserved: total - 1<<28}, bounded, true},
		{"on a toy device", Run{Setting: st, MaxReserved: 1<<30 - 1<<20}, About{TotalMemory: 1 << 30}, false},
	} {
		got := strings.Join(c.run.LimitNotes(c.ab), "\n")
		if has := strings.Contains(got, "the replay kept 694.00 MiB of the card back"); has != c.want {
			t.Errorf("%s: full-card note %v, want %v: %q", c.what, has, c.want, got)
		}
	}

	// End to end: a replay on a device of 8 GiB that reserves 7.25 GiB says so in its
	// table; one of 7.5 GiB does not fit beside the contextHeld the replay keeps back.
	const a = 0x7f0000000000
	s := trace(alloc(a, 7<<30+1<<28), freeReq(a, 7<<30+1<<28), freeDone(a, 7<<30+1<<28))
	res, err := Replay(s, []Setting{st}, Options{TotalMemory: total})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "peak reserved reaches 7.25 GiB of the device's 8.00 GiB: the replay kept 694.00 MiB of the card back") {
		t.Errorf("the table does not say the run came near the card:\n%s", out.String())
	}
	big := trace(alloc(a, 7<<30+1<<29), freeReq(a, 7<<30+1<<29), freeDone(a, 7<<30+1<<29))
	if res, err = Replay(big, []Setting{st}, Options{TotalMemory: total}); err != nil {
		t.Fatal(err)
	}
	if res.Runs[0].FirstOOM == nil {
		t.Errorf("7.50 GiB fitted an 8 GiB card beside the %d bytes the replay keeps back", contextHeld)
	}
	// A toy device keeps nothing back: 1 GiB holds an allocation of 1 GiB less a page.
	toy := trace(alloc(a, 1<<30-pageSize), freeReq(a, 1<<30-pageSize), freeDone(a, 1<<30-pageSize))
	if res, err = Replay(toy, []Setting{st}, Options{TotalMemory: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if res.Runs[0].FirstOOM != nil {
		t.Errorf("a toy device of 1 GiB kept memory back: %v", res.Runs[0].FirstOOM.Message)
	}
}

// TestPlotSharedCap: a cap every run shares is said once, in the title, and the
// key names the settings alone; runs under different caps keep theirs.
func TestPlotSharedCap(t *testing.T) {
	const a = 0x7f0000000000
	s := trace(alloc(a, 3<<20), freeReq(a, 3<<20), freeDone(a, 3<<20))
	settings, err := ParseSettings("", "expandable_segments:True")
	if err != nil {
		t.Fatal(err)
	}
	for i := range settings {
		settings[i].Fraction = 0.5
	}
	res, err := Replay(s, settings, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := memplot.Compare("What if", res)
	if err != nil {
		t.Fatal(err)
	}
	if f.Title.Text != "What if (fraction=0.5)" {
		t.Errorf("title %q, want the shared fraction in it", f.Title.Text)
	}
	svg, err := f.Encode("svg")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(svg), "default fraction") || !strings.Contains(string(svg), ">expandable<") {
		t.Errorf("the key repeats the shared fraction or lacks the setting")
	}
	res.Runs[1].Setting.Fraction = 0.25
	if f, err = memplot.Compare("What if", res); err != nil {
		t.Fatal(err)
	}
	if f.Title.Text != "What if" {
		t.Errorf("title %q with two fractions, want it unchanged", f.Title.Text)
	}
}

// TestReportAddressRange: a figure that depends on driver addresses shows its range as
// "{low, high}" in the table, with a note saying how many allocations were guessed
// over how many placements (the setting's line under its device's explanation), and
// as "address_range" in the JSON.
func TestReportAddressRange(t *testing.T) {
	res, err := Replay(addressTrace(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var table, js strings.Builder
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 {2, 3}", "98.00 MiB {62.00 MiB, 98.00 MiB}", "Driver addresses, device 0: ", "  default: 3 device allocations your run did not make, and some it made, over 25 placements ("} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	for _, want := range []string{`"address_range": {`, `"num_device_alloc": [`, `"address_placements": 25`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %q:\n%s", want, js.String())
		}
	}
}

// TestAddressNotesByDevice: the settings of one device whose figures carry address
// ranges share one explanation, each with a line saying what was placed and over how
// many placements; another device gets its own, and a setting without a range none.
func TestAddressNotesByDevice(t *testing.T) {
	st, err := ParseSettings("max_split_size_mb:128", "roundup_power2_divisions:4")
	if err != nil {
		t.Fatal(err)
	}
	rng := map[string][2]int64{"num_device_alloc": {2, 3}}
	res := &Result{Runs: []Run{
		{Setting: st[0], Device: 0, Guessed: 5, AddressPlacements: 40, AddressConverged: true, AddressRange: rng},
		{Setting: st[0], Device: 1, AddressPlacements: 30, AddressConverged: true, AddressRange: rng},
		{Setting: st[1], Device: 0, Guessed: 7, AddressPlacements: 50, AddressConverged: true, AddressRange: rng},
		{Setting: Setting{Conf: allocator.DefaultConfig()}, Device: 0},
	}}
	var out strings.Builder
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, c := range []struct {
		want string
		n    int
	}{
		{"Driver addresses, device 0: ", 1},
		{"Driver addresses, device 1: ", 1},
		{"\n  max_split 128: 5 device allocations your run did not make, and some it made, over 40 placements (converged", 1},
		{"\n  roundup 4: 7 device allocations your run did not make, and some it made, over 50 placements (converged", 1},
		{"\n  max_split 128: only device allocations your run made", 1},
		{"\n  default: ", 0},
	} {
		if n := strings.Count(text, c.want); n != c.n {
			t.Errorf("%q printed %d times, want %d:\n%s", c.want, n, c.n, text)
		}
	}
}

// TestReportAfterOOMRange: a replay that stops at a predicted OOM shows, beside the
// fragmentation peak that frees after the OOM could still raise, its range as
// "<low, high>" in the table, with one note saying why and what it assumes, and as
// "after_oom_range" (and the note) in the JSON; the figures frees cannot change carry
// none, and a run that did not stop carries none.
func TestReportAfterOOMRange(t *testing.T) {
	const a, b = 0x7f0000000000, 0x7f0010000000
	// a 20 MiB segment filled by 8 + 8 + 4 MiB (fragmentation peak 12 MiB, after the
	// first), then a 30 MiB request that a 40 MiB cap refuses
	s := trace(alloc(a, 8<<20), alloc(a+8<<20, 8<<20), alloc(a+16<<20, 4<<20), alloc(b, 30<<20))
	res, err := Replay(s, []Setting{{Conf: allocator.DefaultConfig(), Cap: 40 << 20}, {Conf: allocator.DefaultConfig()}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	capped, free := res.Runs[0], res.Runs[1]
	if capped.Stopped != 3 || free.Stopped != -1 {
		t.Fatalf("stopped at %d and %d, want 3 (the 30 MiB request) and -1", capped.Stopped, free.Stopped)
	}
	// freeing the two 8 MiB blocks leaves 16 MiB split beside the 4 MiB one
	want := map[string][2]int64{
		"inactive_split_bytes.all.peak": {12 << 20, 16 << 20}, "inactive_split_bytes.large_pool.peak": {12 << 20, 16 << 20},
		"inactive_split.all.peak": {1, 2}, "inactive_split.large_pool.peak": {1, 2},
	}
	if len(capped.AfterOOMRange) != len(want) {
		t.Errorf("after-OOM range %v, want %v", capped.AfterOOMRange, want)
	}
	for k, w := range want {
		if got := capped.AfterOOMRange[k]; got != w {
			t.Errorf("%s: after-OOM range %v, want %v", k, got, w)
		}
	}
	if free.AfterOOMRange != nil {
		t.Errorf("a run that did not stop has an after-OOM range %v", free.AfterOOMRange)
	}
	var table, js strings.Builder
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	text := table.String()
	for _, want := range []string{"12.00 MiB <12.00 MiB, 16.00 MiB>",
		"peak inactive split depends on what the program did after its OOM: the replay stops at the OOM, and after it the program's own exception handling frees tensors",
		"it assumes the program only frees after the OOM, as an exception unwinding does"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "depends on what the program did after its OOM"); n != 1 {
		t.Errorf("the after-OOM note appears %d times, want once (the capped run's):\n%s", n, text)
	}
	header, rows := res.Columns()
	for i, row := range rows {
		for j, cell := range row {
			if ranged := strings.Contains(cell, "<"); ranged != (i == 0 && header[j] == "peak inactive split") {
				t.Errorf("row %d, %s: %q", i, header[j], cell)
			}
		}
	}
	for _, want := range []string{`"after_oom_range": {`, `"inactive_split_bytes.all.peak": [`, `depends on what the program did after its OOM`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %q:\n%s", want, js.String())
		}
	}
	if strings.Count(js.String(), `"after_oom_range"`) != 1 {
		t.Errorf("JSON: an after_oom_range on the run that did not stop:\n%s", js.String())
	}
}

// TestSizesApart: sizes that differ print differently, in one unit, with no more
// decimals than that takes.
func TestSizesApart(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		vals []int64
		want []string
	}{
		{[]int64{3556769792, 3556769792, 3557843533}, []string{"3.312 GiB", "3.312 GiB", "3.313 GiB"}},
		{[]int64{1073741824, 1073741824, 1075838976}, []string{"1.000 GiB", "1.000 GiB", "1.002 GiB"}},
		{[]int64{2 * gib, 3 * gib}, []string{"2.00 GiB", "3.00 GiB"}},
		{[]int64{5 << 20, 5<<20 + 1}, []string{"5.000000 MiB", "5.000001 MiB"}},
	} {
		got := sizesApart(c.vals...)
		if !slices.Equal(got, c.want) {
			t.Errorf("sizesApart(%v) = %q, want %q", c.vals, got, c.want)
		}
	}
}

// TestRunsOutNote checks the note that says an OOM verdict depends on the placements or
// timings tried: only where their outcomes differ, counting the replay's own with them.
func TestRunsOutNote(t *testing.T) {
	cases := []struct {
		run  Run
		want string // "" or a part the note must hold
	}{
		{Run{AddressPlacements: 124, PlacementsRanOut: 65, NewOOMs: 1}, "66 of the 124 placements of device allocations tried ran out; this replay ran out"},
		{Run{AddressPlacements: 40, PlacementsRanOut: 3}, "3 of the 40 placements of device allocations tried ran out; this replay ran through"},
		{Run{TimingSchedules: 9, TimingsRanOut: 2}, "depends on GPU timing (when frees that wait for other streams, or DDP's buckets, are let go), which the snapshot does not fix: 2 of the 9 timings"},
		{Run{AddressPlacements: 40, PlacementsRanOut: 39, NewOOMs: 1}, ""}, // every one ran out
		{Run{AddressPlacements: 40}, ""}, // none did
		{Run{NewOOMs: 1}, ""},            // nothing tried besides the replay
	}
	for _, c := range cases {
		got := c.run.RunsOutNote()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: RunsOutNote() = %q, want one holding %q", c.run, got, c.want)
		}
	}
}
