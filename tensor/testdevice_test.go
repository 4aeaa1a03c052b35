package tensor_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"memlab.dev/memlab/device"
	"memlab.dev/memlab/device/sim"
	"memlab.dev/memlab/tensor"
)

// rawDevice is what the tests need of a device: kernels and raw allocations.
type rawDevice interface {
	tensor.Kernels
	Malloc(size uint64) (uint64, error)
	Free(addr uint64) error
}

// testDevice adapts a device to tensor.Device for tests: Allocate and
// Deallocate are the device's raw Malloc and Free (no caching allocator), and
// the adapter counts what tensors allocate, so tests can see every allocation
// an operation makes and catch frees of unknown addresses.
//
// The device is the simulated one, unless MEMLAB_DEVICE names another (such
// as cuda): the same suite then runs on a GPU. It is named cuda:0 either way,
// so that printed tensors compare with what PyTorch prints for a GPU tensor.
type testDevice struct {
	rawDevice

	mu        sync.Mutex
	sizes     map[tensor.Ptr]int64
	nAllocs   int   // Allocate calls
	nBytes    int64 // bytes now allocated, as requested
	failAfter int   // when >= 0, Allocate fails once this many more calls succeeded
}

var errTestOOM = errors.New("test device: injected allocation failure")

var shared struct {
	once sync.Once
	dev  device.Device
	err  error
}

// newTestDevice returns a fresh adapter over a fresh simulated device, or over
// the one device MEMLAB_DEVICE names, opened once for all tests.
func newTestDevice() *testDevice {
	if os.Getenv(device.EnvVar) == "" {
		return newTestDeviceWith(sim.Config{NoContext: true})
	}
	shared.once.Do(func() { shared.dev, shared.err = device.Open("") })
	if shared.err != nil {
		panic(shared.err)
	}
	return &testDevice{rawDevice: shared.dev, sizes: map[tensor.Ptr]int64{}, failAfter: -1}
}

// newTestDeviceWith returns an adapter over a new simulated device.
func newTestDeviceWith(cfg sim.Config) *testDevice {
	d, err := sim.New(cfg)
	if err != nil {
		panic(err)
	}
	return &testDevice{rawDevice: d, sizes: map[tensor.Ptr]int64{}, failAfter: -1}
}

func (d *testDevice) String() string { return "cuda:0" }

func (d *testDevice) Allocate(n int64) (tensor.Ptr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n <= 0 {
		return 0, fmt.Errorf("test device: Allocate(%d)", n)
	}
	if d.failAfter == 0 {
		return 0, errTestOOM
	}
	if d.failAfter > 0 {
		d.failAfter--
	}
	addr, err := d.Malloc(uint64(n))
	if err != nil {
		return 0, err
	}
	p := tensor.Ptr(addr)
	d.sizes[p] = n
	d.nAllocs++
	d.nBytes += n
	return p, nil
}

func (d *testDevice) Deallocate(p tensor.Ptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.sizes[p]
	if !ok {
		return fmt.Errorf("test device: Deallocate(%#x): not allocated", uint64(p))
	}
	if err := d.Free(uint64(p)); err != nil {
		return err
	}
	delete(d.sizes, p)
	d.nBytes -= n
	return nil
}

// allocated returns the bytes tensors hold now.
func (d *testDevice) allocated() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nBytes
}

// allocs returns the number of Allocate calls so far.
func (d *testDevice) allocs() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nAllocs
}

// live returns the number of allocations not yet freed.
func (d *testDevice) live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sizes)
}

// failAllocationsAfter makes Allocate fail after n more successes (never for
// n < 0).
func (d *testDevice) failAllocationsAfter(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failAfter = n
}

func TestOutOfMemoryFromTheDeviceIsPassedOn(t *testing.T) {
	dev := newTestDeviceWith(sim.Config{Capacity: 8 << 20, NoContext: true})
	x := keep(t)(tensor.Zeros(dev, tensor.Float32, 1<<20)) // 4 MiB of 8
	keep(t)(x.Exp())                                       // another 4 MiB: fits
	_, err := tensor.Zeros(dev, tensor.Float32, 1<<20)
	var oom interface{ OutOfMemory() bool }
	if !errors.As(err, &oom) || !oom.OutOfMemory() {
		t.Fatalf("third 4 MiB tensor on an 8 MiB device: %v", err)
	}
}
