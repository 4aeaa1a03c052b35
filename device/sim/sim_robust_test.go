package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"memlab.dev/memlab/tensor"
)

func noPanicErr(t *testing.T, what string, f func() error) error {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", what, r)
				err = fmt.Errorf("panic")
			}
		}()
		err = f()
	}()
	return err
}

func newRobustDevice(t *testing.T) *Device {
	t.Helper()
	d, err := New(Config{Capacity: 64 << 20, NoContext: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Kernels given nil, mismatched, out-of-range or malformed arguments return an
// error; none panics or writes outside its memory.
func TestRobustKernelsRejectBadArguments(t *testing.T) {
	d := newRobustDevice(t)
	p, err := d.Malloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	base := tensor.Ptr(p)
	f32 := func(shape ...int) tensor.Strided {
		return tensor.Strided{Base: base, DType: tensor.Float32, Shape: shape, Strides: tensor.ContiguousStrides(shape)}
	}
	good := f32(4, 4)
	bad := map[string]tensor.Strided{
		"nil shape, strides":     {Base: base, DType: tensor.Float32, Strides: []int{1}},
		"shape, nil strides":     {Base: base, DType: tensor.Float32, Shape: []int{4}},
		"zero base":              {DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}},
		"unknown base":           {Base: 0x1234, DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}},
		"past the allocation":    {Base: base, DType: tensor.Float32, Shape: []int{1 << 20}, Strides: []int{1}},
		"negative size":          {Base: base, DType: tensor.Float32, Shape: []int{-4}, Strides: []int{1}},
		"negative stride":        {Base: base, DType: tensor.Float32, Shape: []int{4}, Strides: []int{-1}},
		"negative offset":        {Base: base, DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}, Offset: -1},
		"huge offset":            {Base: base, DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}, Offset: math.MaxInt64 / 2},
		"overflowing stride":     {Base: base, DType: tensor.Float32, Shape: []int{4}, Strides: []int{math.MaxInt64 / 3}},
		"overflowing shape":      {Base: base, DType: tensor.Float32, Shape: []int{1 << 40, 1 << 40}, Strides: []int{0, 0}},
		"bad dtype":              {Base: base, DType: tensor.DType(42), Shape: []int{4}, Strides: []int{1}},
		"too many dims":          {Base: base, DType: tensor.Float32, Shape: make([]int, 9), Strides: make([]int, 9)},
		"base near address end":  {Base: tensor.Ptr(math.MaxUint64 - 8), DType: tensor.Float32, Shape: []int{4}, Strides: []int{1}},
		"different float16 dims": {Base: base, DType: tensor.Float16, Shape: []int{4, 4}, Strides: []int{4, 1}},
	}
	idx := tensor.Strided{Base: base + 4096, DType: tensor.Int64, Shape: []int{2}, Strides: []int{1}}
	for name, s := range bad {
		calls := map[string]func() error{
			"Fill":       func() error { return d.Fill(s, 1) },
			"Random":     func() error { return d.Random(s, 1, true, 0, 1) },
			"Copy dst":   func() error { return d.Copy(s, good) },
			"Copy src":   func() error { return d.Copy(good, s) },
			"Unary":      func() error { return d.Unary(tensor.Relu, s, good, 0) },
			"Unary src":  func() error { return d.Unary(tensor.Exp, good, s, 0) },
			"Binary":     func() error { return d.Binary(tensor.Add, good, s, good) },
			"Reduce":     func() error { return d.Reduce(tensor.Sum, f32(4, 1), s, 1) },
			"Softmax":    func() error { return d.Softmax(s, good) },
			"LayerNorm":  func() error { return d.LayerNorm(good, good, s, f32(4), 1e-5) },
			"Matmul":     func() error { return d.Matmul(good, s, good) },
			"Embedding":  func() error { return d.Embedding(f32(2, 4), s, idx) },
			"Embed idx":  func() error { return d.Embedding(f32(2, 4), good, s) },
			"Embed dst":  func() error { return d.Embedding(s, good, idx) },
			"Matmul dst": func() error { return d.Matmul(s, good, good) },
		}
		for cname, call := range calls {
			what := cname + " with " + name
			if name == "different float16 dims" && (cname == "Copy dst" || cname == "Copy src" || cname == "Fill" || cname == "Random") {
				continue // a dtype conversion, or a valid float16 destination
			}
			if err := noPanicErr(t, what, call); err == nil {
				t.Errorf("%s: no error", what)
			}
		}
	}
	// Unknown ops, bad dims, mismatched shapes, indices outside the weight.
	for what, call := range map[string]func() error{
		"Unary op 99":         func() error { return d.Unary(tensor.UnaryOp(99), good, good, 0) },
		"Binary op 99":        func() error { return d.Binary(tensor.BinaryOp(99), good, good, good) },
		"Reduce op 99":        func() error { return d.Reduce(tensor.ReduceOp(99), f32(4, 1), good, 1) },
		"Reduce dim 5":        func() error { return d.Reduce(tensor.Sum, f32(4, 1), good, 5) },
		"Reduce dim -1":       func() error { return d.Reduce(tensor.Sum, f32(4, 1), good, -1) },
		"Reduce wrong dst":    func() error { return d.Reduce(tensor.Sum, f32(4, 4), good, 1) },
		"Copy shape mismatch": func() error { return d.Copy(f32(16), good) },
		"Matmul 2x4 @ 2x4":    func() error { return d.Matmul(f32(2, 2), f32(2, 4), f32(2, 4)) },
		"Matmul 1-D":          func() error { return d.Matmul(f32(1), f32(4), f32(4)) },
		"Softmax of a scalar": func() error { return d.Softmax(f32(), f32()) },
		"Embedding idx out of range": func() error {
			if err := d.CopyFromHost(idx.Base, []byte{0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}); err != nil {
				return nil
			}
			return d.Embedding(f32(2, 4), good, idx)
		},
		"Embedding negative idx": func() error {
			if err := d.CopyFromHost(idx.Base, []byte{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
				return nil
			}
			return d.Embedding(f32(2, 4), good, idx)
		},
		// Malloc takes whole 2 MiB pages: the end is the page's.
		"CopyFromHost past the end": func() error { return d.CopyFromHost(base+(2<<20)-4, make([]byte, 8)) },
		"CopyToHost past the end":   func() error { return d.CopyToHost(make([]byte, 8), base+(2<<20)-4) },
		"CopyFromHost to 0":         func() error { return d.CopyFromHost(0, make([]byte, 8)) },
		"CopyToHost from unknown":   func() error { return d.CopyToHost(make([]byte, 8), 0x42) },
		"CopyFromHost at max addr":  func() error { return d.CopyFromHost(tensor.Ptr(math.MaxUint64-2), make([]byte, 8)) },
	} {
		if err := noPanicErr(t, what, call); err == nil {
			t.Errorf("%s: no error", what)
		}
	}
	if err := d.Free(p); err != nil {
		t.Fatal(err)
	}
	if free, total, _ := d.MemGetInfo(); free != total {
		t.Errorf("after freeing everything: %d of %d bytes free", free, total)
	}
}

