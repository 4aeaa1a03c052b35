// Package devicetest is the conformance suite of device.Device: memory,
// virtual memory, hand-computed kernel cases (Known: literal inputs and
// results, so that a device whose kernels are the CPU reference itself, as
// the simulator's are, is still checked against something independent), and
// every kernel checked against the CPU reference (kernels/cpu) as oracle. The
// simulated device runs it in CI; the same suite, built here and carried to a
// GPU machine, runs on the CUDA backends.
//
// Tolerances are relative errors ‖out − ref‖ / ‖ref‖ over whole buffers (so
// a write outside a kernel's output is caught as well): 1e-5 for float32
// elementwise work, reductions, softmax and layer norm, 1e-4 for float32
// matmul, 1e-2 whenever float16 or bfloat16 is involved.
package devicetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/oracle"
	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// Run runs the whole suite on dev. dev must be freshly opened; Run frees what
// it allocates but does not close dev.
func Run(t *testing.T, dev device.Device) { RunExcept(t, dev, nil) }

// RunExcept runs the suite on dev but for the cases whose name, such as
// "Kernels/Copy/transpose/f32" or "BadInput/null base", skip reports true
// (a nil skip runs everything): for devices that can run only part of it.
func RunExcept(t *testing.T, dev device.Device, skip func(name string) bool) {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	for _, s := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Memory", func(t *testing.T) { Memory(t, dev) }},
		{"VirtualMemory", func(t *testing.T) { VirtualMemory(t, dev) }},
		{"Known", func(t *testing.T) { known(t, dev, skip) }},
		{"Kernels", func(t *testing.T) { kernels(t, dev, skip) }},
		{"BadInput", func(t *testing.T) { badInput(t, dev, skip) }},
		{"Time", func(t *testing.T) { Time(t, dev) }},
	} {
		if !skip(s.name) {
			t.Run(s.name, s.run)
		}
	}
}

// oom is implemented by out-of-memory errors.
type oom interface{ OutOfMemory() bool }

// Memory checks Malloc, Free, MemGetInfo and host copies.
func Memory(t *testing.T, dev device.Device) {
	free0, total, err := dev.MemGetInfo()
	if err != nil {
		t.Fatalf("MemGetInfo: %v", err)
	}
	if total == 0 || free0 > total {
		t.Fatalf("MemGetInfo = free %d, total %d", free0, total)
	}
	const size = 8 << 20
	p, err := dev.Malloc(size)
	if err != nil {
		t.Fatalf("Malloc(%d): %v", size, err)
	}
	if p == 0 {
		t.Fatal("Malloc returned address 0")
	}
	free1, _, err := dev.MemGetInfo()
	if err != nil {
		t.Fatal(err)
	}
	if free1 > free0-size {
		t.Errorf("free memory went from %d to %d after allocating %d", free0, free1, size)
	}
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	if err := dev.CopyFromHost(tensor.Ptr(p), data); err != nil {
		t.Fatalf("CopyFromHost: %v", err)
	}
	back := make([]byte, size)
	if err := dev.CopyToHost(back, tensor.Ptr(p)); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	if !bytes.Equal(back, data) {
		t.Fatal("bytes read back differ from bytes written")
	}
	part := make([]byte, 100)
	if err := dev.CopyToHost(part, tensor.Ptr(p+1000)); err != nil || !bytes.Equal(part, data[1000:1100]) {
		t.Errorf("CopyToHost at an inner address: %v", err)
	}
	if err := dev.CopyToHost(part, tensor.Ptr(p+size-50)); err == nil {
		t.Error("CopyToHost past the end of an allocation succeeded")
	}
	if err := dev.Free(p); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if err := dev.Free(p); err == nil {
		t.Error("double Free succeeded")
	}
	if err := dev.CopyToHost(part, tensor.Ptr(p)); err == nil {
		t.Error("CopyToHost from freed memory succeeded")
	}
	if err := dev.Free(12345); err == nil {
		t.Error("Free of an address never allocated succeeded")
	}
	_, err = dev.Malloc(2*total + 1<<30)
	var o oom
	if err == nil || !errors.As(err, &o) || !o.OutOfMemory() {
		t.Errorf("Malloc(2×total) error = %v, want an out-of-memory error", err)
	}
}

