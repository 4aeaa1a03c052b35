package sim

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"memlab.dev/memlab/kernels/cpu"
	"memlab.dev/memlab/tensor"
)

// Kind is what Device.Kind returns: the value of device.Simulated. (Package
// device opens simulated devices, so this package cannot import it.)
const Kind = "sim"

// Device is a simulated GPU. Create one with New; it implements
// device.Device, allocator.Memory and allocator.VirtualMemory.
type Device struct {
	cfg Config
	k   *cpu.Kernels

	// life is held shared by every kernel and copy while it uses memory, and
	// exclusively by the calls that release backing memory (Free, Unmap,
	// FreeAddress, Close), so that no kernel ever writes to released memory.
	// It is taken before mu.
	life sync.RWMutex

	mu      sync.Mutex
	closed  bool
	regions []*region // by address: Malloc segments and reservations
	used    uint64    // bytes allocated by Malloc plus bytes mapped
	stats   Stats
}

// region is one range of the address space: a Malloc segment, or a
// reservation whose pages are mapped individually.
type region struct {
	addr, size uint64
	reserved   bool        // made by ReserveAddress
	mapped     []bool      // per page, for a reservation
	maps       map[int]int // first page → pages, of each Map call still mapped
	nmapped    int
	data       []byte // backing, created at the first access
}

// Stats counts a device's driver calls and memory. Latencies are the modelled
// time of the successful calls (whether or not it was spent).
type Stats struct {
	Mallocs, Frees, Maps, Unmaps int64 // successful calls
	Reserves, AddressFrees       int64 // successful ReserveAddress and FreeAddress calls
	OutOfMemory                  int64 // Malloc and Map calls that failed for lack of memory

	MallocTime, FreeTime, MapTime, UnmapTime time.Duration

	Allocated uint64 // bytes held by Malloc segments (whole pages)
	Mapped    uint64 // bytes of mapped pages
	Peak      uint64 // highest Allocated+Mapped
	Backed    uint64 // host address space backing touched regions; RAM is used only for pages written
}

// DriverTime is the total modelled time of the counted calls.
func (s Stats) DriverTime() time.Duration {
	return s.MallocTime + s.FreeTime + s.MapTime + s.UnmapTime
}

// New returns a simulated device configured by cfg (see [Config] for the
// defaults).
func New(cfg Config) (*Device, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &Device{cfg: cfg}
	d.k = cpu.New(memory{d})
	return d, nil
}

// Config returns the device's configuration with its defaults filled in.
func (d *Device) Config() Config { return d.cfg }

// String names the device as PyTorch would: "sim:0".
func (d *Device) String() string { return fmt.Sprintf("%s:%d", Kind, d.cfg.Index) }

// Kind returns "sim" (device.Simulated).
func (d *Device) Kind() string { return Kind }

// Name returns the configured hardware name.
func (d *Device) Name() string { return d.cfg.Name }

// Index returns the device ordinal.
func (d *Device) Index() int { return d.cfg.Index }

// Granularity returns the page size of Map and Unmap, 2 MiB.
func (d *Device) Granularity() uint64 { return Granularity }

func roundUp(n uint64) (uint64, bool) {
	r := (n + Granularity - 1) &^ (Granularity - 1)
	return r, r >= n
}

// latency returns the modelled time of a call with explicit latency l on size
// bytes.
func (d *Device) latency(l time.Duration, size uint64) time.Duration {
	if l == 0 && d.cfg.ModelLatency {
		return H200Latency(size) / 2
	}
	return l
}

func (d *Device) spend(l time.Duration) {
	if !d.cfg.NoWait {
		spend(l)
	}
}

