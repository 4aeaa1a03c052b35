// Package cuda is memlab's CUDA device: the driver API of an NVIDIA GPU, with
// memlab's kernels (package kernels) loaded from embedded PTX.
//
// The default build reaches the driver without cgo: libcuda.so.1 is loaded at
// run time with purego, so one binary runs on machines with and without a GPU
// (Open then returns an error wrapping [ErrNoDriver]). Built with -tags cuda
// and cgo, the driver calls go through gorgonia.org/cu instead; that binding
// has no virtual-memory calls, so the cu build takes those (Map, Unmap,
// ReserveAddress, FreeAddress) from the purego binding over the same libcuda
// and the same context, and it launches kernels with its own cgo call to
// cuLaunchKernel because cu's Launch copies only 8 bytes of each argument.
//
// Matmul runs on cuBLAS when libcublas loads at run time (again with purego;
// MEMLAB_CUBLAS=0 turns it off, MEMLAB_CUBLAS_PATH names the library),
// otherwise on memlab's tiled kernels: float32 on CUDA cores, float16 and
// bfloat16 on tensor cores, float32 accumulation and no TF32 either way.
// Integer and bool work the kernels do not cover runs on the CPU reference
// (kernels/cpu) over host copies of the operands, with its exact semantics.
//
// A Device retains its GPU's primary context and makes it current on the OS
// thread of each call, locked for the call's duration; a Device is safe for
// concurrent use. Kernels run on the context's default stream in the order
// they were issued; CopyToHost and CopyFromHost wait for them.
package cuda

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"memlab.dev/memlab/kernels"
)

// Options select the binding a Device uses.
type Options struct {
	// Binding is "purego" or "cu" (gorgonia.org/cu, which needs a binary
	// built with -tags cuda and cgo). Empty means DefaultBinding.
	Binding string
}

// Device is one CUDA GPU. It implements device.Device.
type Device struct {
	ordinal int
	drv     driver
	vm      vmm
	name    string
	binding string
	total   uint64
	sms     int
	ccMajor int
	ccMinor int
	version int
	gran    uint64

	// life orders calls (read-locked by do) before Close (write-locked).
	life    sync.RWMutex
	closing bool

	mu       sync.Mutex
	closed   bool
	regions  []region           // live device memory, sorted by start
	allocs   map[uint64]uint64  // Malloc'd address -> size
	reserved map[uint64]uint64  // ReserveAddress'd address -> size
	mapped   map[uint64]mapping // Map'd address -> its physical allocation
	fns      map[string]uintptr // kernel name -> CUfunction
	mods     []uintptr
	errWord  uint64 // device address of memlab_error in the embedding module
	evStart  uintptr
	evStop   uintptr
	timeMu   sync.Mutex
	// startPending asks the device thread to record evStart before the next
	// work it runs (see Time).
	startPending atomic.Bool
	blas         *cublas // nil when cuBLAS is absent
	blasWhy      string
	useBLAS      bool
}

type region struct {
	start, end uint64
}

type mapping struct {
	size   uint64
	handle uint64
}

// DeviceCount returns the number of CUDA devices the driver reports, or an
// error wrapping ErrNoDriver when there is no usable driver.
func DeviceCount() (int, error) {
	l, err := loadLib()
	if err != nil {
		return 0, err
	}
	n, err := l.deviceCount()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	return n, nil
}

// Open opens CUDA device ordinal with the default (purego) binding.
func Open(ordinal int) (*Device, error) { return OpenWith(ordinal, Options{}) }

