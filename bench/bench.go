// Package bench measures memlab on a device beside PyTorch on the same card:
// the caching allocator against raw cuMemAlloc, copies and elementwise
// kernels against the device's copy rate, the tiled transpose behind
// Contiguous, layer norm, softmax and matmul. Every kernel is first checked
// against the CPU reference (kernels/cpu) on a smaller problem, then timed
// with device events after warm-up; the figure is the median of many runs on
// inputs several times larger than the GPU's L2 cache (the (4096, 4096)
// float32 problems of layer norm and softmax, 64 MiB, are the task's size and
// only about the L2's).
//
// PyTorch's half comes from torch_bench.py (beside this file), which prints
// JSON under the same keys; Run starts it after memlab's own runs so the two
// never share the GPU. On the simulated device the same code runs on small
// problems and the report says plainly that its figures are not GPU figures.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strings"
	"time"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/oracle"
	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// Reference figures of the H200 the goals are stated against
// (shared/docs/gpu-device.md, measured with PyTorch 2.11 on 2026-11-29).
const (
	// CopyRateH200 is the device-to-device copy rate, bytes read + written per second.
	CopyRateH200 = 4196e9
	// TorchTransposeH200 is PyTorch's b.copy_(a.t()) for 8192×8192 float32.
	TorchTransposeH200 = 1160e9
)

// Reps is the number of back-to-back runs of a kernel between one pair of
// device events; a figure is the median over Iters such samples of the time
// per run. Timing several runs per sample keeps the launch of the first one
// out of the figure, as on the PyTorch side (torch_bench.py does the same).
const Reps = 5

// Options configure Run.
type Options struct {
	// Device is the device to measure.
	Device device.Device
	// Quick runs small problems and few repetitions (the simulated device's mode).
	Quick bool
	// Iters is the number of timed samples per kernel, each of Reps runs (the
	// median is reported); 0 means 20, or 2 when Quick.
	Iters int
	// Torch is the path of torch_bench.py; empty skips PyTorch.
	Torch string
	// Python runs Torch; empty means "python3".
	Python string
	// Log receives one line per finished measurement; nil discards them.
	Log io.Writer
}

// Row is one figure of the report.
type Row struct {
	Key    string  `json:"key"`    // shared with torch_bench.py
	Name   string  `json:"name"`   // what was measured
	Unit   string  `json:"unit"`   // "GB/s", "TFLOP/s" or "µs"
	Memlab float64 `json:"memlab"` // memlab's figure
	Torch  float64 `json:"torch"`  // PyTorch's figure; 0 when not measured
	Goal   string  `json:"goal"`   // the goal, in words
	Met    string  `json:"met"`    // "yes", "no", or "" when there is no goal
	Check  string  `json:"check"`  // the correctness check: relative error vs the CPU reference
	// MemlabSpread and TorchSpread are the figures of the slowest and the
	// fastest of the timed samples (kernel rows; zero where not measured).
	MemlabSpread [2]float64 `json:"memlab_spread"`
	TorchSpread  [2]float64 `json:"torch_spread"`
}

// Ratio is memlab's figure relative to PyTorch's, oriented so that more than
// 1 means memlab is better (rates divided, times inverted); 0 without PyTorch.
func (r Row) Ratio() float64 {
	if r.Torch == 0 || r.Memlab == 0 {
		return 0
	}
	if r.Unit == "µs" {
		return r.Torch / r.Memlab
	}
	return r.Memlab / r.Torch
}

// Report is the result of one Run.
type Report struct {
	Device    string    `json:"device"`
	Name      string    `json:"name"`
	Simulated bool      `json:"simulated"`
	Date      time.Time `json:"date"`
	Torch     string    `json:"torch"` // PyTorch's version and device, or why it is absent
	Rows      []Row     `json:"rows"`
}