// Malloc allocates size bytes (rounded up to whole 2 MiB pages) at a 2 MiB
// aligned address, as cuMemAlloc. It takes no host memory until the range is
// touched. A request beyond the free memory fails with an [*OutOfMemoryError].
func (d *Device) Malloc(size uint64) (uint64, error) {
	if size == 0 {
		return 0, invalid("Malloc", "size 0")
	}
	rounded, ok := roundUp(size)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return 0, ErrClosed
	}
	if !ok || rounded > d.freeLocked() {
		err := d.oomLocked("Malloc", rounded)
		d.mu.Unlock()
		return 0, err
	}
	addr, ok := d.placeLocked(rounded)
	if !ok {
		err := d.oomLocked("Malloc", rounded)
		d.mu.Unlock()
		return 0, err
	}
	d.insertLocked(&region{addr: addr, size: rounded})
	d.used += rounded
	d.stats.Allocated += rounded
	d.stats.Mallocs++
	l := d.latency(d.cfg.MallocLatency, rounded)
	d.stats.MallocTime += l
	d.peakLocked()
	d.mu.Unlock()
	d.spend(l)
	return addr, nil
}

// Free releases an allocation made by Malloc, as cuMemFree. addr must be the
// address Malloc returned.
func (d *Device) Free(addr uint64) error {
	d.life.Lock()
	d.mu.Lock()
	i, r := d.findLocked(addr)
	var err error
	switch {
	case d.closed:
		err = ErrClosed
	case r == nil || r.addr != addr || r.reserved:
		err = invalid("Free", "%#x is not an address returned by Malloc", addr)
	}
	if err != nil {
		d.mu.Unlock()
		d.life.Unlock()
		return err
	}
	d.removeLocked(i)
	d.used -= r.size
	d.stats.Allocated -= r.size
	d.stats.Frees++
	l := d.latency(d.cfg.FreeLatency, r.size)
	d.stats.FreeTime += l
	d.mu.Unlock()
	d.life.Unlock()
	d.spend(l)
	return nil
}

// MemGetInfo reports the driver's view, as cuMemGetInfo: total is Capacity,
// free is Capacity less the context overhead, the Malloc segments and the
// mapped pages.
func (d *Device) MemGetInfo() (free, total uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, 0, ErrClosed
	}
	return d.freeLocked(), d.cfg.Capacity, nil
}

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// ResetStats zeroes the call counters and latencies and sets Peak to the
// memory in use now; Allocated, Mapped and Backed keep describing the present.
func (d *Device) ResetStats() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats = Stats{Allocated: d.stats.Allocated, Mapped: d.stats.Mapped, Peak: d.used, Backed: d.stats.Backed}
}

func (d *Device) freeLocked() uint64 { return d.cfg.Capacity - d.cfg.ContextOverhead - d.used }

func (d *Device) oomLocked(op string, size uint64) error {
	d.stats.OutOfMemory++
	return &OutOfMemoryError{Op: op, Size: size, Free: d.freeLocked(), Total: d.cfg.Capacity}
}

func (d *Device) peakLocked() { d.stats.Peak = max(d.stats.Peak, d.used) }

// placeLocked finds the lowest free address range of size bytes (first fit).
func (d *Device) placeLocked(size uint64) (uint64, bool) {
	next := uint64(BaseAddress)
	for _, r := range d.regions {
		if r.addr-next >= size {
			break
		}
		next = r.addr + r.size
	}
	return next, next <= addressLimit && addressLimit-next >= size
}

// byAddr orders regions by address for slices.BinarySearchFunc.
func byAddr(x *region, addr uint64) int { return cmp.Compare(x.addr, addr) }

func (d *Device) insertLocked(r *region) {
	i, _ := slices.BinarySearchFunc(d.regions, r.addr, byAddr)
	d.regions = slices.Insert(d.regions, i, r)
}

// removeLocked drops region i and releases its backing.
func (d *Device) removeLocked(i int) {
	r := d.regions[i]
	if r.data != nil {
		d.stats.Backed -= uint64(len(r.data))
		releaseBacking(r.data)
		r.data = nil
	}
	d.regions = slices.Delete(d.regions, i, i+1)
}