// OpenWith opens CUDA device ordinal: it retains the device's primary context
// on a dedicated OS thread and loads memlab's kernels. It fails with an error
// wrapping ErrNoDriver when there is no driver or no such device, and with a
// clear error when the driver is too old for memlab's PTX.
func OpenWith(ordinal int, opt Options) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver reports no CUDA device", ErrNoDriver)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("device/cuda: no device cuda:%d (the driver reports %d device(s), cuda:0 to cuda:%d)", ordinal, n, n-1)
	}
	var drv driver
	b := opt.Binding
	if b == "" {
		b = DefaultBinding
	}
	switch b {
	case "purego":
		drv, err = newPuregoDriver()
	case "cu":
		drv, err = newCUDriver()
	default:
		return nil, fmt.Errorf("device/cuda: unknown binding %q (want \"purego\" or \"cu\")", opt.Binding)
	}
	if err != nil {
		return nil, err
	}
	vm, err := newPuregoDriver()
	if err != nil {
		return nil, err
	}
	return newDevice(ordinal, drv, vm)
}

// newDevice opens device ordinal through drv (and vm for virtual memory).
func newDevice(ordinal int, drv driver, vm vmm) (*Device, error) {
	d := &Device{
		ordinal:  ordinal,
		drv:      drv,
		vm:       vm,
		binding:  drv.binding(),
		allocs:   map[uint64]uint64{},
		reserved: map[uint64]uint64{},
		mapped:   map[uint64]mapping{},
		fns:      map[string]uintptr{},
	}
	runtime.LockOSThread()
	err := d.drv.open(ordinal)
	runtime.UnlockOSThread()
	if err != nil {
		return nil, err
	}
	if err := d.do(d.setup); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// do runs f on the calling goroutine's OS thread, locked to it for the call,
// with the device's context current there. Driver calls are thread-safe and
// the context may be current on many threads at once, so no call waits for
// another thread to wake up: a launch costs what cuLaunchKernel costs.
// Close waits for calls in flight and fails later ones with ErrClosed.
func (d *Device) do(f func() error) error {
	d.life.RLock()
	defer d.life.RUnlock()
	if d.closing {
		return ErrClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.makeCurrent(); err != nil {
		return err
	}
	if d.startPending.CompareAndSwap(true, false) {
		// Time's start event goes in just before the first work it measures.
		if err := d.drv.eventRecord(d.evStart); err != nil {
			return err
		}
	}
	return f()
}

// setup reads the device's properties and loads the kernels (on the thread).
func (d *Device) setup() error {
	var err error
	if d.name, err = d.drv.deviceName(); err != nil {
		return err
	}
	if d.total, err = d.drv.totalMem(); err != nil {
		return err
	}
	if d.sms, err = d.drv.attribute(attrMultiprocessorCount); err != nil {
		return err
	}
	if d.ccMajor, err = d.drv.attribute(attrCCMajor); err != nil {
		return err
	}
	if d.ccMinor, err = d.drv.attribute(attrCCMinor); err != nil {
		return err
	}
	if d.version, err = d.drv.version(); err != nil {
		return err
	}
	if d.gran, err = d.vm.granularity(d.ordinal); err != nil {
		d.gran = 2 << 20 // VMM unsupported: Map reports the driver's error
	}
	for _, m := range kernels.Modules() {
		ptx, err := kernels.PTX(m)
		if err != nil {
			return err
		}
		mod, err := d.drv.moduleLoadData(ptx)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) && ptxTooNew(ce.Code) {
				return fmt.Errorf("device/cuda: the driver (CUDA %d.%d) cannot load memlab's PTX %s for %s (needs a driver for CUDA 11.8, 520 or later, and a GPU of compute capability 8.0 or later; this one is %d.%d): %w",
					d.version/1000, d.version%1000/10, kernels.PTXVersion, kernels.Arch, d.ccMajor, d.ccMinor, err)
			}
			return fmt.Errorf("device/cuda: loading kernel module %s: %w", m, err)
		}
		d.mods = append(d.mods, mod)
		for _, name := range kernelNames[m] {
			fn, err := d.drv.moduleFunction(mod, name)
			if err != nil {
				return fmt.Errorf("device/cuda: kernel %s in module %s: %w", name, m, err)
			}
			d.fns[name] = fn
		}
		if m == "embedding" {
			if d.errWord, err = d.drv.moduleGlobal(mod, "memlab_error"); err != nil {
				return fmt.Errorf("device/cuda: memlab_error in module embedding: %w", err)
			}
		}
	}
	if d.blas, err = loadCUBLAS(); err != nil {
		d.blasWhy = err.Error()
	}
	d.useBLAS = d.blas != nil
	if d.evStart, err = d.drv.eventCreate(); err != nil {
		return err
	}
	d.evStop, err = d.drv.eventCreate()
	return err
}