// VirtualMemory checks the calls expandable segments need.
func VirtualMemory(t *testing.T, dev device.Device) {
	g := dev.Granularity()
	if g == 0 || bits.OnesCount64(g) != 1 {
		t.Fatalf("Granularity() = %d, want a power of two", g)
	}
	addr, err := dev.ReserveAddress(4 * g)
	if err != nil {
		t.Fatalf("ReserveAddress(%d): %v", 4*g, err)
	}
	free0, _, _ := dev.MemGetInfo()
	for _, off := range []uint64{0, g} {
		if err := dev.Map(addr+off, g); err != nil {
			t.Fatalf("Map(+%d, %d): %v", off, g, err)
		}
	}
	free1, _, _ := dev.MemGetInfo()
	if free1 > free0-2*g {
		t.Errorf("free memory went from %d to %d after mapping %d", free0, free1, 2*g)
	}
	// A write across the boundary of two mappings.
	data := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 1000)
	at := addr + g - 3000
	if err := dev.CopyFromHost(tensor.Ptr(at), data); err != nil {
		t.Fatalf("CopyFromHost across two mappings: %v", err)
	}
	back := make([]byte, len(data))
	if err := dev.CopyToHost(back, tensor.Ptr(at)); err != nil || !bytes.Equal(back, data) {
		t.Fatalf("read back across two mappings: %v", err)
	}
	bad := []struct {
		name string
		f    func() error
	}{
		{"Map over a mapped page", func() error { return dev.Map(addr, g) }},
		{"Map misaligned", func() error { return dev.Map(addr+2*g+1, g) }},
		{"Map past the reservation", func() error { return dev.Map(addr+3*g, 2*g) }},
		{"write to an unmapped page", func() error { return dev.CopyFromHost(tensor.Ptr(addr+2*g), data[:10]) }},
		{"FreeAddress while mapped", func() error { return dev.FreeAddress(addr, 4*g) }},
		{"Unmap an unmapped range", func() error { return dev.Unmap(addr+2*g, g) }},
	}
	for _, b := range bad {
		if err := b.f(); err == nil {
			t.Errorf("%s succeeded", b.name)
		}
	}
	if err := dev.Unmap(addr, 2*g); err != nil {
		t.Fatalf("Unmap: %v", err)
	}
	if err := dev.CopyToHost(back[:10], tensor.Ptr(addr)); err == nil {
		t.Error("read from unmapped memory succeeded")
	}
	if err := dev.FreeAddress(addr, 4*g); err != nil {
		t.Fatalf("FreeAddress: %v", err)
	}
}

