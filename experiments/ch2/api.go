package ch2

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"memlab.dev/memlab/allocator"
	"memlab.dev/memlab/memlab"
	"memlab.dev/memlab/tensor"
)

// TrainStep computes one step's 1 MiB output of the leak check, out = x @ w,
// from a fresh 256×256 batch seeded by i.
func TrainStep(l *memlab.Lab, w *tensor.Tensor, i int) (*tensor.Tensor, error) {
	x, err := tensor.Randn(l, uint64(i), tensor.Float32, 256, 256)
	if err != nil {
		return nil, fmt.Errorf("ch2: step %d: %w", i, err)
	}
	out, err := x.Matmul(w)
	return out, errors.Join(err, x.Release())
}

// Item is out[0, 0].item(): one number, copied to the host.
func Item(out *tensor.Tensor) (float64, error) {
	row, err := out.Select(0, 0)
	if err != nil {
		return 0, err
	}
	v, err := row.Select(0, 0)
	if err != nil {
		return 0, errors.Join(err, row.Release())
	}
	x, err := v.Item()
	return x, errors.Join(err, tensor.ReleaseAll(row, v))
}

// Greedy allocates 1 GiB tensors on l until it runs out of memory, and
// returns them: the greedy tenant of 2.4.
func Greedy(l *memlab.Lab) ([]*tensor.Tensor, error) {
	var ts []*tensor.Tensor
	for {
		t, err := tensor.Empty(l, tensor.Uint8, 1<<30)
		if memlab.IsOutOfMemory(err) {
			return ts, nil
		}
		if err != nil {
			return nil, errors.Join(err, tensor.ReleaseAll(ts...))
		}
		ts = append(ts, t)
	}
}

// CapHalf caps each lab at half of an 8 GiB device: 4 GiB as a fraction of
// the device's total (0.5 on the simulated 8 GiB device), as
// torch.cuda.set_per_process_memory_fraction(0.5) in each process.
func CapHalf(labs ...*memlab.Lab) error {
	for _, l := range labs {
		_, total, err := l.MemGetInfo()
		if err != nil {
			return err
		}
		if err := l.SetPerProcessMemoryFraction(float64(4<<30) / float64(total)); err != nil {
			return err
		}
	}
	return nil
}

// HostBytes is how many bytes of host memory (the Go heap) f allocates: what
// 2.1 weighs a view's metadata with.
func HostBytes(f func()) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// BlocksNamed is how many of the snapshot's blocks text names by address (in
// hex, as memory_snapshot() gives them): what 2.3 looks for in
// memory_summary().
func BlocksNamed(text string, s allocator.Snapshot) int {
	n := 0
	for _, seg := range s.Segments {
		for _, b := range seg.Blocks {
			if strings.Contains(text, fmt.Sprintf("%#x", b.Address)) || strings.Contains(text, fmt.Sprint(b.Address)) {
				n++
			}
		}
	}
	return n
}

// Tenants is one case of 2.4's two tenants on one device.
type Tenants struct {
	Case    string
	A, B    int64 // what each tenant's allocator reserved
	Used    int64 // the driver's count of the device
	Outside int64 // what the driver counts outside both allocators: the CUDA context
	Err     error // B's request's error (an out-of-memory error), nil if served
}

// TwoTenants opens an 8 GiB device for tenant A (memlab.Budget) and puts
// tenant B on it with an allocator of its own (memlab.SharedWith), as two
// processes share a GPU; caps both at half the device if capped
// (set_per_process_memory_fraction(0.5) in each, CapHalf); lets A take
// 1 GiB tensors until it runs out of memory (Greedy); then makes B's request
// of ask bytes.
func TwoTenants(name string, capped bool, ask int64) (r Tenants, err error) {
	r.Case = name
	a, err := memlab.Open(memlab.Budget(8<<30), memlab.NotCurrent())
	if err != nil {
		return r, fmt.Errorf("ch2: %s: %w", name, err)
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	b, err := memlab.Open(memlab.SharedWith(a), memlab.NotCurrent())
	if err != nil {
		return r, fmt.Errorf("ch2: %s: %w", name, err)
	}
	defer func() { err = errors.Join(err, b.Close()) }() // closed before a
	if capped {
		if err := CapHalf(a, b); err != nil {
			return r, fmt.Errorf("ch2: %s: %w", name, err)
		}
	}
	held, err := Greedy(a)
	if err != nil {
		return r, fmt.Errorf("ch2: %s: %w", name, err)
	}
	x, err := tensor.Empty(b, tensor.Uint8, int(ask))
	if err != nil && !memlab.IsOutOfMemory(err) {
		return r, errors.Join(fmt.Errorf("ch2: %s: %w", name, err), tensor.ReleaseAll(held...))
	}
	r.Err, r.A, r.B = err, a.MemoryReserved(), b.MemoryReserved()
	if r.Used, err = a.DriverUsed(); err != nil {
		return r, errors.Join(err, tensor.ReleaseAll(held...))
	}
	r.Outside = r.Used - r.A - r.B
	return r, tensor.ReleaseLive(append(held, x)...)
}