// kernelNames lists the entry points of each PTX module.
var kernelNames = map[string][]string{
	"elementwise": {"fill_strided", "fill_contig8", "random_strided", "copy_strided_same",
		"copy_strided_convert", "copy_contig_vec16", "transpose_1", "transpose_2", "transpose_4",
		"transpose_8", "unary_strided", "unary_contig_f32", "unary_contig_f16", "unary_contig_bf16",
		"binary_strided", "binary_contig_f32", "binary_contig_f16", "binary_contig_bf16"},
	"reduce": {"reduce_dim", "reduce_inner", "softmax_f32", "softmax_f16", "softmax_bf16",
		"layernorm_f32", "layernorm_f16", "layernorm_bf16", "softmax_f32_vec", "layernorm_f32_vec"},
	"matmul":    {"matmul_f32", "matmul_f16", "matmul_bf16", "matmul_tc_f16", "matmul_tc_bf16"},
	"embedding": {"embedding_rows"},
}

// String names the device as PyTorch does, "cuda:0".
func (d *Device) String() string { return fmt.Sprintf("cuda:%d", d.ordinal) }

// Kind returns "cuda".
func (d *Device) Kind() string { return "cuda" }

// Name is the GPU's name, such as "NVIDIA H200".
func (d *Device) Name() string { return d.name }

// Index is the device ordinal.
func (d *Device) Index() int { return d.ordinal }

// Binding names the driver binding in use: "purego" or "gorgonia.org/cu".
func (d *Device) Binding() string { return d.binding }

// DriverVersion is the CUDA version the driver supports, as cuDriverGetVersion
// reports it (13000 for CUDA 13.0).
func (d *Device) DriverVersion() int { return d.version }

// ComputeCapability returns the GPU's compute capability, such as 9, 0.
func (d *Device) ComputeCapability() (major, minor int) { return d.ccMajor, d.ccMinor }

// Multiprocessors is the number of streaming multiprocessors.
func (d *Device) Multiprocessors() int { return d.sms }

// TotalMemory is the GPU's memory in bytes (cuDeviceTotalMem).
func (d *Device) TotalMemory() uint64 { return d.total }

// Malloc allocates size bytes with cuMemAlloc. Out of memory is an *Error
// whose OutOfMemory method returns true.
func (d *Device) Malloc(size uint64) (uint64, error) {
	if size == 0 {
		return 0, errors.New("device/cuda: Malloc: size 0 (cuMemAlloc rejects empty allocations)")
	}
	var p uint64
	err := d.do(func() (err error) { p, err = d.drv.memAlloc(size); return })
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	d.allocs[p] = size
	d.addRegion(p, size)
	d.mu.Unlock()
	return p, nil
}

// Free releases an allocation made by Malloc. Freeing an address Malloc did
// not return, or freeing twice, is an error and leaves the device unchanged.
func (d *Device) Free(addr uint64) error {
	d.mu.Lock()
	size, ok := d.allocs[addr]
	if ok {
		delete(d.allocs, addr)
		d.removeRegion(addr, size)
	}
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("device/cuda: Free: %#x is not a live allocation of %s (double free, or not from Malloc)", addr, d)
	}
	return d.do(func() error { return d.drv.memFree(addr) })
}

// MemGetInfo reports the driver's free and total bytes (cuMemGetInfo).
func (d *Device) MemGetInfo() (free, total uint64, err error) {
	err = d.do(func() (err error) { free, total, err = d.drv.memGetInfo(); return })
	return free, total, err
}

