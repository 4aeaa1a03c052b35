package replay

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readNoPanic(t *testing.T, what string, data []byte) (tr *Trace, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: Read panicked: %v", what, r)
			err = nil
		}
	}()
	return Read(bytes.NewReader(data))
}

const header = `{"kind":"header","trace":"x","conf":"","total_memory":1073741824,"mem_get_info":[1073741824,1073741824],"ops":[["a",1024],["f",0]]}`

// Malformed traces are errors naming what is wrong, never panics.
func TestRobustReadMalformedTraces(t *testing.T) {
	good := gz(t, header+"\n")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"blank", []byte(" \n\t\n"), "empty"},
		{"truncated gzip", good[:len(good)/2], ""},
		{"gzip header only", good[:10], ""},
		{"gzip magic only", []byte{0x1f, 0x8b}, "gzip"},
		{"bad JSON list", []byte(`[["a", 1024], ["f"`), "bare op list"},
		{"bad JSON line", []byte(header + "\n{\"kind\":"), "line 2"},
		{"not JSON", []byte("hello\n"), "line 1"},
		{"unknown op", []byte(`[["x", 1]]`), `"x"`},
		{"op not a list", []byte(`[{"a": 1}]`), "want a list"},
		{"empty op", []byte(`[[]]`), "want a list"},
		{"op kind not a string", []byte(`[[1, 2]]`), "string"},
		{"alloc without size", []byte(`[["a"]]`), "one integer"},
		{"alloc with two sizes", []byte(`[["a", 1, 2]]`), "one integer"},
		{"negative alloc", []byte(`[["a", -1]]`), "negative"},
		{"fractional alloc", []byte(`[["a", 1.5]]`), "integer"},
		{"huge alloc", []byte(`[["a", 1e300]]`), "integer"},
		{"alloc past int64", []byte(`[["a", 9223372036854775808]]`), ""},
		{"string size", []byte(`[["a", "1024"]]`), "integer"},
		{"negative free id", []byte(`[["f", -3]]`), "negative"},
		{"frac NaN", []byte(`[["frac", "NaN"]]`), "frac"},
		{"frac above 1", []byte(`[["frac", 2]]`), "frac"},
		{"frac negative", []byte(`[["frac", -0.5]]`), "frac"},
		{"marker with argument", []byte(`[["s", 1]]`), "no argument"},
		{"unknown line kind", []byte(header + "\n{\"kind\":\"weird\"}"), `"weird"`},
		{"no header", []byte(`{"kind":"op","i":0,"op":["a",1],"seg_sizes":[]}`), "no header"},
		{"bad header", []byte(`{"kind":"header","ops":"nope"}`), "header"},
		{"too few op lines", []byte(header + "\n" + `{"kind":"op","i":0,"op":["a",1024],"seg_sizes":[]}`), "1 op lines for 2 ops"},
		{"op lines out of order", []byte(header + "\n" + `{"kind":"op","i":1,"op":["a",1024],"seg_sizes":[]}` + "\n" + `{"kind":"op","i":0,"op":["f",0],"seg_sizes":[]}`), "i=1"},
		{"bad block state", []byte(header + "\n" + `{"kind":"op","i":0,"op":["a",1024],"seg_sizes":[2097152],"segments":[{"addr":1,"total":2097152,"type":"S","blocks":[["x"]]}]}` + "\n" + `{"kind":"op","i":1,"op":["f",0],"seg_sizes":[]}`), ""},
	}
	for _, tt := range tests {
		tr, err := readNoPanic(t, tt.name, tt.data)
		if err == nil {
			t.Errorf("%s: Read accepted it (%d ops)", tt.name, len(tr.Ops))
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not mention %q", tt.name, err, tt.want)
		}
	}
	// A missing file and a directory.
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.jsonl.gz")); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
	if _, err := ReadFile(t.TempDir()); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	// A truncated copy of a real ground-truth file.
	matches, _ := filepath.Glob(filepath.Join("testdata", "*", "*.jsonl.gz"))
	if len(matches) == 0 {
		t.Fatal("no ground-truth files in testdata/*/ to truncate")
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 2, 20, len(data) / 3, len(data) - 9, len(data) - 1} {
		if _, err := readNoPanic(t, "truncated "+matches[0], data[:cut]); err == nil {
			t.Errorf("%s cut at %d of %d bytes: Read accepted it", matches[0], cut, len(data))
		}
	}
}

