package whatif

import (
	"strings"
	"testing"

	"memlab.dev/memlab/allocator"
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

// TestReportAddressRange: a figure that depends on driver addresses shows its range as
// "{low, high}" in the table, with a note saying how many allocations were guessed
// over how many placements, and as "address_range" in the JSON.
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
	for _, want := range []string{"3 {2, 3}", "98.00 MiB {62.00 MiB, 98.00 MiB}", "depends on where the driver put 3 device allocations", "over 25 placements"} {
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