// Granularity is the page size of Map (cuMemGetAllocationGranularity, minimum).
func (d *Device) Granularity() uint64 { return d.gran }

// ReserveAddress reserves size bytes of address space, a multiple of
// Granularity, aligned to Granularity.
func (d *Device) ReserveAddress(size uint64) (uint64, error) {
	if size == 0 || size%d.gran != 0 {
		return 0, fmt.Errorf("device/cuda: ReserveAddress: size %d is not a positive multiple of the granularity %d", size, d.gran)
	}
	var p uint64
	err := d.do(func() (err error) { p, err = d.vm.addressReserve(size, d.gran); return })
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	d.reserved[p] = size
	d.mu.Unlock()
	return p, nil
}

// FreeAddress releases a reservation; nothing in it may still be mapped.
func (d *Device) FreeAddress(addr, size uint64) error {
	d.mu.Lock()
	rs, ok := d.reserved[addr]
	if !ok || rs != size {
		d.mu.Unlock()
		return fmt.Errorf("device/cuda: FreeAddress: [%#x, +%d) is not a reservation of %s", addr, size, d)
	}
	for m := range d.mapped {
		if m >= addr && m < addr+size {
			d.mu.Unlock()
			return fmt.Errorf("device/cuda: FreeAddress: reservation %#x still has memory mapped at %#x; Unmap it first", addr, m)
		}
	}
	delete(d.reserved, addr)
	d.mu.Unlock()
	return d.do(func() error { return d.vm.addressFree(addr, size) })
}

// reservationOf returns the reservation holding [addr, addr+size), if any.
// d.mu must be held.
func (d *Device) reservationOf(addr, size uint64) bool {
	for r, rs := range d.reserved {
		if addr >= r && addr+size <= r+rs && addr+size > addr {
			return true
		}
	}
	return false
}