// Run and Check of odd but well-formed traces, and of traces built in code
// with values Read would refuse: errors (the header gets Read's checks) or
// documented no-ops, never panics,
// and the allocator consistent at the end.
func TestRobustRunOddTraces(t *testing.T) {
	nan := math.NaN()
	neg := -1.0
	huge := 1e300
	tests := []struct {
		name    string
		tr      *Trace
		wantErr string // "" means Run succeeds
	}{
		{"nil trace", nil, "nil"},
		{"no ops", &Trace{}, ""},
		{"free of an unknown id (a no-op, as recorded by PyTorch)", &Trace{Ops: []Op{{Kind: OpFree, N: 7}}}, ""},
		{"double free", &Trace{Ops: []Op{{Kind: OpAlloc, N: 512}, {Kind: OpFree, N: 0}, {Kind: OpFree, N: 0}}}, ""},
		{"free of an id far past the end", &Trace{Ops: []Op{{Kind: OpFree, N: math.MaxInt64}}}, ""},
		{"free of a negative id", &Trace{Ops: []Op{{Kind: OpAlloc, N: 512}, {Kind: OpFree, N: -1}}}, "id -1"},
		{"negative alloc", &Trace{Ops: []Op{{Kind: OpAlloc, N: -5}}}, "invalid size"},
		{"OOM takes an id", &Trace{Ops: []Op{{Kind: OpAlloc, N: math.MaxInt64}, {Kind: OpFree, N: 0}}}, ""},
		{"fraction NaN", &Trace{Ops: []Op{{Kind: OpFraction, Fraction: nan}}}, "fraction"},
		{"fraction 7", &Trace{Ops: []Op{{Kind: OpFraction, Fraction: 7}}}, "fraction"},
		{"unknown kind", &Trace{Ops: []Op{{Kind: "zz"}}}, `"zz"`},
		{"header without total memory", &Trace{Header: &Header{}, Ops: []Op{{Kind: OpAlloc, N: 1}}}, "total_memory"},
		{"negative total memory", &Trace{Header: &Header{TotalMemory: -1}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}}}, "total_memory -1"},
		{"NaN cap", &Trace{Header: &Header{TotalMemory: 1 << 30, CapGiB: &nan}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}}}, "cap_gib NaN"},
		{"negative cap", &Trace{Header: &Header{TotalMemory: 1 << 30, CapGiB: &neg}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}}}, "cap_gib -1"},
		{"huge cap", &Trace{Header: &Header{TotalMemory: 1 << 30, CapGiB: &huge}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}}}, ""},
		{"free memory above total", &Trace{Header: &Header{TotalMemory: 1 << 30, MemGetInfo: []int64{1 << 40, 1 << 30}}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}}}, "mem_get_info"},
		{"bad conf", &Trace{Header: &Header{TotalMemory: 1 << 30, Conf: "max_split_size_mb:x"}, Ops: []Op{{Kind: OpAlloc, N: 1}}}, "max_split_size_mb"},
		{"recorded segments of an odd shape", &Trace{Header: &Header{TotalMemory: 1 << 30}, Ops: []Op{{Kind: OpAlloc, N: 1 << 20}, {Kind: OpAlloc, N: 1 << 20}},
			NewSegs: [][][2]uint64{{{0, 0}, {math.MaxUint64, 1}}}, Ptrs: []uint64{math.MaxUint64}}, ""},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: Run panicked: %v", tt.name, r)
				}
			}()
			var states int
			res, err := Run(tt.tr, Options{Capacity: 1 << 30, States: func(State) { states++ }})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s: Run error %v, want one mentioning %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Errorf("%s: Run: %v", tt.name, err)
				return
			}
			if states != len(tt.tr.Ops) {
				t.Errorf("%s: %d states for %d ops", tt.name, states, len(tt.tr.Ops))
			}
			// The allocator stays usable: a fresh request and its free work.
			p, err := res.Allocator.Malloc(4096)
			if err != nil {
				t.Errorf("%s: Malloc after the replay: %v", tt.name, err)
				return
			}
			if err := res.Allocator.Free(p); err != nil {
				t.Errorf("%s: Free after the replay: %v", tt.name, err)
			}
		}()
	}
	// Check needs ground truth: anything else is an error.
	for name, tr := range map[string]*Trace{
		"nil":            nil,
		"bare":           {Ops: []Op{{Kind: OpAlloc, N: 1}}},
		"states missing": {Header: &Header{TotalMemory: 1 << 30}, Ops: []Op{{Kind: OpAlloc, N: 1}}},
		"states short":   {Header: &Header{TotalMemory: 1 << 30}, Ops: []Op{{Kind: OpAlloc, N: 1}, {Kind: OpFree, N: 0}}, States: []State{{Kind: "op"}}},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Check(%s) panicked: %v", name, r)
				}
			}()
			if _, err := Check(tr, Options{}); err == nil {
				t.Errorf("Check(%s) succeeded", name)
			}
		}()
	}
}

// FuzzRead feeds arbitrary bytes (plain and gzipped) to Read, and replays
// what it accepts: neither panics.
//
//	go test -run XXX -fuzz FuzzRead -fuzztime 20s ./replay
func FuzzRead(f *testing.F) {
	f.Add([]byte(`[["a",1024],["a",3000000],["f",0],["e"],["frac",0.5],["a",1],["s"],["r"],["f",9]]`), false)
	f.Add([]byte(header+"\n"), true)
	f.Add([]byte(header+"\n"+`{"kind":"op","i":0,"op":["a",1024],"seg_sizes":[2097152],"new_segs":[[1,2097152]],"ptr":1}`+"\n"+`{"kind":"op","i":1,"op":["f",0],"seg_sizes":[2097152]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, zip bool) {
		if zip {
			data = gz(t, string(data))
		}
		tr, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(tr.Ops) > 1000 {
			return
		}
		if _, err := Run(tr, Options{Capacity: 1 << 30, States: func(State) {}}); err != nil {
			return
		}
		if tr.GroundTruth() {
			_, _ = Check(tr, Options{})
		}
	})
}
