package replay

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// Input that used to be silently misread is refused with an error naming what
// is wrong: null arguments (read as 0), ground truth with two headers, a
// non-positive total memory, address 0 or overlapping recorded segments.
func TestReadRefusesMisreadableInput(t *testing.T) {
	const hdr = `{"kind":"header","trace":"x","conf":"","total_memory":1073741824,"mem_get_info":[1073741824,1073741824],"ops":[["a",1048576],["f",0]]}`
	op := func(i int, rest string) string {
		o := []string{`["a",1048576]`, `["f",0]`}[i]
		return `{"kind":"op","i":` + string(rune('0'+i)) + `,"op":` + o + `,"seg_sizes":[]` + rest + `}`
	}
	lines := func(ls ...string) []byte { return []byte(strings.Join(ls, "\n")) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"alloc null", []byte(`[["a",null]]`), `"a" takes one integer`},
		{"free null", []byte(`[["f",null]]`), `"f" takes one integer`},
		{"frac null", []byte(`[["frac",null]]`), `"frac" takes a number`},
		{"alloc true", []byte(`[["a",true]]`), `"a" takes one integer`},
		{"alloc list", []byte(`[["a",[1]]]`), `"a" takes one integer`},
		{"frac string", []byte(`[["frac","0.5"]]`), `"frac" takes a number`},
		{"two headers", lines(hdr, hdr), "line 2: a second header"},
		{"two baselines", lines(hdr, `{"kind":"baseline","seg_sizes":[]}`, `{"kind":"baseline","seg_sizes":[]}`), "line 3: a second baseline"},
		{"negative total memory", []byte(strings.Replace(hdr, `"total_memory":1073741824`, `"total_memory":-5`, 1)), "total_memory -5"},
		{"zero total memory", []byte(strings.Replace(hdr, `"total_memory":1073741824`, `"total_memory":0`, 1)), "total_memory 0"},
		{"free above total", []byte(strings.Replace(hdr, `"mem_get_info":[1073741824,1073741824]`, `"mem_get_info":[2147483648,1073741824]`, 1)), "mem_get_info"},
		{"negative cap", []byte(strings.Replace(hdr, `"conf":""`, `"conf":"","cap_gib":-1`, 1)), "cap_gib -1"},
		{"new segment at 0", lines(hdr, op(0, `,"ptr":140000000000000,"new_segs":[[0,2097152]]`), op(1, "")), "op line 0: new segment at address 0"},
		{"empty new segment", lines(hdr, op(0, `,"ptr":140000000000000,"new_segs":[[140000000000000,0]]`), op(1, "")), "op line 0: new segment of 0 bytes"},
		{"overlapping new segments", lines(hdr, op(0, `,"ptr":140000000000000,"new_segs":[[140000000000000,4194304],[140000002097152,2097152]]`), op(1, "")), "op line 0: new segments"},
		{"overlapping segments", lines(hdr, op(0, `,"ptr":140000000000000,"segments":[{"addr":140000000000000,"total":4194304,"type":"L","blocks":[]},{"addr":140000002097152,"total":2097152,"type":"L","blocks":[]}]`), op(1, "")), "op line 0: segments"},
		{"ptr 0 for an allocation", lines(hdr, op(0, `,"ptr":0`), op(1, "")), "op line 0: ptr 0 for a 1048576-byte allocation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(bytes.NewReader(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Read = %v, %v; want an error containing %q", tr, err, tt.want)
			}
		})
	}
	// A size-0 allocation has ptr 0, as torch.empty(0) does.
	zero := `{"kind":"header","trace":"x","conf":"","total_memory":1073741824,"ops":[["a",0]]}` + "\n" + `{"kind":"op","i":0,"op":["a",0],"ptr":0,"seg_sizes":[]}`
	if _, err := Read(strings.NewReader(zero)); err != nil {
		t.Errorf("ptr 0 of a 0-byte allocation: %v", err)
	}
}

// A recorded segment that would overlap one the replay holds is not handed to
// the allocator (it would corrupt it): the replay falls back to an address of
// its own and counts it as guessed.
func TestOracleNeverHandsOutOverlappingSegments(t *testing.T) {
	m := newOracleMemory(1<<30, 1<<30)
	m.beginOp(0x100000000, [][2]uint64{{0x100000000, 4 << 20}}, 0)
	a, err := m.Malloc(4 << 20)
	if err != nil || a != 0x100000000 {
		t.Fatalf("Malloc = %#x, %v", a, err)
	}
	// The next op's record claims a segment starting 2 MiB below the live one
	// and running into it.
	m.beginOp(0x100000000-2<<20, [][2]uint64{{0x100000000 - 2<<20, 4 << 20}}, 1)
	b, err := m.Malloc(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if b < a+4<<20 && b+4<<20 > a {
		t.Fatalf("Malloc = %#x+4 MiB, overlapping the live segment at %#x+4 MiB", b, a)
	}
	if m.Guessed != 1 {
		t.Errorf("Guessed = %d, want 1", m.Guessed)
	}
}

// A Trace built in code gets the header checks Read applies.
func TestRunChecksAHeaderBuiltInCode(t *testing.T) {
	for _, h := range []Header{{TotalMemory: -5}, {TotalMemory: 0}, {TotalMemory: 1 << 30, MemGetInfo: []int64{2 << 30, 1 << 30}}} {
		h.Ops = []Op{{Kind: OpAlloc, N: 1 << 20}}
		tr := &Trace{Header: &h, Ops: h.Ops}
		if _, err := Run(tr, Options{}); err == nil || !strings.HasPrefix(err.Error(), "replay: header: ") {
			t.Errorf("Run with header %+v: %v; want a header error", h, err)
		}
	}
}

// TestGzipBomb: a gzip file that expands beyond the bound is an error naming the
// bound, read only as far as the bound (not into memory whole).
func TestGzipBomb(t *testing.T) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte("[["))
	zeros := make([]byte, 1<<20)
	for range 64 {
		w.Write(zeros)
	}
	w.Close()
	_, err := ReadMax(bytes.NewReader(b.Bytes()), 4<<20)
	if err == nil || !strings.Contains(err.Error(), "larger than 4194304 bytes decompressed") {
		t.Fatalf("a %d-byte gzip of 64 MiB read with a 4 MiB bound: %v", b.Len(), err)
	}
	// Within the bound, the bound changes nothing.
	if _, err := ReadMax(strings.NewReader(`[["a",512],["f",0]]`), 20); err != nil {
		t.Fatal(err)
	}
}
