package tensor_test

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// testDevice is a tensor.Device for tests: host memory, the reference kernels,
// and counters of what was allocated, so tests can see every allocation an
// operation makes and catch double frees.
type testDevice struct {
	*cpu.Kernels
	mem *hostMemory
}

type hostMemory struct {
	mu        sync.Mutex
	next      uint64
	blocks    map[uint64][]byte
	allocs    int   // Allocate calls
	allocated int64 // bytes now allocated
	peak      int64
	failAfter int // when > 0, Allocate fails once this many more calls succeeded
}

var errTestOOM = errors.New("test device: out of memory")

func newTestDevice() *testDevice {
	m := &hostMemory{next: 1 << 20, blocks: map[uint64][]byte{}, failAfter: -1}
	return &testDevice{Kernels: cpu.New(m), mem: m}
}

func (d *testDevice) String() string { return "cuda:0" }

func (d *testDevice) Allocate(n int64) (tensor.Ptr, error) {
	m := d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 {
		return 0, fmt.Errorf("test device: Allocate(%d)", n)
	}
	if m.failAfter == 0 {
		return 0, errTestOOM
	}
	if m.failAfter > 0 {
		m.failAfter--
	}
	addr := m.next
	m.next += (uint64(n) + 511) &^ 511
	m.blocks[addr] = make([]byte, n)
	m.allocs++
	m.allocated += n
	m.peak = max(m.peak, m.allocated)
	return tensor.Ptr(addr), nil
}

func (d *testDevice) Deallocate(p tensor.Ptr) error {
	m := d.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blocks[uint64(p)]
	if !ok {
		return fmt.Errorf("test device: Deallocate(%#x): not allocated", uint64(p))
	}
	delete(m.blocks, uint64(p))
	m.allocated -= int64(len(b))
	return nil
}

// Bytes implements cpu.Memory.
func (m *hostMemory) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := uint64(addr)
	keys := make([]uint64, 0, len(m.blocks))
	for k := range m.blocks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	i := sort.Search(len(keys), func(i int) bool { return keys[i] > a }) - 1
	if i < 0 {
		return nil, fmt.Errorf("test device: %#x is not allocated", a)
	}
	b := m.blocks[keys[i]]
	off := a - keys[i]
	if off+uint64(n) > uint64(len(b)) {
		return nil, fmt.Errorf("test device: [%#x, +%d) is outside its allocation", a, n)
	}
	return b[off : off+uint64(n)], nil
}

func (d *testDevice) allocated() int64 {
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return d.mem.allocated
}

func (d *testDevice) allocs() int {
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return d.mem.allocs
}

func (d *testDevice) live() int {
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return len(d.mem.blocks)
}

// failAllocationsAfter makes Allocate fail after n more successes.
func (d *testDevice) failAllocationsAfter(n int) {
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	d.mem.failAfter = n
}