// findLocked returns the region containing addr and its index, or nil.
func (d *Device) findLocked(addr uint64) (int, *region) {
	i, found := slices.BinarySearchFunc(d.regions, addr, byAddr)
	if !found {
		i-- // the last region starting below addr
	}
	if i < 0 || addr-d.regions[i].addr >= d.regions[i].size {
		return -1, nil
	}
	return i, d.regions[i]
}

// ReserveAddress reserves size bytes of address space, a multiple of
// Granularity, at a 2 MiB aligned address, as cuMemAddressReserve. A
// reservation takes no device memory until pages are mapped.
func (d *Device) ReserveAddress(size uint64) (uint64, error) {
	if size == 0 || size%Granularity != 0 {
		return 0, invalid("ReserveAddress", "size %d is not a positive multiple of the granularity %d", size, Granularity)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, ErrClosed
	}
	addr, ok := d.placeLocked(size)
	if !ok {
		return 0, fmt.Errorf("sim: ReserveAddress(%d): CUDA_ERROR_OUT_OF_MEMORY: out of address space", size)
	}
	d.insertLocked(&region{addr: addr, size: size, reserved: true, mapped: make([]bool, size/Granularity), maps: map[int]int{}})
	d.stats.Reserves++
	return addr, nil
}

// FreeAddress releases a whole reservation, as cuMemAddressFree: addr and
// size must be those of ReserveAddress, and no page may still be mapped.
func (d *Device) FreeAddress(addr, size uint64) error {
	d.life.Lock()
	defer d.life.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	i, r := d.findLocked(addr)
	switch {
	case r == nil || !r.reserved || r.addr != addr:
		return invalid("FreeAddress", "%#x is not an address returned by ReserveAddress", addr)
	case r.size != size:
		return invalid("FreeAddress", "size %d, but the reservation at %#x has %d bytes", size, addr, r.size)
	case r.nmapped > 0:
		return invalid("FreeAddress", "the reservation at %#x still has %d mapped pages", addr, r.nmapped)
	}
	d.removeLocked(i)
	d.stats.AddressFrees++
	return nil
}

// pagesLocked checks that [addr, addr+size) is a page-aligned, non-empty range
// inside one reservation and returns the reservation and its page range.
func (d *Device) pagesLocked(op string, addr, size uint64) (*region, int, int, error) {
	if addr%Granularity != 0 || size%Granularity != 0 || size == 0 {
		return nil, 0, 0, invalid(op, "address %#x and size %d must be positive multiples of the granularity %d", addr, size, Granularity)
	}
	_, r := d.findLocked(addr)
	if r == nil || !r.reserved {
		return nil, 0, 0, invalid(op, "%#x is not inside a reservation", addr)
	}
	if size > r.addr+r.size-addr {
		return nil, 0, 0, invalid(op, "[%#x, +%d) runs past the end of the reservation at %#x (%d bytes)", addr, size, r.addr, r.size)
	}
	first := int((addr - r.addr) / Granularity)
	return r, first, first + int(size/Granularity), nil
}

// Map backs [addr, addr+size) of a reservation with device memory, as
// cuMemCreate + cuMemMap + cuMemSetAccess: the range is page-aligned, inside
// one reservation, and none of its pages is mapped yet. A range beyond the
// free memory fails with an [*OutOfMemoryError].
func (d *Device) Map(addr, size uint64) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	r, first, end, err := d.pagesLocked("Map", addr, size)
	if err == nil {
		for p := first; p < end; p++ {
			if r.mapped[p] {
				err = invalid("Map", "the page at %#x is already mapped", r.addr+uint64(p)*Granularity)
				break
			}
		}
	}
	if err == nil && size > d.freeLocked() {
		err = d.oomLocked("Map", size)
	}
	if err != nil {
		d.mu.Unlock()
		return err
	}
	for p := first; p < end; p++ {
		r.mapped[p] = true
	}
	r.maps[first] = end - first
	r.nmapped += end - first
	d.used += size
	d.stats.Mapped += size
	d.stats.Maps++
	l := d.latency(d.cfg.MallocLatency, size)
	d.stats.MapTime += l
	d.peakLocked()
	d.mu.Unlock()
	d.spend(l)
	return nil
}