// Run measures everything on o.Device.
func Run(o Options) (*Report, error) {
	if o.Device == nil {
		return nil, fmt.Errorf("bench: no device")
	}
	if o.Iters <= 0 {
		o.Iters = 20
		if o.Quick {
			o.Iters = 2
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	r := &Report{Device: o.Device.String(), Name: o.Device.Name(), Simulated: o.Device.Kind() != device.CUDA, Date: time.Now().UTC()}
	b := &runner{o: o, dev: o.Device, rep: r}
	if err := b.allocs(); err != nil {
		return r, err
	}
	if err := b.warmUp(); err != nil {
		return r, err
	}
	for _, k := range kernelBenches() {
		if err := b.kernel(k); err != nil {
			return r, fmt.Errorf("bench: %s: %w", k.key, err)
		}
		if blas, ok := o.Device.(cuBLASSwitch); ok && k.flops != nil && blas.SetCUBLAS(true) {
			// Matmul ran through cuBLAS: measure memlab's own kernel too.
			r.Rows[len(r.Rows)-1].Name += " (cuBLAS via purego)"
			blas.SetCUBLAS(false)
			tk := k
			tk.key, tk.name = k.key+"_tiled", k.name+" (memlab tiled kernel)"
			err := b.kernel(tk)
			blas.SetCUBLAS(true)
			if err != nil {
				return r, fmt.Errorf("bench: %s: %w", tk.key, err)
			}
		}
	}
	b.goals()
	if o.Torch != "" && !r.Simulated {
		b.torch()
	} else if r.Simulated {
		r.Torch = "not run: simulated device"
	} else {
		r.Torch = "not run"
	}
	return r, nil
}

// cuBLASSwitch is implemented by devices whose Matmul can use cuBLAS.
type cuBLASSwitch interface {
	SetCUBLAS(on bool) (available bool)
}

type runner struct {
	o   Options
	dev device.Device
	rep *Report
}

func (b *runner) add(row Row) {
	b.rep.Rows = append(b.rep.Rows, row)
	fmt.Fprintf(b.o.Log, "bench: %-34s %12.2f %s  %s\n", row.Name, row.Memlab, row.Unit, row.Check)
}

// allocSizes are the sizes of the allocator figures.
var allocSizes = []struct {
	key  string
	size int64
}{{"512B", 512}, {"1MiB", 1 << 20}, {"20MiB", 20 << 20}, {"256MiB", 256 << 20}}

// allocs times raw Malloc+Free pairs and caching-allocator hits (wall clock on
// the host: these are driver and bookkeeping calls, not kernels).
func (b *runner) allocs() error {
	a, err := allocator.New(b.dev, allocator.DefaultConfig())
	if err != nil {
		return fmt.Errorf("bench: allocator: %w", err)
	}
	defer a.EmptyCache()
	for _, s := range allocSizes {
		rawN, hitN := 200, 20000
		if b.o.Quick {
			rawN, hitN = 20, 2000
		}
		raw, err := medianWall(rawN/10, 10, func() error {
			p, err := b.dev.Malloc(uint64(s.size))
			if err != nil {
				return err
			}
			return b.dev.Free(p)
		})
		if err != nil {
			return fmt.Errorf("bench: raw Malloc+Free %s: %w", s.key, err)
		}
		// Warm the cache with one allocation, then time hits.
		if p, err := a.Malloc(s.size); err != nil {
			return fmt.Errorf("bench: allocator Malloc %s: %w", s.key, err)
		} else if err := a.Free(p); err != nil {
			return err
		}
		hit, err := medianWall(hitN/100, 100, func() error {
			p, err := a.Malloc(s.size)
			if err != nil {
				return err
			}
			return a.Free(p)
		})
		if err != nil {
			return fmt.Errorf("bench: allocator Malloc+Free %s: %w", s.key, err)
		}
		b.add(Row{Key: "alloc_raw_" + s.key, Name: "raw Malloc+Free " + s.key, Unit: "µs", Memlab: raw})
		b.add(Row{Key: "alloc_cached_" + s.key, Name: "cache-hit Malloc+Free " + s.key, Unit: "µs", Memlab: hit,
			Goal: "≥ 500× faster than raw", Met: yesNo(raw/hit >= 500),
			Check: fmt.Sprintf("%.0f× faster than raw", raw/hit)})
	}
	return nil
}

// warmUp keeps the device busy copying for about half a second (a few
// hundred milliseconds on the simulator's small problem) before the first
// timed kernel: on the H200 the first rows after the host-bound allocator
// figures came out about 10% below the same kernel measured later in the run.
func (b *runner) warmUp() error {
	n := elems(true, b.o.Quick)
	ops := []operand{contig(tensor.Float32, n), contig(tensor.Float32, n)}
	ts, free, err := b.allocOperands(ops, nil)
	if err != nil {
		return err
	}
	defer free()
	for t0 := time.Now(); time.Since(t0) < 500*time.Millisecond; {
		for i := 0; i < 20; i++ {
			if err := b.dev.Copy(ts[0], ts[1]); err != nil {
				return err
			}
		}
		if err := b.dev.Synchronize(); err != nil {
			return err
		}
	}
	return nil
}

// medianWall runs f in `groups` groups of `per` calls and returns the median
// per-call time in microseconds.
func medianWall(groups, per int, f func() error) (float64, error) {
	if groups < 3 {
		groups = 3
	}
	ts := make([]float64, 0, groups)
	for g := 0; g < groups; g++ {
		t0 := time.Now()
		for i := 0; i < per; i++ {
			if err := f(); err != nil {
				return 0, err
			}
		}
		ts = append(ts, float64(time.Since(t0).Nanoseconds())/1e3/float64(per))
	}
	return median(ts), nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// operand is one tensor of a kernel benchmark: dtype, shape and strides
// (nil: contiguous) over a buffer of `elems` elements.
type operand struct {
	dt      tensor.DType
	shape   []int
	strides []int
}

func (o operand) elems() int {
	n := 1
	for _, s := range o.shape {
		n *= s
	}
	return n
}

func (o operand) bytes() float64 { return float64(o.elems() * o.dt.Size()) }

func (o operand) layout() []int {
	if o.strides != nil {
		return o.strides
	}
	st := make([]int, len(o.shape))
	s := 1
	for i := len(o.shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= o.shape[i]
	}
	return st
}

// kernelBench is one timed kernel.
type kernelBench struct {
	key, name string
	// operands returns the kernel's operands for problem size n (the full
	// size, or the smaller one of the correctness check).
	operands func(full bool, quick bool) []operand
	// run runs the kernel on k with t (t[0] is the output).
	run   func(k tensor.Kernels, t []tensor.Strided) error
	moved func(ops []operand) float64 // bytes read + written per run
	flops func(ops []operand) float64 // floating-point operations per run
	tol   float64
}

func contig(dt tensor.DType, shape ...int) operand { return operand{dt: dt, shape: shape} }

// elems picks the elementwise problem size: 64 Mi elements (256 MiB of
// float32), 256 Ki for the check, 1 Mi when quick.
func elems(full, quick bool) int {
	switch {
	case !full:
		return 1<<18 + 3
	case quick:
		return 1 << 20
	}
	return 1 << 26
}

func kernelBenches() []kernelBench {
	var ks []kernelBench
	for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
		sfx := dtName(dt)
		n := func(full, quick bool) int {
			e := elems(full, quick)
			if dt.Size() == 2 && full {
				e *= 2 // the same bytes
			}
			return e
		}
		ks = append(ks,
			kernelBench{key: "copy_" + sfx, name: "copy " + sfx,
				operands: func(f, q bool) []operand { return []operand{contig(dt, n(f, q)), contig(dt, n(f, q))} },
				run:      func(k tensor.Kernels, t []tensor.Strided) error { return k.Copy(t[0], t[1]) },
				moved:    sumBytes, tol: 0},
			kernelBench{key: "relu_" + sfx, name: "relu out of place " + sfx,
				operands: func(f, q bool) []operand { return []operand{contig(dt, n(f, q)), contig(dt, n(f, q))} },
				run:      func(k tensor.Kernels, t []tensor.Strided) error { return k.Unary(tensor.Relu, t[0], t[1], 0) },
				moved:    sumBytes, tol: tolFor(dt)},
			kernelBench{key: "relu__" + sfx, name: "relu_ in place " + sfx,
				operands: func(f, q bool) []operand { return []operand{contig(dt, n(f, q))} },
				run:      func(k tensor.Kernels, t []tensor.Strided) error { return k.Unary(tensor.Relu, t[0], t[0], 0) },
				moved:    func(o []operand) float64 { return 2 * o[0].bytes() }, tol: tolFor(dt)},
			kernelBench{key: "add_" + sfx, name: "add out of place " + sfx,
				operands: func(f, q bool) []operand {
					return []operand{contig(dt, n(f, q)), contig(dt, n(f, q)), contig(dt, n(f, q))}
				},
				run:   func(k tensor.Kernels, t []tensor.Strided) error { return k.Binary(tensor.Add, t[0], t[1], t[2]) },
				moved: sumBytes, tol: tolFor(dt)},
			kernelBench{key: "add__" + sfx, name: "add_ in place " + sfx,
				operands: func(f, q bool) []operand { return []operand{contig(dt, n(f, q)), contig(dt, n(f, q))} },
				run:      func(k tensor.Kernels, t []tensor.Strided) error { return k.Binary(tensor.Add, t[0], t[0], t[1]) },
				moved:    func(o []operand) float64 { return 2*o[0].bytes() + o[1].bytes() }, tol: tolFor(dt)},
		)
	}
	side := func(full, quick bool, big int) int {
		switch {
		case !full:
			return 300
		case quick:
			return 512
		}
		return big
	}
	ks = append(ks,
		kernelBench{key: "transpose_f32", name: "contiguous(x.t()) 8192² f32",
			operands: func(f, q bool) []operand {
				s := side(f, q, 8192)
				return []operand{contig(tensor.Float32, s, s), {dt: tensor.Float32, shape: []int{s, s}, strides: []int{1, s}}}
			},
			run:   func(k tensor.Kernels, t []tensor.Strided) error { return k.Copy(t[0], t[1]) },
			moved: sumBytes},
		kernelBench{key: "layernorm_f32", name: "layer_norm (4096, 4096) f32",
			operands: func(f, q bool) []operand {
				s := side(f, q, 4096)
				return []operand{contig(tensor.Float32, s, s), contig(tensor.Float32, s, s), contig(tensor.Float32, s), contig(tensor.Float32, s)}
			},
			run:   func(k tensor.Kernels, t []tensor.Strided) error { return k.LayerNorm(t[0], t[1], t[2], t[3], 1e-5) },
			moved: sumBytes, tol: oracle.TolFloat32},
		kernelBench{key: "softmax_f32", name: "softmax (4096, 4096) f32",
			operands: func(f, q bool) []operand {
				s := side(f, q, 4096)
				return []operand{contig(tensor.Float32, s, s), contig(tensor.Float32, s, s)}
			},
			run:   func(k tensor.Kernels, t []tensor.Strided) error { return k.Softmax(t[0], t[1]) },
			moved: sumBytes, tol: oracle.TolFloat32},
	)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
		tol := oracle.TolMatmul32
		if dt != tensor.Float32 {
			tol = oracle.TolHalf
		}
		ks = append(ks, kernelBench{key: "matmul_" + dtName(dt), name: "matmul 4096³ " + dtName(dt),
			operands: func(f, q bool) []operand {
				s := side(f, q, 4096)
				if !f {
					s = 256
				}
				return []operand{contig(dt, s, s), contig(dt, s, s), contig(dt, s, s)}
			},
			run: func(k tensor.Kernels, t []tensor.Strided) error { return k.Matmul(t[0], t[1], t[2]) },
			flops: func(o []operand) float64 {
				m, kk, nn := o[1].shape[0], o[1].shape[1], o[2].shape[1]
				return 2 * float64(m) * float64(kk) * float64(nn)
			},
			tol: tol})
	}
	return ks
}

func sumBytes(o []operand) float64 {
	s := 0.0
	for _, x := range o {
		s += x.bytes()
	}
	return s
}

func tolFor(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return oracle.TolFloat32
	}
	return oracle.TolHalf
}

