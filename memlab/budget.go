package memlab

import (
	"fmt"
	"sync"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/sim"
)

// budgetDevice is a device of n bytes carved out of a larger one: what
// [Budget] opens on a real GPU, so that an experiment about running out of
// memory meets the same device there as on the simulator. It counts what a
// simulated device of n bytes counts — its CUDA context (sim.ContextFor(n))
// and every allocation and mapping of every lab that shares it, rounded to the
// device's granularity — refuses what would not fit with an out-of-memory
// error, and reports that count in MemGetInfo (the driver's view of the
// n-byte device). Memory and kernels are the real device's.
type budgetDevice struct {
	device.Device
	total uint64

	mu     sync.Mutex
	used   uint64            // the context, allocations and mappings
	allocs map[uint64]uint64 // Malloc's address → bytes counted
}

// newBudgetDevice puts an n-byte budget in front of d.
func newBudgetDevice(d device.Device, n uint64) *budgetDevice {
	return &budgetDevice{Device: d, total: n, used: sim.ContextFor(n), allocs: map[uint64]uint64{}}
}

// budgetOOM is the out-of-memory error of a budget device.
type budgetOOM struct {
	dev            string
	size, free, of uint64
}

func (e *budgetOOM) Error() string {
	return fmt.Sprintf("memlab: %s: out of memory: %d bytes requested, %d of the budget's %d free", e.dev, e.size, e.free, e.of)
}

// OutOfMemory marks the error as one, as device errors are.
func (e *budgetOOM) OutOfMemory() bool { return true }

// take counts size more bytes in use, or refuses them.
func (b *budgetDevice) take(size uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if size > b.total-b.used {
		return &budgetOOM{dev: b.String(), size: size, free: b.total - b.used, of: b.total}
	}
	b.used += size
	return nil
}

// give counts size bytes no longer in use.
func (b *budgetDevice) give(size uint64) {
	b.mu.Lock()
	b.used -= min(size, b.used)
	b.mu.Unlock()
}

// rounded is size rounded up to the device's granularity, as the driver rounds it.
func (b *budgetDevice) rounded(size uint64) uint64 {
	g := b.Granularity()
	if g == 0 {
		return size
	}
	return (size + g - 1) / g * g
}

// Name says that the device is a budget on a larger one.
func (b *budgetDevice) Name() string {
	return fmt.Sprintf("%s, a %s budget", b.Device.Name(), FormatBytes(int64(b.total)))
}

// Malloc allocates from the real device what fits in the budget.
func (b *budgetDevice) Malloc(size uint64) (uint64, error) {
	n := b.rounded(size)
	if err := b.take(n); err != nil {
		return 0, err
	}
	addr, err := b.Device.Malloc(size)
	if err != nil {
		b.give(n)
		return 0, err
	}
	b.mu.Lock()
	b.allocs[addr] = n
	b.mu.Unlock()
	return addr, nil
}

// Free frees an allocation and its share of the budget.
func (b *budgetDevice) Free(addr uint64) error {
	if err := b.Device.Free(addr); err != nil {
		return err
	}
	b.mu.Lock()
	n := b.allocs[addr]
	delete(b.allocs, addr)
	b.mu.Unlock()
	b.give(n)
	return nil
}

// Map maps physical memory that fits in the budget.
func (b *budgetDevice) Map(addr, size uint64) error {
	if err := b.take(size); err != nil {
		return err
	}
	if err := b.Device.Map(addr, size); err != nil {
		b.give(size)
		return err
	}
	return nil
}

// Unmap unmaps memory and gives its share of the budget back.
func (b *budgetDevice) Unmap(addr, size uint64) error {
	if err := b.Device.Unmap(addr, size); err != nil {
		return err
	}
	b.give(size)
	return nil
}

// MemGetInfo reports the budget: its free bytes (never more than the real
// device has free) and its size.
func (b *budgetDevice) MemGetInfo() (free, total uint64, err error) {
	realFree, _, err := b.Device.MemGetInfo()
	if err != nil {
		return 0, 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return min(b.total-b.used, realFree), b.total, nil
}