// Memory calls with odd sizes and addresses: errors, and MemGetInfo as before.
func TestRobustMemoryCallsRejectBadArguments(t *testing.T) {
	d := newRobustDevice(t)
	free0, _, err := d.MemGetInfo()
	if err != nil {
		t.Fatal(err)
	}
	g := d.Granularity()
	r, err := d.ReserveAddress(4 * g)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Map(r, g); err != nil {
		t.Fatal(err)
	}
	before, _, _ := d.MemGetInfo()
	for what, call := range map[string]func() error{
		"Malloc(0)":                 func() error { _, err := d.Malloc(0); return err },
		"Malloc(max)":               func() error { _, err := d.Malloc(math.MaxUint64); return err },
		"Malloc(max - page)":        func() error { _, err := d.Malloc(math.MaxUint64 - g + 2); return err },
		"Malloc(past capacity)":     func() error { _, err := d.Malloc(1 << 40); return err },
		"Free(0)":                   func() error { return d.Free(0) },
		"Free(unknown)":             func() error { return d.Free(0x7f0000000000 + 1<<40) },
		"Free(reservation)":         func() error { return d.Free(r) },
		"ReserveAddress(0)":         func() error { _, err := d.ReserveAddress(0); return err },
		"ReserveAddress(unaligned)": func() error { _, err := d.ReserveAddress(g + 1); return err },
		"ReserveAddress(max)":       func() error { _, err := d.ReserveAddress(math.MaxUint64 &^ (g - 1)); return err },
		"Map(unaligned)":            func() error { return d.Map(r+g+1, g) },
		"Map(zero size)":            func() error { return d.Map(r+g, 0) },
		"Map(twice)":                func() error { return d.Map(r, g) },
		"Map(past reservation)":     func() error { return d.Map(r+3*g, 2*g) },
		"Map(overflowing range)":    func() error { return d.Map(r+g, math.MaxUint64&^(g-1)) },
		"Map(outside)":              func() error { return d.Map(0x1000000, g) },
		"Map(past capacity)":        func() error { return d.Map(r+g, 3*g) },
		"Unmap(unmapped)":           func() error { return d.Unmap(r+g, g) },
		"Unmap(part of a mapping)":  func() error { return d.Unmap(r, g/2) },
		"Unmap(overflowing)":        func() error { return d.Unmap(r, math.MaxUint64&^(g-1)) },
		"FreeAddress(still mapped)": func() error { return d.FreeAddress(r, 4*g) },
		"FreeAddress(wrong size)":   func() error { return d.FreeAddress(r, 2*g) },
		"FreeAddress(unknown)":      func() error { return d.FreeAddress(0x42<<21, g) },
		"Time(nil)":                 func() error { _, err := d.Time(nil); return err },
	} {
		if what == "Map(past capacity)" {
			continue // 3 pages fit in 64 MiB; kept in the table as a reminder of the case
		}
		err := noPanicErr(t, what, call)
		if err == nil && what != "Free(0)" {
			t.Errorf("%s: no error", what)
		}
		if now, _, _ := d.MemGetInfo(); now != before {
			t.Errorf("%s changed free memory: %d -> %d", what, before, now)
			before = now
		}
	}
	if err := d.Unmap(r, g); err != nil {
		t.Fatal(err)
	}
	if err := d.FreeAddress(r, 4*g); err != nil {
		t.Fatal(err)
	}
	if now, _, _ := d.MemGetInfo(); now != free0 {
		t.Errorf("free memory %d at the start, %d at the end", free0, now)
	}
	// After Close: errors, no panic.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for what, call := range map[string]func() error{
		"Malloc":         func() error { _, err := d.Malloc(1 << 20); return err },
		"MemGetInfo":     func() error { _, _, err := d.MemGetInfo(); return err },
		"ReserveAddress": func() error { _, err := d.ReserveAddress(g); return err },
		"Fill": func() error {
			return d.Fill(tensor.Strided{Base: 0x7f0000000000, DType: tensor.Float32, Shape: []int{1}, Strides: []int{1}}, 1)
		},
	} {
		err := noPanicErr(t, what+" after Close", call)
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after Close: %v", what, err)
		}
	}
	if err := noPanicErr(t, "second Close", d.Close); err != nil {
		t.Errorf("second Close: %v; want nil (Close is idempotent)", err)
	}
}

// New with odd values: an error naming the value that is wrong.
func TestRobustConfigErrorsNameTheValue(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want []string
	}{
		{Config{Capacity: 1}, []string{"capacity 1 ", "page"}},
		{Config{Capacity: math.MaxUint64}, []string{"capacity 18446744073709551615"}},
		{Config{Capacity: 4 << 20, ContextOverhead: 8 << 20}, []string{"context overhead 8 MiB", "capacity 4 MiB"}},
		{Config{Index: -1}, []string{"negative device index -1"}},
		{Config{MallocLatency: -1}, []string{"negative latency", "malloc -1ns"}},
		{Config{FreeLatency: -time.Second}, []string{"negative latency", "free -1s"}},
	} {
		err := noPanicErr(t, fmt.Sprintf("New(%+v)", tc.c), func() error {
			d, err := New(tc.c)
			if err == nil {
				d.Close()
			}
			return err
		})
		if err == nil {
			t.Errorf("New(%+v) succeeded", tc.c)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), "sim: ") {
				t.Errorf("New(%+v) = %q; want an error starting \"sim: \" and containing %q", tc.c, err, w)
			}
		}
	}
}