// Map backs [addr, addr+size) of a reservation with new physical memory
// (cuMemCreate, cuMemMap, cuMemSetAccess).
func (d *Device) Map(addr, size uint64) error {
	if size == 0 || addr%d.gran != 0 || size%d.gran != 0 {
		return fmt.Errorf("device/cuda: Map: [%#x, +%d) is not aligned to the granularity %d", addr, size, d.gran)
	}
	d.mu.Lock()
	if !d.reservationOf(addr, size) {
		d.mu.Unlock()
		return fmt.Errorf("device/cuda: Map: [%#x, +%d) is not inside a reservation", addr, size)
	}
	for m, mp := range d.mapped {
		if m < addr+size && addr < m+mp.size {
			d.mu.Unlock()
			return fmt.Errorf("device/cuda: Map: [%#x, +%d) overlaps memory already mapped at %#x", addr, size, m)
		}
	}
	d.mu.Unlock()
	var h uint64
	err := d.do(func() error {
		var err error
		if h, err = d.vm.memCreate(d.ordinal, size); err != nil {
			return err
		}
		if err = d.vm.memMap(addr, size, h); err != nil {
			d.vm.memRelease(h)
			return err
		}
		if err = d.vm.memSetAccess(d.ordinal, addr, size); err != nil {
			d.vm.memUnmap(addr, size)
			d.vm.memRelease(h)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.mapped[addr] = mapping{size: size, handle: h}
	d.addRegion(addr, size)
	d.mu.Unlock()
	return nil
}

// Unmap unmaps [addr, addr+size) and releases its physical memory. The range
// must be mapped entirely, by Map calls that lie wholly inside it.
func (d *Device) Unmap(addr, size uint64) error {
	d.mu.Lock()
	var starts []uint64
	covered := uint64(0)
	for m, mp := range d.mapped {
		if m < addr+size && addr < m+mp.size {
			if m < addr || m+mp.size > addr+size {
				d.mu.Unlock()
				return fmt.Errorf("device/cuda: Unmap: [%#x, +%d) cuts through the mapping [%#x, +%d)", addr, size, m, mp.size)
			}
			starts = append(starts, m)
			covered += mp.size
		}
	}
	if size == 0 || covered != size {
		d.mu.Unlock()
		return fmt.Errorf("device/cuda: Unmap: [%#x, +%d) is not entirely mapped", addr, size)
	}
	ms := make([]mapping, len(starts))
	for i, m := range starts {
		ms[i] = d.mapped[m]
		delete(d.mapped, m)
		d.removeRegion(m, ms[i].size)
	}
	d.mu.Unlock()
	return d.do(func() error {
		var first error
		for i, m := range starts {
			if err := d.vm.memUnmap(m, ms[i].size); err != nil && first == nil {
				first = err
			}
			if err := d.vm.memRelease(ms[i].handle); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// Time runs f and returns the device time between events recorded on the
// default stream just before f's first driver call and just after its last.
func (d *Device) Time(f func() error) (time.Duration, error) {
	d.timeMu.Lock()
	defer d.timeMu.Unlock()
	d.startPending.Store(true)
	err := f()
	if err != nil {
		d.startPending.Store(false)
		return 0, err
	}
	var ms float32
	err = d.do(func() error {
		if err := d.drv.eventRecord(d.evStop); err != nil {
			return err
		}
		if err := d.drv.eventSynchronize(d.evStop); err != nil {
			return err
		}
		var err error
		ms, err = d.drv.eventElapsed(d.evStart, d.evStop)
		return err
	})
	return time.Duration(float64(ms) * 1e6), err
}

// Synchronize waits until every kernel and copy issued so far has finished.
func (d *Device) Synchronize() error { return d.do(d.drv.synchronize) }

// Close frees every allocation and mapping still live, unloads the kernels
// and releases the context. Calling Close again returns nil.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	err := d.do(func() error {
		first := d.drv.synchronize()
		note := func(e error) {
			if e != nil && first == nil {
				first = e
			}
		}
		for p := range d.allocs {
			note(d.drv.memFree(p))
		}
		for m, mp := range d.mapped {
			note(d.vm.memUnmap(m, mp.size))
			note(d.vm.memRelease(mp.handle))
		}
		for r, rs := range d.reserved {
			note(d.vm.addressFree(r, rs))
		}
		if d.evStart != 0 {
			note(d.drv.eventDestroy(d.evStart))
		}
		if d.evStop != 0 {
			note(d.drv.eventDestroy(d.evStop))
		}
		d.blas.close()
		for _, m := range d.mods {
			note(d.drv.moduleUnload(m))
		}
		note(d.drv.close())
		return first
	})
	d.life.Lock()
	d.closing = true
	d.life.Unlock()
	d.mu.Lock()
	d.allocs, d.mapped, d.reserved, d.regions = map[uint64]uint64{}, map[uint64]mapping{}, map[uint64]uint64{}, nil
	d.mu.Unlock()
	return err
}

// byStart orders regions by start address for slices.BinarySearchFunc.
func byStart(r region, start uint64) int { return cmp.Compare(r.start, start) }

// addRegion records [start, start+size) as live memory. d.mu must be held.
func (d *Device) addRegion(start, size uint64) {
	r := region{start, start + size}
	i, _ := slices.BinarySearchFunc(d.regions, start, byStart)
	d.regions = slices.Insert(d.regions, i, r)
}

// removeRegion forgets the region starting at start. d.mu must be held.
func (d *Device) removeRegion(start, size uint64) {
	for i, r := range d.regions {
		if r.start == start && r.end == start+size {
			d.regions = slices.Delete(d.regions, i, i+1)
			return
		}
	}
}

// live reports whether [lo, hi) lies in live memory: one allocation, or
// mappings that follow each other without a gap.
func (d *Device) live(lo, hi uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, found := slices.BinarySearchFunc(d.regions, lo, byStart)
	if !found {
		i--
	}
	for ; i >= 0 && i < len(d.regions); i++ {
		r := d.regions[i]
		if lo < r.start || lo >= r.end {
			return false
		}
		if hi <= r.end {
			return true
		}
		lo = r.end
	}
	return false
}