// Time checks that Time measures work on the device.
func Time(t *testing.T, dev device.Device) {
	p, err := dev.Malloc(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(p)
	s := tensor.Strided{Base: tensor.Ptr(p), DType: tensor.Float32, Shape: []int{16 << 20}, Strides: []int{1}}
	d, err := dev.Time(func() error { return dev.Random(s, 1, false, 0, 1) })
	if err != nil {
		t.Fatalf("Time: %v", err)
	}
	if d <= 0 {
		t.Errorf("Time of a 64 MiB random fill = %v, want > 0", d)
	}
	wantErr := errors.New("boom")
	if _, err := dev.Time(func() error { return wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("Time passed on error %v, want %v", err, wantErr)
	}
}

// env pairs the device under test with the oracle.
type env struct {
	t    *testing.T
	dev  device.Device
	ref  *cpu.Kernels
	host *oracle.HostMemory
	bufs []uint64
	seed uint64
}

// pair is one tensor argument on both sides: same dtype, shape, strides and
// offset, different memory.
type pair struct {
	dev, ref tensor.Strided
	nbytes   int
}

func newEnv(t *testing.T, dev device.Device) *env {
	h := oracle.NewHostMemory()
	e := &env{t: t, dev: dev, ref: cpu.New(h), host: h, seed: 1}
	t.Cleanup(func() {
		for _, p := range e.bufs {
			if err := dev.Free(p); err != nil {
				t.Errorf("Free: %v", err)
			}
		}
	})
	return e
}

// contig returns row-major strides for shape.
func contig(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// spec is a tensor layout: strides nil means contiguous.
type spec struct {
	dt      tensor.DType
	shape   []int
	strides []int
	offset  int
}

// alloc makes a pair with layout s over fresh memory filled with identical
// random values (uniform [lo, hi)) on both sides.
func (e *env) alloc(s spec, lo, hi float64) pair {
	e.t.Helper()
	st := s.strides
	if st == nil {
		st = contig(s.shape)
	}
	span := s.offset + 1
	for i, n := range s.shape {
		if n == 0 {
			span = 1
			break
		}
		span += (n - 1) * st[i]
	}
	es := s.dt.Size()
	nb := span * es
	if nb < 16 {
		nb = 16
	}
	nb = (nb + 15) &^ 15
	hp := e.host.Alloc(nb)
	flat := tensor.Strided{Base: hp, DType: s.dt, Shape: []int{nb / es}, Strides: []int{1}}
	e.seed++
	if err := e.ref.Random(flat, e.seed, false, lo, hi); err != nil {
		e.t.Fatalf("oracle Random: %v", err)
	}
	raw, _ := e.host.Bytes(hp, nb)
	dp, err := e.dev.Malloc(uint64(nb))
	if err != nil {
		e.t.Fatalf("Malloc(%d): %v", nb, err)
	}
	e.bufs = append(e.bufs, dp)
	if err := e.dev.CopyFromHost(tensor.Ptr(dp), raw); err != nil {
		e.t.Fatalf("CopyFromHost: %v", err)
	}
	mk := func(base tensor.Ptr) tensor.Strided {
		return tensor.Strided{Base: base, DType: s.dt, Shape: s.shape, Strides: st, Offset: s.offset}
	}
	return pair{dev: mk(tensor.Ptr(dp)), ref: mk(hp), nbytes: nb}
}

// view returns a pair that views p's memory with another layout.
func view(p pair, dt tensor.DType, shape, strides []int, offset int) pair {
	p.dev = tensor.Strided{Base: p.dev.Base, DType: dt, Shape: shape, Strides: strides, Offset: offset}
	p.ref = tensor.Strided{Base: p.ref.Base, DType: dt, Shape: shape, Strides: strides, Offset: offset}
	return p
}

// side picks one side of every pair.
type side func(pair) tensor.Strided

func devSide(p pair) tensor.Strided { return p.dev }
func refSide(p pair) tensor.Strided { return p.ref }

// check runs op on the oracle and on the device, then compares every buffer
// in outs (whole buffers, decoded as each pair's dtype) within tol.
func (e *env) check(tol float64, outs []pair, op func(k tensor.Kernels, s side) error) {
	e.t.Helper()
	if err := op(e.ref, refSide); err != nil {
		e.t.Fatalf("oracle: %v", err)
	}
	if err := op(e.dev, devSide); err != nil {
		e.t.Fatalf("device: %v", err)
	}
	if err := e.dev.Synchronize(); err != nil {
		e.t.Fatalf("Synchronize: %v", err)
	}
	for i, o := range outs {
		got := make([]byte, o.nbytes)
		if err := e.dev.CopyToHost(got, o.dev.Base); err != nil {
			e.t.Fatalf("CopyToHost: %v", err)
		}
		want, _ := e.host.Bytes(o.ref.Base, o.nbytes)
		dt := o.dev.DType
		if r := oracle.RelErr(oracle.Decode(dt, got), oracle.Decode(dt, want)); !(r <= tol) {
			e.t.Errorf("output %d (%v %v): relative error %.3g > %.0g", i, dt, o.dev.Shape, r, tol)
		}
	}
}

// tolFor returns the suite's tolerance for work in dtype dt.
func tolFor(dt tensor.DType, f32 float64) float64 {
	if dt == tensor.Float16 || dt == tensor.BFloat16 {
		return oracle.TolHalf
	}
	if dt.IsFloat() {
		return f32
	}
	return 0
}

// kernelCase is one entry of the kernel table.
type kernelCase struct {
	name string
	run  func(e *env)
}

// Kernels checks every kernel against the CPU reference.
func Kernels(t *testing.T, dev device.Device) { kernels(t, dev, func(string) bool { return false }) }

func kernels(t *testing.T, dev device.Device, skip func(string) bool) {
	for _, c := range kernelCases() {
		if skip("Kernels/" + c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.run(newEnv(t, dev)) })
	}
}

func f32s(shape ...int) spec { return spec{dt: tensor.Float32, shape: shape} }

// transposed returns the layout of the transpose of a contiguous [c, r] tensor.
func transposed(dt tensor.DType, r, c int) spec {
	return spec{dt: dt, shape: []int{r, c}, strides: []int{1, r}}
}

var (
	floatTypes = []tensor.DType{tensor.Float32, tensor.Float16, tensor.BFloat16}
	unaryOps   = []struct {
		name string
		op   tensor.UnaryOp
	}{{"relu", tensor.Relu}, {"gelu", tensor.Gelu}, {"exp", tensor.Exp}, {"neg", tensor.Neg}, {"scale", tensor.Scale}}
	binaryOps = []struct {
		name string
		op   tensor.BinaryOp
	}{{"add", tensor.Add}, {"sub", tensor.Sub}, {"mul", tensor.Mul}, {"div", tensor.Div}}
)

func kernelCases() []kernelCase {
	var cs []kernelCase
	add := func(name string, run func(e *env)) { cs = append(cs, kernelCase{name, run}) }

	// Fill.
	for _, f := range []struct {
		name string
		s    spec
		v    float64
	}{
		{"f32/contiguous", f32s(1000), 1.5},
		{"f16/transposed", transposed(tensor.Float16, 30, 17), -2.25},
		{"bf16/step2", spec{dt: tensor.BFloat16, shape: []int{100}, strides: []int{2}}, 3.1},
		{"i64/contiguous", spec{dt: tensor.Int64, shape: []int{333}}, -7},
		{"u8/contiguous", spec{dt: tensor.Uint8, shape: []int{77}}, 200},
		{"bool/contiguous", spec{dt: tensor.Bool, shape: []int{65}}, 1},
		{"i32/narrowed", spec{dt: tensor.Int32, shape: []int{5, 6}, strides: []int{10, 1}, offset: 3}, 42},
	} {
		add("Fill/"+f.name, func(e *env) {
			d := e.alloc(f.s, -1, 1)
			e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Fill(s(d), f.v) })
		})
	}

	// Random.
	for _, r := range []struct {
		name   string
		s      spec
		normal bool
		lo, hi float64
	}{
		{"uniform/f32", f32s(4099), false, -2, 3},
		{"normal/f32", f32s(37, 41), true, 0.5, 2},
		{"uniform/bf16-transposed", transposed(tensor.BFloat16, 64, 33), false, 0, 1},
		{"normal/f16", spec{dt: tensor.Float16, shape: []int{999}}, true, 0, 1},
		{"uniform/i32", spec{dt: tensor.Int32, shape: []int{500}}, false, -100, 100},
	} {
		add("Random/"+r.name, func(e *env) {
			d := e.alloc(r.s, 0, 0)
			e.check(tolFor(r.s.dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error {
				return k.Random(s(d), 12345, r.normal, r.lo, r.hi)
			})
		})
	}

	// Copy.
	for _, c := range []struct {
		name     string
		dst, src spec
	}{
		{"contiguous/f32-aligned", f32s(4096), f32s(4096)},
		{"contiguous/f32-odd", f32s(1001), f32s(1001)},
		{"transpose/f32", f32s(131, 67), transposed(tensor.Float32, 131, 67)},
		{"transpose/bf16", spec{dt: tensor.BFloat16, shape: []int{300, 257}}, transposed(tensor.BFloat16, 300, 257)},
		{"transpose/i64", spec{dt: tensor.Int64, shape: []int{33, 65}}, transposed(tensor.Int64, 33, 65)},
		{"transpose/batched", f32s(3, 40, 50), spec{dt: tensor.Float32, shape: []int{3, 40, 50}, strides: []int{2000, 1, 40}}},
		{"permute/3d", f32s(4, 5, 6), spec{dt: tensor.Float32, shape: []int{4, 5, 6}, strides: []int{1, 24, 4}}},
		{"broadcast-src", f32s(8, 16), spec{dt: tensor.Float32, shape: []int{8, 16}, strides: []int{0, 1}}},
		{"narrowed-src", f32s(5, 7), spec{dt: tensor.Float32, shape: []int{5, 7}, strides: []int{11, 1}, offset: 2}},
		{"strided-dst", spec{dt: tensor.Float32, shape: []int{6, 6}, strides: []int{12, 2}}, f32s(6, 6)},
		{"convert/f32-to-bf16", spec{dt: tensor.BFloat16, shape: []int{1000}}, f32s(1000)},
		{"convert/f32-to-f16-transposed", spec{dt: tensor.Float16, shape: []int{20, 30}}, transposed(tensor.Float32, 20, 30)},
		{"convert/i32-to-f32", f32s(300), spec{dt: tensor.Int32, shape: []int{300}}},
		{"convert/f32-to-i64", spec{dt: tensor.Int64, shape: []int{300}}, f32s(300)},
		{"convert/bf16-to-f32", f32s(513), spec{dt: tensor.BFloat16, shape: []int{513}}},
	} {
		add("Copy/"+c.name, func(e *env) {
			d := e.alloc(c.dst, -1, 1)
			src := e.alloc(c.src, -100, 100)
			e.check(tolFor(c.dst.dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Copy(s(d), s(src)) })
		})
	}

	// Unary, out of place and in place.
	for _, u := range unaryOps {
		for _, dt := range floatTypes {
			add(fmt.Sprintf("Unary/%s/%v", u.name, dt), func(e *env) {
				src := e.alloc(spec{dt: dt, shape: []int{1027}}, -3, 3)
				d := e.alloc(spec{dt: dt, shape: []int{1027}}, -1, 1)
				e.check(tolFor(dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Unary(u.op, s(d), s(src), 0.5) })
			})
			add(fmt.Sprintf("Unary/%s/%v/in-place", u.name, dt), func(e *env) {
				x := e.alloc(spec{dt: dt, shape: []int{64, 33}}, -3, 3)
				e.check(tolFor(dt, oracle.TolFloat32), []pair{x}, func(k tensor.Kernels, s side) error { return k.Unary(u.op, s(x), s(x), -1.25) })
			})
		}
		add(fmt.Sprintf("Unary/%s/transposed-src", u.name), func(e *env) {
			src := e.alloc(transposed(tensor.Float32, 40, 24), -3, 3)
			d := e.alloc(f32s(40, 24), -1, 1)
			e.check(oracle.TolFloat32, []pair{d}, func(k tensor.Kernels, s side) error { return k.Unary(u.op, s(d), s(src), 2) })
		})
	}

	// Binary: contiguous, broadcast, in place, transposed.
	for _, b := range binaryOps {
		for _, dt := range floatTypes {
			add(fmt.Sprintf("Binary/%s/%v", b.name, dt), func(e *env) {
				a := e.alloc(spec{dt: dt, shape: []int{2051}}, -3, 3)
				bb := e.alloc(spec{dt: dt, shape: []int{2051}}, 0.5, 3)
				d := e.alloc(spec{dt: dt, shape: []int{2051}}, -1, 1)
				e.check(tolFor(dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(b.op, s(d), s(a), s(bb)) })
			})
		}
		add(fmt.Sprintf("Binary/%s/broadcast-row", b.name), func(e *env) {
			a := e.alloc(f32s(33, 70), -3, 3)
			row := e.alloc(f32s(70), 0.5, 3)
			bb := view(row, tensor.Float32, []int{33, 70}, []int{0, 1}, 0)
			d := e.alloc(f32s(33, 70), -1, 1)
			e.check(oracle.TolFloat32, []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(b.op, s(d), s(a), s(bb)) })
		})
		add(fmt.Sprintf("Binary/%s/in-place-transposed", b.name), func(e *env) {
			a := e.alloc(f32s(48, 20), -3, 3)
			bb := e.alloc(transposed(tensor.Float32, 48, 20), 0.5, 3)
			e.check(oracle.TolFloat32, []pair{a}, func(k tensor.Kernels, s side) error { return k.Binary(b.op, s(a), s(a), s(bb)) })
		})
	}
	add("Binary/add/i32", func(e *env) {
		a := e.alloc(spec{dt: tensor.Int32, shape: []int{100}}, -1000, 1000)
		bb := e.alloc(spec{dt: tensor.Int32, shape: []int{100}}, -1000, 1000)
		d := e.alloc(spec{dt: tensor.Int32, shape: []int{100}}, 0, 1)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(tensor.Add, s(d), s(a), s(bb)) })
	})

	// Integer and bool work (exact, wrapping arithmetic as in the reference).
	i32s := func(shape ...int) spec { return spec{dt: tensor.Int32, shape: shape} }
	i64s := func(shape ...int) spec { return spec{dt: tensor.Int64, shape: shape} }
	add("Int/sum-i32-dim1", func(e *env) {
		src := e.alloc(i32s(7, 300), -1000, 1000)
		d := e.alloc(i32s(7, 1), 0, 1)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Reduce(tensor.Sum, s(d), s(src), 1) })
	})
	add("Int/max-i64-dim0", func(e *env) {
		src := e.alloc(i64s(9, 40), -1e6, 1e6)
		d := e.alloc(i64s(1, 40), 0, 1)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Reduce(tensor.Max, s(d), s(src), 0) })
	})
	add("Int/div-i32-truncates", func(e *env) {
		a := e.alloc(i32s(200), -1000, 1000)
		b := e.alloc(i32s(200), 1, 50)
		d := e.alloc(i32s(200), 0, 1)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(tensor.Div, s(d), s(a), s(b)) })
	})
	add("Int/mul-i64-broadcast", func(e *env) {
		a := e.alloc(i64s(6, 10), -1e5, 1e5)
		row := e.alloc(i64s(10), -1e5, 1e5)
		d := e.alloc(i64s(6, 10), 0, 1)
		b := view(row, tensor.Int64, []int{6, 10}, []int{0, 1}, 0)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(tensor.Mul, s(d), s(a), s(b)) })
	})
	add("Int/neg-i32-in-place", func(e *env) {
		x := e.alloc(i32s(100), -1000, 1000)
		e.check(0, []pair{x}, func(k tensor.Kernels, s side) error { return k.Unary(tensor.Neg, s(x), s(x), 0) })
	})
	add("Int/matmul-i64", func(e *env) {
		a := e.alloc(i64s(9, 13), -100, 100)
		b := e.alloc(i64s(13, 5), -100, 100)
		d := e.alloc(i64s(9, 5), 0, 1)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Matmul(s(d), s(a), s(b)) })
	})
	add("Bool/add-is-or", func(e *env) {
		a := e.alloc(spec{dt: tensor.Bool, shape: []int{64}}, 0, 2)
		b := e.alloc(spec{dt: tensor.Bool, shape: []int{64}}, 0, 2)
		d := e.alloc(spec{dt: tensor.Bool, shape: []int{64}}, 0, 2)
		e.check(0, []pair{d}, func(k tensor.Kernels, s side) error { return k.Binary(tensor.Add, s(d), s(a), s(b)) })
	})

	// Reductions.
	for _, r := range []struct {
		name string
		op   tensor.ReduceOp
		dt   tensor.DType
		sh   []int
		dim  int
	}{
		{"sum/dim0", tensor.Sum, tensor.Float32, []int{5, 37, 129}, 0},
		{"sum/dim1", tensor.Sum, tensor.Float32, []int{5, 37, 129}, 1},
		{"sum/dim2", tensor.Sum, tensor.Float32, []int{5, 37, 129}, 2},
		{"max/dim0", tensor.Max, tensor.Float32, []int{5, 37, 129}, 0},
		{"max/dim1", tensor.Max, tensor.Float32, []int{5, 37, 129}, 1},
		{"max/dim2", tensor.Max, tensor.Float32, []int{5, 37, 129}, 2},
		{"sum/long-rows", tensor.Sum, tensor.Float32, []int{4, 5000}, 1},
		{"sum/bf16", tensor.Sum, tensor.BFloat16, []int{16, 1000}, 1},
		{"max/f16", tensor.Max, tensor.Float16, []int{16, 100}, 0},
	} {
		add("Reduce/"+r.name, func(e *env) {
			src := e.alloc(spec{dt: r.dt, shape: r.sh}, 0, 1)
			ds := append([]int(nil), r.sh...)
			ds[r.dim] = 1
			d := e.alloc(spec{dt: r.dt, shape: ds}, -1, 1)
			e.check(tolFor(r.dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Reduce(r.op, s(d), s(src), r.dim) })
		})
	}
	add("Reduce/sum/transposed-src", func(e *env) {
		src := e.alloc(transposed(tensor.Float32, 70, 90), 0, 1)
		d := e.alloc(f32s(70, 1), -1, 1)
		e.check(oracle.TolFloat32, []pair{d}, func(k tensor.Kernels, s side) error { return k.Reduce(tensor.Sum, s(d), s(src), 1) })
	})

	// Softmax and layer norm.
	for _, r := range []struct {
		name string
		src  spec
	}{
		{"f32", f32s(33, 1000)},
		{"f32/long-rows", f32s(3, 20000)},
		{"f32/4096", f32s(8, 4096)},
		{"f32/narrowed-rows", spec{dt: tensor.Float32, shape: []int{4, 64}, strides: []int{128, 1}}},
		{"f32/3d", f32s(2, 5, 77)},
		{"f32/transposed", transposed(tensor.Float32, 64, 48)},
		{"bf16", spec{dt: tensor.BFloat16, shape: []int{16, 4096}}},
		{"f16", spec{dt: tensor.Float16, shape: []int{5, 100}}},
	} {
		add("Softmax/"+r.name, func(e *env) {
			src := e.alloc(r.src, -4, 4)
			d := e.alloc(spec{dt: r.src.dt, shape: r.src.shape}, -1, 1)
			e.check(tolFor(r.src.dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Softmax(s(d), s(src)) })
		})
		add("LayerNorm/"+r.name, func(e *env) {
			src := e.alloc(r.src, -4, 4)
			L := r.src.shape[len(r.src.shape)-1]
			g := e.alloc(spec{dt: r.src.dt, shape: []int{L}}, 0.5, 1.5)
			b := e.alloc(spec{dt: r.src.dt, shape: []int{L}}, -1, 1)
			d := e.alloc(spec{dt: r.src.dt, shape: r.src.shape}, -1, 1)
			e.check(tolFor(r.src.dt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error {
				return k.LayerNorm(s(d), s(src), s(g), s(b), 1e-5)
			})
		})
	}

	// Matmul.
	for _, m := range []struct {
		name    string
		a, b, d spec
		tol     float64
	}{
		{"f32", f32s(130, 70), f32s(70, 250), f32s(130, 250), oracle.TolMatmul32},
		{"f32/a-transposed", transposed(tensor.Float32, 130, 70), f32s(70, 250), f32s(130, 250), oracle.TolMatmul32},
		{"f32/b-transposed", f32s(64, 96), transposed(tensor.Float32, 96, 33), f32s(64, 33), oracle.TolMatmul32},
		{"f32/batched", f32s(3, 65, 33), f32s(3, 33, 47), f32s(3, 65, 47), oracle.TolMatmul32},
		{"f32/batched-shared-b", f32s(2, 20, 30), f32s(30, 10), f32s(2, 20, 10), oracle.TolMatmul32},
		{"bf16/large", spec{dt: tensor.BFloat16, shape: []int{256, 512}}, spec{dt: tensor.BFloat16, shape: []int{512, 128}}, spec{dt: tensor.BFloat16, shape: []int{256, 128}}, oracle.TolHalf},
		{"bf16", spec{dt: tensor.BFloat16, shape: []int{100, 64}}, spec{dt: tensor.BFloat16, shape: []int{64, 80}}, spec{dt: tensor.BFloat16, shape: []int{100, 80}}, oracle.TolHalf},
		{"bf16/both-transposed", transposed(tensor.BFloat16, 64, 48), transposed(tensor.BFloat16, 48, 72), spec{dt: tensor.BFloat16, shape: []int{64, 72}}, oracle.TolHalf},
		{"bf16/batched-shared-b", spec{dt: tensor.BFloat16, shape: []int{3, 40, 64}}, spec{dt: tensor.BFloat16, shape: []int{64, 24}}, spec{dt: tensor.BFloat16, shape: []int{3, 40, 24}}, oracle.TolHalf},
		{"f16", spec{dt: tensor.Float16, shape: []int{70, 130}}, spec{dt: tensor.Float16, shape: []int{130, 40}}, spec{dt: tensor.Float16, shape: []int{70, 40}}, oracle.TolHalf},
	} {
		add("Matmul/"+m.name, func(e *env) {
			a := e.alloc(m.a, -1, 1)
			b := e.alloc(m.b, -1, 1)
			d := e.alloc(m.d, -1, 1)
			e.check(m.tol, []pair{d}, func(k tensor.Kernels, s side) error { return k.Matmul(s(d), s(a), s(b)) })
		})
	}
	// tensor.MatmulInto's pooled attention scores: q [4, 6, 8] @ kᵀ (a
	// transposed view of [4, 10, 8]) into the first 10 columns of a [4, 6,
	// 16] buffer; the columns beyond must keep their values.
	add("Matmul/f32/dst-columns-of-a-buffer", func(e *env) {
		q := e.alloc(f32s(4, 6, 8), -1, 1)
		k := e.alloc(f32s(4, 10, 8), -1, 1)
		kt := view(k, tensor.Float32, []int{4, 8, 10}, []int{80, 1, 8}, 0)
		buf := e.alloc(f32s(4, 6, 16), -1, 1)
		d := view(buf, tensor.Float32, []int{4, 6, 10}, []int{96, 16, 1}, 0)
		e.check(oracle.TolMatmul32, []pair{buf}, func(k tensor.Kernels, s side) error { return k.Matmul(s(d), s(q), s(kt)) })
	})

	// Embedding.
	for _, m := range []struct {
		name   string
		wdt    tensor.DType
		idt    tensor.DType
		ishape []int
	}{
		{"f32/i64", tensor.Float32, tensor.Int64, []int{3, 7}},
		{"f32/i32", tensor.Float32, tensor.Int32, []int{10}},
		{"bf16/i64", tensor.BFloat16, tensor.Int64, []int{2, 2, 5}},
	} {
		add("Embedding/"+m.name, func(e *env) {
			w := e.alloc(spec{dt: m.wdt, shape: []int{50, 64}}, -1, 1)
			idx := e.alloc(spec{dt: m.idt, shape: m.ishape}, 0, 50)
			d := e.alloc(spec{dt: m.wdt, shape: append(append([]int(nil), m.ishape...), 64)}, -1, 1)
			e.check(tolFor(m.wdt, oracle.TolFloat32), []pair{d}, func(k tensor.Kernels, s side) error { return k.Embedding(s(d), s(w), s(idx)) })
		})
	}
	return cs
}