// Unmap unmaps [addr, addr+size) and releases its device memory, as cuMemUnmap
// + cuMemRelease: the range is page-aligned, inside one reservation, and every
// page of it is mapped, by Map calls that lie wholly inside it (the driver
// cannot split a physical allocation; PyTorch maps and unmaps page by page).
// The pages read as zeros when mapped again.
func (d *Device) Unmap(addr, size uint64) error {
	d.life.Lock()
	d.mu.Lock()
	var err error
	r, first, end := (*region)(nil), 0, 0
	if d.closed {
		err = ErrClosed
	} else if r, first, end, err = d.pagesLocked("Unmap", addr, size); err == nil {
		for p := first; p < end; p++ {
			if !r.mapped[p] {
				err = invalid("Unmap", "the page at %#x is not mapped", r.addr+uint64(p)*Granularity)
				break
			}
		}
		// Like cuMemUnmap + cuMemRelease, only whole physical allocations go:
		// the range must be a run of complete Map calls.
		for p := first; err == nil && p < end; p += r.maps[p] {
			if n, ok := r.maps[p]; !ok || p+n > end {
				err = invalid("Unmap", "[%#x, +%d) cuts through a mapping made by one Map call; unmap whole mappings (map page by page to unmap page by page)", addr, size)
			}
		}
	}
	if err != nil {
		d.mu.Unlock()
		d.life.Unlock()
		return err
	}
	for p := first; p < end; p++ {
		r.mapped[p] = false
		delete(r.maps, p)
	}
	r.nmapped -= end - first
	if r.data != nil {
		discard(r.data[addr-r.addr : addr-r.addr+size])
	}
	d.used -= size
	d.stats.Mapped -= size
	d.stats.Unmaps++
	l := d.latency(d.cfg.FreeLatency, size)
	d.stats.UnmapTime += l
	d.mu.Unlock()
	d.life.Unlock()
	d.spend(l)
	return nil
}

// Close frees every allocation and reservation and makes every later call
// fail with ErrClosed. Closing a closed device does nothing.
func (d *Device) Close() error {
	d.life.Lock()
	defer d.life.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	for len(d.regions) > 0 {
		d.removeLocked(len(d.regions) - 1)
	}
	d.closed = true
	d.used = 0
	d.stats.Allocated, d.stats.Mapped = 0, 0
	return nil
}

// memory resolves device addresses for the kernels.
type memory struct{ d *Device }

// Bytes returns the host bytes behind [addr, addr+n), which must lie inside
// one Malloc segment or in mapped pages of one reservation, creating the
// region's backing on first use. Callers hold d.life shared.
func (m memory) Bytes(addr tensor.Ptr, n int) ([]byte, error) {
	d := m.d
	a := uint64(addr)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	_, r := d.findLocked(a)
	if r == nil {
		return nil, fmt.Errorf("sim: %w: %#x is not inside an allocation", ErrIllegalAddress, a)
	}
	if n < 0 || uint64(n) > r.addr+r.size-a {
		return nil, fmt.Errorf("sim: %w: %d bytes at %#x run past the end of the allocation at %#x (%d bytes)", ErrIllegalAddress, n, a, r.addr, r.size)
	}
	if r.reserved && n > 0 {
		for p := (a - r.addr) / Granularity; p <= (a-r.addr+uint64(n)-1)/Granularity; p++ {
			if !r.mapped[p] {
				return nil, fmt.Errorf("sim: %w: the page at %#x is not mapped", ErrIllegalAddress, r.addr+p*Granularity)
			}
		}
	}
	if r.data == nil {
		b, err := newBacking(r.size)
		if err != nil {
			return nil, err
		}
		r.data = b
		d.stats.Backed += r.size
	}
	off := a - r.addr
	return r.data[off : off+uint64(n)], nil
}
