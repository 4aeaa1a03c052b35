package cuda

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"memlab.dev/memlab/tensor"
)

func TestCoalesce(t *testing.T) {
	tests := []struct {
		name      string
		shape     []int
		strides   [][]int
		wantShape []int
		wantSt    [][]int
	}{
		{"contiguous 3-D becomes one run", []int{2, 3, 4}, [][]int{{12, 4, 1}}, []int{24}, [][]int{{1}}},
		{"size-1 dims dropped", []int{1, 5, 1}, [][]int{{5, 1, 1}}, []int{5}, [][]int{{1}}},
		{"transpose stays 2-D", []int{3, 4}, [][]int{{4, 1}, {1, 3}}, []int{3, 4}, [][]int{{4, 1}, {1, 3}}},
		{"broadcast row", []int{8, 16}, [][]int{{16, 1}, {0, 1}}, []int{8, 16}, [][]int{{16, 1}, {0, 1}}},
		{"scalar", []int{}, [][]int{{}}, nil, [][]int{nil}},
		{"narrowed rows keep their gap", []int{4, 3}, [][]int{{5, 1}}, []int{4, 3}, [][]int{{5, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, st := coalesce(tt.shape, tt.strides...)
			if !reflect.DeepEqual(sh, tt.wantShape) || !reflect.DeepEqual(st, tt.wantSt) {
				t.Errorf("coalesce(%v, %v) = %v, %v; want %v, %v", tt.shape, tt.strides, sh, st, tt.wantShape, tt.wantSt)
			}
		})
	}
}

func TestFloat16Bits(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e-8, 0},
		{5.960464477539063e-08, 0x0001}, {6.103515625e-05, 0x0400}, {0.1, 0x2e66},
		{float32(math.Inf(-1)), 0xfc00}, {1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02},
	}
	for _, tt := range tests {
		if got := float16Bits(tt.f); got != tt.want {
			t.Errorf("float16Bits(%v) = %#04x, want %#04x", tt.f, got, tt.want)
		}
	}
	if got := float16Bits(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("float16Bits(NaN) = %#04x, not a NaN", got)
	}
}

func TestBFloat16Bits(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3f80}, {-1, 0xbf80}, {0.1, 0x3dcd}, {3.0e38, 0x7f62}, {1 + 1.0/256, 0x3f80}, {1 + 3.0/256, 0x3f82},
	}
	for _, tt := range tests {
		if got := bfloat16Bits(tt.f); got != tt.want {
			t.Errorf("bfloat16Bits(%v) = %#04x, want %#04x", tt.f, got, tt.want)
		}
	}
}

func TestEncodeScalar(t *testing.T) {
	tests := []struct {
		dt      tensor.DType
		v       float64
		want    uint64
		wantErr string
	}{
		{tensor.Float32, 1.5, uint64(math.Float32bits(1.5)), ""},
		{tensor.Int32, -1, 0xffffffff, ""},
		{tensor.Int64, 3.9, 3, ""},
		{tensor.Uint8, 255, 255, ""},
		{tensor.Uint8, 256, 0, "cannot be converted to uint8"},
		{tensor.Int32, math.NaN(), 0, "cannot be converted to int32"},
		{tensor.Bool, 2, 1, ""},
	}
	for _, tt := range tests {
		got, err := encodeScalar("Fill", tt.dt, tt.v)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("encodeScalar(%v, %v) error = %v, want %q", tt.dt, tt.v, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("encodeScalar(%v, %v) = %#x, %v; want %#x", tt.dt, tt.v, got, err, tt.want)
		}
	}
}

func TestDescLayout(t *testing.T) {
	b := desc(tensor.Strided{Base: 0x1000, DType: tensor.BFloat16, Offset: 7}, []int{2, 3}, []int{3, 1})
	le := func(off int) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[off+i])
		}
		return v
	}
	if le(0) != 0x1000 || le(8) != 7 || le(16) != 2 || le(24) != 3 || le(80) != 3 || le(88) != 1 {
		t.Errorf("desc fields misplaced: % x", b[:96])
	}
	if b[144] != 2 || b[148] != byte(tensor.BFloat16) {
		t.Errorf("rank/dtype = %d/%d, want 2/%d", b[144], b[148], tensor.BFloat16)
	}
}