// BadInput checks that bad arguments are errors on the device as on the
// oracle, and that the device still works afterwards.
func BadInput(t *testing.T, dev device.Device) { badInput(t, dev, func(string) bool { return false }) }

func badInput(t *testing.T, dev device.Device, skip func(string) bool) {
	e := newEnv(t, dev)
	a := e.alloc(f32s(8, 8), -1, 1)
	b := e.alloc(f32s(8, 8), -1, 1)
	v := e.alloc(f32s(8), -1, 1)
	idx := e.alloc(spec{dt: tensor.Int64, shape: []int{4}}, 0, 8)
	emb := e.alloc(f32s(4, 8), -1, 1)
	freed := e.alloc(f32s(8, 8), -1, 1)
	// Free the device side of `freed` now: it is used after release below.
	p := uint64(freed.dev.Base)
	if err := dev.Free(p); err != nil {
		t.Fatal(err)
	}
	e.bufs = e.bufs[:len(e.bufs)-1]
	big := view(a, tensor.Float32, []int{8, 1 << 20}, []int{1 << 20, 1}, 0)
	tests := []struct {
		name   string
		refToo bool
		run    func(k tensor.Kernels, s side) error
	}{
		{"binary shape mismatch", true, func(k tensor.Kernels, s side) error { return k.Binary(tensor.Add, s(a), s(b), s(v)) }},
		{"invalid dtype", true, func(k tensor.Kernels, s side) error {
			x := s(a)
			x.DType = 99
			return k.Unary(tensor.Relu, x, s(b), 0)
		}},
		{"rank 9", true, func(k tensor.Kernels, s side) error {
			x := s(v)
			x.Shape, x.Strides = []int{1, 1, 1, 1, 1, 1, 1, 1, 8}, []int{8, 8, 8, 8, 8, 8, 8, 8, 1}
			return k.Fill(x, 0)
		}},
		{"strides do not match shape", true, func(k tensor.Kernels, s side) error {
			x := s(a)
			x.Strides = []int{1}
			return k.Fill(x, 0)
		}},
		{"past the end of the allocation", true, func(k tensor.Kernels, s side) error { return k.Copy(s(big), s(big)) }},
		{"null base", true, func(k tensor.Kernels, s side) error {
			x := s(a)
			x.Base = 0
			return k.Fill(x, 1)
		}},
		{"use after free", false, func(k tensor.Kernels, s side) error { return k.Fill(s(freed), 1) }},
		{"matmul inner dims", true, func(k tensor.Kernels, s side) error {
			return k.Matmul(s(a), s(view(a, tensor.Float32, []int{8, 4}, []int{8, 1}, 0)), s(b))
		}},
		{"reduce dim out of range", true, func(k tensor.Kernels, s side) error { return k.Reduce(tensor.Sum, s(v), s(a), 2) }},
		{"embedding index out of range", true, func(k tensor.Kernels, s side) error {
			if err := k.Fill(s(idx), 8); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return k.Embedding(s(emb), s(a), s(idx))
		}},
		{"layernorm gamma size", true, func(k tensor.Kernels, s side) error {
			return k.LayerNorm(s(a), s(b), s(view(v, tensor.Float32, []int{4}, []int{1}, 0)), s(v), 1e-5)
		}},
		{"fill value out of range", true, func(k tensor.Kernels, s side) error {
			return k.Fill(s(view(a, tensor.Uint8, []int{16}, []int{1}, 0)), 300)
		}},
		{"partially overlapping copy", true, func(k tensor.Kernels, s side) error {
			return k.Copy(s(view(a, tensor.Float32, []int{60}, []int{1}, 1)), s(view(a, tensor.Float32, []int{60}, []int{1}, 0)))
		}},
		{"matmul into its input", true, func(k tensor.Kernels, s side) error { return k.Matmul(s(a), s(a), s(b)) }},
		{"broadcast output", true, func(k tensor.Kernels, s side) error {
			return k.Fill(s(view(v, tensor.Float32, []int{8, 8}, []int{0, 1}, 0)), 1)
		}},
	}
	for _, tt := range tests {
		if skip("BadInput/" + tt.name) {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			if tt.refToo {
				if err := tt.run(e.ref, refSide); err == nil || strings.HasPrefix(err.Error(), "setup") {
					t.Fatalf("oracle accepted the input (error %v): the case is wrong", err)
				}
			}
			err := tt.run(dev, devSide)
			if err == nil || strings.HasPrefix(err.Error(), "setup") {
				t.Fatalf("device error = %v, want an error", err)
			}
		})
	}
	// The device still works.
	e.check(0, []pair{a}, func(k tensor.Kernels, s side) error { return k.Fill(s(a), 2) })
}