func dtName(dt tensor.DType) string {
	if dt == tensor.BFloat16 {
		return "bf16"
	}
	return "f32"
}

// kernel checks k against the CPU reference on a small problem, then times it.
func (b *runner) kernel(k kernelBench) error {
	check, err := b.check(k)
	if err != nil {
		return err
	}
	ops := k.operands(true, b.o.Quick)
	ts, free, err := b.allocOperands(ops, nil)
	if err != nil {
		return err
	}
	defer free()
	for i := 0; i < 3; i++ { // warm-up
		if err := k.run(b.dev, ts); err != nil {
			return err
		}
	}
	ds := make([]float64, 0, b.o.Iters)
	for i := 0; i < b.o.Iters; i++ {
		d, err := b.dev.Time(func() error {
			for r := 0; r < Reps; r++ {
				if err := k.run(b.dev, ts); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		ds = append(ds, d.Seconds()/Reps)
	}
	sec, slow, fast := median(ds), slices.Max(ds), slices.Min(ds)
	row := Row{Key: k.key, Name: k.name, Check: check}
	if b.o.Quick {
		row.Name += fmt.Sprintf(" [quick: %v]", ops[len(ops)-1].shape)
	}
	work, scale := 0.0, 0.0
	if k.flops != nil {
		row.Unit, work, scale = "TFLOP/s", k.flops(ops), 1e12
	} else {
		row.Unit, work, scale = "GB/s", k.moved(ops), 1e9
	}
	row.Memlab = work / sec / scale
	row.MemlabSpread = [2]float64{work / slow / scale, work / fast / scale}
	b.add(row)
	return nil
}

// allocOperands allocates device memory for ops, filled with uniform random
// values in [-1, 1) (or the given host bytes when data is not nil).
func (b *runner) allocOperands(ops []operand, data [][]byte) ([]tensor.Strided, func(), error) {
	var ptrs []uint64
	free := func() {
		for _, p := range ptrs {
			b.dev.Free(p)
		}
	}
	ts := make([]tensor.Strided, len(ops))
	for i, o := range ops {
		nb := uint64(o.elems() * o.dt.Size())
		p, err := b.dev.Malloc(nb)
		if err != nil {
			free()
			return nil, nil, err
		}
		ptrs = append(ptrs, p)
		ts[i] = tensor.Strided{Base: tensor.Ptr(p), DType: o.dt, Shape: o.shape, Strides: o.layout()}
		if data != nil {
			err = b.dev.CopyFromHost(tensor.Ptr(p), data[i])
		} else {
			err = b.dev.Random(tensor.Strided{Base: tensor.Ptr(p), DType: o.dt, Shape: []int{o.elems()}, Strides: []int{1}}, uint64(i+1), false, -1, 1)
		}
		if err != nil {
			free()
			return nil, nil, err
		}
	}
	return ts, free, nil
}

// check runs k on a small problem on the device and on the CPU reference
// with identical inputs and returns the relative error of the output.
func (b *runner) check(k kernelBench) (string, error) {
	ops := k.operands(false, b.o.Quick)
	host := oracle.NewHostMemory()
	ref := cpu.New(host)
	hs := make([]tensor.Strided, len(ops))
	data := make([][]byte, len(ops))
	for i, o := range ops {
		nb := o.elems() * o.dt.Size()
		p := host.Alloc(nb)
		hs[i] = tensor.Strided{Base: p, DType: o.dt, Shape: o.shape, Strides: o.layout()}
		lo, hi := -1.0, 1.0
		if k.key == "layernorm_f32" && i == 2 {
			lo, hi = 0.5, 1.5
		}
		if err := ref.Random(tensor.Strided{Base: p, DType: o.dt, Shape: []int{o.elems()}, Strides: []int{1}}, uint64(100+i), false, lo, hi); err != nil {
			return "", err
		}
		raw, _ := host.Bytes(p, nb)
		data[i] = slices.Clone(raw)
	}
	ds, free, err := b.allocOperands(ops, data)
	if err != nil {
		return "", err
	}
	defer free()
	if err := k.run(ref, hs); err != nil {
		return "", fmt.Errorf("reference: %w", err)
	}
	if err := k.run(b.dev, ds); err != nil {
		return "", err
	}
	nb := ops[0].elems() * ops[0].dt.Size()
	got := make([]byte, nb)
	if err := b.dev.CopyToHost(got, ds[0].Base); err != nil {
		return "", err
	}
	want, _ := host.Bytes(hs[0].Base, nb)
	e := oracle.RelErr(oracle.Decode(ops[0].dt, got), oracle.Decode(ops[0].dt, want))
	if !(e <= k.tol) {
		return "", fmt.Errorf("result differs from the CPU reference: relative error %.3g > %.0g", e, k.tol)
	}
	return fmt.Sprintf("rel. err %.1e ≤ %.0e", e, k.tol), nil
}

// goals fills in the goals of the kernel rows.
func (b *runner) goals() {
	for i := range b.rep.Rows {
		r := &b.rep.Rows[i]
		switch {
		case strings.HasPrefix(r.Key, "copy_"), strings.HasPrefix(r.Key, "relu"), strings.HasPrefix(r.Key, "add"):
			r.Goal = "≥ 90% of 4196 GB/s"
			r.Met = yesNo(r.Memlab*1e9 >= 0.9*CopyRateH200)
		case r.Key == "transpose_f32":
			r.Goal = "≥ 2× PyTorch's 1160 GB/s"
			r.Met = yesNo(r.Memlab*1e9 >= 2*TorchTransposeH200)
		case r.Key == "layernorm_f32", r.Key == "softmax_f32":
			r.Goal = "≥ 80% of 4196 GB/s, ≥ 0.9× PyTorch"
			r.Met = yesNo(r.Memlab*1e9 >= 0.8*CopyRateH200)
		case strings.HasPrefix(r.Key, "matmul_"):
			r.Goal = "report the fraction of cuBLAS (TF32 off)"
		}
	}
	if b.rep.Simulated {
		for i := range b.rep.Rows {
			b.rep.Rows[i].Met = ""
		}
	}
}

// torchResult is what torch_bench.py prints.
type torchResult struct {
	Torch  string             `json:"torch"`
	Device string             `json:"device"`
	Rows   map[string]float64 `json:"rows"`
	// Spread holds, per kernel row, the figures of the slowest and fastest sample.
	Spread map[string][2]float64 `json:"spread"`
}

// torch runs torch_bench.py and merges its figures.
func (b *runner) torch() {
	py := b.o.Python
	if py == "" {
		py = "python3"
	}
	cmd := exec.Command(py, b.o.Torch, "--json")
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + lastLine(string(ee.Stderr))
		}
		b.rep.Torch = "failed: " + msg
		return
	}
	var tr torchResult
	if err := json.Unmarshal(lastJSON(out), &tr); err != nil {
		b.rep.Torch = "unreadable output: " + err.Error()
		return
	}
	b.rep.Torch = tr.Torch + " on " + tr.Device
	for i := range b.rep.Rows {
		r := &b.rep.Rows[i]
		v, ok := tr.Rows[strings.TrimSuffix(r.Key, "_tiled")]
		if !ok {
			continue
		}
		r.Torch = v
		r.TorchSpread = tr.Spread[strings.TrimSuffix(r.Key, "_tiled")]
		if r.Key == "layernorm_f32" || r.Key == "softmax_f32" {
			r.Met = yesNo(r.Memlab*1e9 >= 0.8*CopyRateH200 && r.Ratio() >= 0.9)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// lastJSON returns the last line of out that starts with '{'.
func lastJSON(out []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "{") {
			return []byte(lines[i])
		}
	}
	return out
}

// WriteTable writes the report as a Markdown table, one figure per row.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "memlab bench on %s (%s), %s\n", r.Device, r.Name, r.Date.Format("2006-01-02 15:04 UTC"))
	if r.Simulated {
		fmt.Fprintln(w, "SIMULATED DEVICE: these are CPU timings of small problems, not GPU figures; no goal is judged.")
	}
	fmt.Fprintf(w, "PyTorch: %s\n\n", r.Torch)
	fmt.Fprintf(w, "Kernel figures: median of the timed samples; spread: slowest–fastest sample, memlab / PyTorch.\n\n")
	fmt.Fprintln(w, "| figure | memlab | PyTorch | memlab vs PyTorch | spread | goal | met | check |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---|---|---|")
	for _, x := range r.Rows {
		torch, ratio := "—", "—"
		if x.Torch != 0 {
			torch = fmt.Sprintf("%s %s", num(x.Torch), x.Unit)
			ratio = fmt.Sprintf("%.2f×", x.Ratio())
		}
		fmt.Fprintf(w, "| %s | %s %s | %s | %s | %s | %s | %s | %s |\n", x.Name, num(x.Memlab), x.Unit, torch, ratio, spread(x), x.Goal, x.Met, x.Check)
	}
}

// spread formats the slowest–fastest figures of a kernel row, memlab's then
// PyTorch's; empty for rows without samples.
func spread(x Row) string {
	f := func(s [2]float64) string {
		if s[0] == 0 && s[1] == 0 {
			return "—"
		}
		return num(s[0]) + "–" + num(s[1])
	}
	if x.MemlabSpread == [2]float64{} && x.TorchSpread == [2]float64{} {
		return ""
	}
	return f(x.MemlabSpread) + " / " + f(x.TorchSpread)
}

func num(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v):
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