func TestLiveRegions(t *testing.T) {
	d := &Device{}
	d.addRegion(0x1000, 0x100)
	d.addRegion(0x3000, 0x100)
	d.addRegion(0x3100, 0x100) // adjacent mapping
	tests := []struct {
		lo, hi uint64
		want   bool
	}{
		{0x1000, 0x1100, true}, {0x1080, 0x1101, false}, {0xfff, 0x1001, false},
		{0x30f0, 0x3110, true}, {0x3000, 0x3200, true}, {0x3000, 0x3201, false}, {0x2000, 0x2001, false},
	}
	for _, tt := range tests {
		if got := d.live(tt.lo, tt.hi); got != tt.want {
			t.Errorf("live(%#x, %#x) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
	d.removeRegion(0x3000, 0x100)
	if d.live(0x3000, 0x3001) {
		t.Error("removed region still live")
	}
}

func TestErrorOutOfMemory(t *testing.T) {
	var err error = &Error{Call: "cuMemAlloc_v2", Code: resultOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY"}
	var oom interface{ OutOfMemory() bool }
	if !errors.As(err, &oom) || !oom.OutOfMemory() {
		t.Fatal("out-of-memory error does not report OutOfMemory")
	}
	if want := "device/cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if (&Error{Code: 1}).OutOfMemory() {
		t.Error("CUDA_ERROR_INVALID_VALUE reports OutOfMemory")
	}
}

// TestOpenWithoutDriver runs where there is no GPU (CI): Open must fail with
// ErrNoDriver rather than crash.
func TestOpenWithoutDriver(t *testing.T) {
	if _, err := DeviceCount(); err == nil {
		t.Skip("a CUDA driver is present; the GPU tests cover Open")
	}
	_, err := Open(0)
	if !errors.Is(err, ErrNoDriver) || !strings.HasPrefix(err.Error(), "device/cuda: no CUDA driver") {
		t.Fatalf("Open(0) error = %v, want one wrapping ErrNoDriver", err)
	}
}

func TestOpenUnknownBinding(t *testing.T) {
	if _, err := DeviceCount(); err != nil {
		t.Skip("no CUDA driver: Open fails before the binding is chosen")
	}
	if _, err := OpenWith(0, Options{Binding: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown binding "nope"`) {
		t.Fatalf("OpenWith(binding nope) error = %v", err)
	}
}

func TestCheckOverlap(t *testing.T) {
	d := &Device{}
	d.addRegion(0x10000, 1<<30)
	op := func(shape, strides []int, offset int) operand {
		o, err := d.check("test", "x", tensor.Strided{Base: 0x10000, DType: tensor.Float32, Shape: shape, Strides: strides, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tests := []struct {
		name    string
		dst, in operand
		alias   bool
		wantErr string
	}{
		{"disjoint", op([]int{4}, []int{1}, 0), op([]int{4}, []int{1}, 4), true, ""},
		{"exact alias in place", op([]int{4, 4}, []int{4, 1}, 0), op([]int{4, 4}, []int{4, 1}, 0), true, ""},
		{"exact alias where none is allowed", op([]int{4}, []int{1}, 0), op([]int{4}, []int{1}, 0), false, "dst overlaps x"},
		{"shifted by one element", op([]int{4}, []int{1}, 0), op([]int{4}, []int{1}, 1), true, "partially overlaps x"},
		{"transposed alias", op([]int{4, 4}, []int{4, 1}, 0), op([]int{4, 4}, []int{1, 4}, 0), true, "partially overlaps"},
		{"interleaved columns", op([]int{4, 2}, []int{4, 2}, 0), op([]int{4, 2}, []int{4, 2}, 1), true, ""},
		{"too large to enumerate", op([]int{1 << 23}, []int{1}, 0), op([]int{1 << 23}, []int{1}, 1), true, "partially overlaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOverlap("Test", "x", tt.dst, tt.in, tt.alias)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkOverlap = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkOverlap = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestColMajorTranspose(t *testing.T) {
	tests := []struct {
		name               string
		rows, cols, sr, sc int
		wantOK             bool
		wantOp             uintptr
		wantLd             int
	}{
		{"row-major", 64, 32, 32, 1, true, 0, 32},
		{"row-major with padded rows", 64, 32, 40, 1, true, 0, 40},
		{"column-major (a transposed view)", 64, 32, 1, 64, true, 1, 64},
		{"single row, any row stride", 1, 32, 0, 1, true, 0, 32},
		{"single column", 64, 1, 1, 7, true, 0, 1},
		{"overlapping rows", 64, 32, 16, 1, false, 0, 0},
		{"no unit stride", 64, 32, 64, 2, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := colMajorTranspose(tt.rows, tt.cols, tt.sr, tt.sc)
			if ok != tt.wantOK || ok && (g.op != tt.wantOp || g.ld != tt.wantLd) {
				t.Errorf("colMajorTranspose(%d, %d, %d, %d) = %+v, %v; want op %d ld %d, %v",
					tt.rows, tt.cols, tt.sr, tt.sc, g, ok, tt.wantOp, tt.wantLd, tt.wantOK)
			}
		})
	}
}

func TestVecRows(t *testing.T) {
	mk := func(shape, strides []int, base uint64) (tensor.Strided, operand) {
		s := tensor.Strided{Base: tensor.Ptr(base), DType: tensor.Float32, Shape: shape, Strides: strides}
		return s, operand{s: s, start: base}
	}
	tests := []struct {
		name             string
		shape, sd, ss    []int
		base             uint64
		wantOK           bool
		wantRsd, wantRss int
	}{
		{"contiguous 2-D", []int{8, 4096}, []int{4096, 1}, []int{4096, 1}, 0x1000, true, 4096, 4096},
		{"contiguous 3-D merges rows", []int{2, 3, 64}, []int{192, 64, 1}, []int{192, 64, 1}, 0x1000, true, 64, 64},
		{"padded source rows", []int{4, 64}, []int{64, 1}, []int{128, 1}, 0x1000, true, 64, 128},
		{"one row", []int{128}, []int{1}, []int{1}, 0x1000, true, 128, 128},
		{"row length not a multiple of 4", []int{4, 66}, []int{66, 1}, []int{66, 1}, 0x1000, false, 0, 0},
		{"misaligned", []int{4, 64}, []int{64, 1}, []int{64, 1}, 0x1004, false, 0, 0},
		{"transposed source", []int{64, 64}, []int{64, 1}, []int{1, 64}, 0x1000, false, 0, 0},
		{"rows too long for one block", []int{2, 20000}, []int{20000, 1}, []int{20000, 1}, 0x1000, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, od := mk(tt.shape, tt.sd, tt.base)
			src, os := mk(tt.shape, tt.ss, tt.base)
			rsd, rss, ok := vecRows(dst, src, od, os)
			if ok != tt.wantOK || ok && (rsd != tt.wantRsd || rss != tt.wantRss) {
				t.Errorf("vecRows = %d, %d, %v; want %d, %d, %v", rsd, rss, ok, tt.wantRsd, tt.wantRss, tt.wantOK)
			}
		})
	}
}

func TestRowVecBlock(t *testing.T) {
	for _, tt := range []struct{ L, want int }{{4096, 256}, {1000, 64}, {4, 32}, {16384, 1024}} {
		if got := rowVecBlock(tt.L)[0]; int(got) != tt.want || int(got)*16 < tt.L {
			t.Errorf("rowVecBlock(%d) = %d threads, want %d", tt.L, got, tt.want)
		}
	}
}

func TestSpanMemory(t *testing.T) {
	m := &spanMemory{spans: []span{{0x1000, make([]byte, 16)}, {0x2000, make([]byte, 8)}}}
	tests := []struct {
		addr uint64
		n    int
		ok   bool
	}{{0x1000, 16, true}, {0x1008, 8, true}, {0x1008, 9, false}, {0x2000, 8, true}, {0xfff, 1, false}, {0x1800, 1, false}}
	for _, tt := range tests {
		b, err := m.Bytes(tensor.Ptr(tt.addr), tt.n)
		if (err == nil) != tt.ok || err == nil && len(b) != tt.n {
			t.Errorf("Bytes(%#x, %d) = %d bytes, %v; want ok=%v", tt.addr, tt.n, len(b), err, tt.ok)
		}
	}
}
