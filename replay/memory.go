package replay

import (
	"fmt"
	"slices"
	"sort"

	"memlab.dev/memlab/allocator"
)

// oom is the error this memory returns when size bytes do not fit.
func oom(size uint64) error {
	return &allocator.DeviceOutOfMemory{Device: "replay: device", Size: size}
}

// granularity is the page size of the replay memories.
const granularity = 2 << 20

// SimMemory is a deterministic simulated device for bare op lists: first-fit addresses
// in a fixed range, a capacity, and virtual memory for expandable segments. It is not
// safe for concurrent use (the allocator's lock serialises calls).
type SimMemory struct {
	capacity uint64
	used     uint64
	base     uint64
	segs     map[uint64]uint64 // addr -> size of live Malloc segments
	ranges   []span            // live Malloc segments, by address
	vaNext   uint64
	vas      map[uint64]uint64
	mapped   map[uint64]uint64 // page addr -> size
}

type span struct{ addr, size uint64 }

// NewSimMemory returns a simulated device of capacity bytes.
func NewSimMemory(capacity uint64) *SimMemory {
	return &SimMemory{
		capacity: capacity, base: 0x7f0000000000,
		segs: map[uint64]uint64{}, vaNext: 0x100000000000,
		vas: map[uint64]uint64{}, mapped: map[uint64]uint64{},
	}
}

// Malloc places size bytes at the lowest free 2 MiB-aligned address.
func (m *SimMemory) Malloc(size uint64) (uint64, error) {
	if size == 0 || m.used+size > m.capacity {
		return 0, oom(size)
	}
	addr := m.base
	for _, s := range m.ranges {
		if addr+size <= s.addr {
			break
		}
		if end := alignUp(s.addr+s.size, granularity); end > addr {
			addr = end
		}
	}
	at := sort.Search(len(m.ranges), func(i int) bool { return m.ranges[i].addr > addr })
	m.ranges = slices.Insert(m.ranges, at, span{addr, size})
	m.segs[addr] = size
	m.used += size
	return addr, nil
}

// Free releases a segment.
func (m *SimMemory) Free(addr uint64) error {
	size, ok := m.segs[addr]
	if !ok {
		return fmt.Errorf("replay: free of unknown segment %#x", addr)
	}
	delete(m.segs, addr)
	if i := sort.Search(len(m.ranges), func(i int) bool { return m.ranges[i].addr >= addr }); i < len(m.ranges) && m.ranges[i].addr == addr {
		m.ranges = slices.Delete(m.ranges, i, i+1)
	}
	m.used -= size
	return nil
}

// MemGetInfo reports capacity minus what is allocated or mapped.
func (m *SimMemory) MemGetInfo() (free, total uint64, err error) {
	return m.capacity - m.used, m.capacity, nil
}

// ProcessMemoryInUse reports what this process holds on the device, for the OOM
// message: everything allocated or mapped (the simulated device has no other users).
func (m *SimMemory) ProcessMemoryInUse() (uint64, bool) { return m.used, true }

// Granularity is 2 MiB.
func (m *SimMemory) Granularity() uint64 { return granularity }

// ReserveAddress hands out address ranges above every other.
func (m *SimMemory) ReserveAddress(size uint64) (uint64, error) {
	addr := m.vaNext
	m.vaNext = alignUp(addr+size, 1<<30) + 1<<30
	m.vas[addr] = size
	return addr, nil
}

// FreeAddress releases a reservation.
func (m *SimMemory) FreeAddress(addr, size uint64) error { return freeReservation(m.vas, addr, size) }

// Map backs a range with memory.
func (m *SimMemory) Map(addr, size uint64) error {
	if m.used+size > m.capacity {
		return oom(size)
	}
	m.mapped[addr] = size
	m.used += size
	return nil
}

// Unmap releases the memory behind a range (which may span several Map calls).
func (m *SimMemory) Unmap(addr, size uint64) error {
	end := addr + size
	var freed uint64
	for a, s := range m.mapped {
		if a >= addr && a+s <= end {
			delete(m.mapped, a)
			freed += s
		} else if a < end && a+s > addr {
			// split a mapping: keep the parts outside [addr, end)
			delete(m.mapped, a)
			if a < addr {
				m.mapped[a] = addr - a
			}
			if a+s > end {
				m.mapped[end] = a + s - end
			}
			lo, hi := max(a, addr), min(a+s, end)
			freed += hi - lo
		}
	}
	if freed != size {
		return fmt.Errorf("replay: unmap of %#x+%d covers %d mapped bytes", addr, size, freed)
	}
	m.used -= size
	return nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// freeReservation deletes the reservation of size bytes at addr from vas
// (address -> size), or fails when vas holds no such reservation.
func freeReservation(vas map[uint64]uint64, addr, size uint64) error {
	if vas[addr] != size {
		return fmt.Errorf("replay: free of unknown reservation %#x+%d", addr, size)
	}
	delete(vas, addr)
	return nil
}

// overlaps reports whether [addr, addr+size) meets one of ranges (address -> size).
func overlaps(ranges map[uint64]uint64, addr, size uint64) bool {
	for a, s := range ranges {
		if addr < a+s && a < addr+size {
			return true
		}
	}
	return false
}

// oracleMemory replays a ground-truth file: each device allocation gets the address the
// real GPU returned. A new segment (or expandable reservation) made by an allocation
// starts at the address PyTorch returned for it (the allocation takes the low addresses
// of a fresh segment), so the op's ptr is the first source; the recorded new_segs of
// the op (or of the next line that has them) are the second. Free memory is the
// recorded free memory at the start minus what the replay holds.
type oracleMemory struct {
	total     uint64
	startFree uint64
	used      uint64
	ptr       uint64 // the current op's recorded allocation address, 0 if none
	ptrUsed   bool
	newSegs   [][2]uint64 // recorded new segments of the current window
	usedNew   []bool
	window    int
	freedNow  []span // segments freed during the current op (address reuse)
	segs      map[uint64]uint64
	vas       map[uint64]uint64
	synth     uint64 // next synthetic address, when the record has none
	Guessed   int    // addresses not found in the record
}

func newOracleMemory(total, startFree uint64) *oracleMemory {
	return &oracleMemory{total: total, startFree: startFree, segs: map[uint64]uint64{},
		vas: map[uint64]uint64{}, synth: 0xf00000000000, window: -1}
}

// beginOp sets the current op's recorded allocation address and the recorded new
// segments of its window (the op's line, or the next line that records them).
func (m *oracleMemory) beginOp(ptr uint64, newSegs [][2]uint64, window int) {
	m.ptr, m.ptrUsed = ptr, false
	if window != m.window {
		m.window = window
		m.newSegs = newSegs
		m.usedNew = m.usedNew[:0]
		for range newSegs {
			m.usedNew = append(m.usedNew, false)
		}
	}
	m.freedNow = m.freedNow[:0]
}

// free reports whether [addr, addr+size) overlaps no held segment or
// reservation: a recorded address that fails it (a crafted or inconsistent
// record) is never handed to the allocator.
func (m *oracleMemory) free(addr, size uint64) bool {
	return addr != 0 && addr+size > addr && !overlaps(m.vas, addr, size) && !overlaps(m.segs, addr, size)
}

// takePtr returns the op's recorded allocation address if it can start a new range
// of size bytes.
func (m *oracleMemory) takePtr(size uint64) (uint64, bool) {
	if m.ptr == 0 || m.ptrUsed || !m.free(m.ptr, size) {
		return 0, false
	}
	m.ptrUsed = true
	for i, s := range m.newSegs {
		if s[0] == m.ptr {
			m.usedNew[i] = true
		}
	}
	return m.ptr, true
}

func (m *oracleMemory) takeRecorded(size uint64, exact bool) (uint64, bool) {
	best := -1
	for i, s := range m.newSegs {
		if m.usedNew[i] || !m.free(s[0], max(s[1], size)) {
			continue
		}
		if exact && s[1] != size {
			continue
		}
		if best < 0 || s[0] < m.newSegs[best][0] {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	m.usedNew[best] = true
	return m.newSegs[best][0], true
}

// Malloc returns the recorded address for a new segment (see oracleMemory).
func (m *oracleMemory) Malloc(size uint64) (uint64, error) {
	if m.used+size > m.startFree {
		return 0, oom(size)
	}
	addr, ok := m.takePtr(size)
	if !ok {
		addr, ok = m.takeRecorded(size, true)
	}
	if !ok {
		// Freed and re-allocated at the same address and size within one op: the
		// record shows neither; reuse the most recently freed matching segment.
		for i := len(m.freedNow) - 1; i >= 0; i-- {
			if m.freedNow[i].size == size {
				addr, ok = m.freedNow[i].addr, true
				m.freedNow = append(m.freedNow[:i], m.freedNow[i+1:]...)
				break
			}
		}
	}
	if !ok {
		addr = m.synth
		m.synth += alignUp(size, granularity) + granularity
		m.Guessed++
	}
	m.segs[addr] = size
	m.used += size
	return addr, nil
}

// Free releases a segment.
func (m *oracleMemory) Free(addr uint64) error {
	size, ok := m.segs[addr]
	if !ok {
		return fmt.Errorf("replay: free of unknown segment %#x", addr)
	}
	delete(m.segs, addr)
	m.used -= size
	m.freedNow = append(m.freedNow, span{addr, size})
	return nil
}

// MemGetInfo reports the recorded free memory at start minus what the replay holds.
func (m *oracleMemory) MemGetInfo() (free, total uint64, err error) {
	if m.used > m.startFree {
		return 0, m.total, nil
	}
	return m.startFree - m.used, m.total, nil
}

// driverReserve is the part of (total − free) that NVML does not attribute to the
// process: measured on the H200 that recorded the ground truth (driver 580.159,
// 2026-11-29), NVML reported the process using reserved + 518 MiB while total − free
// at start was 526.8125 MiB.
const driverReserve = 9240576

// ProcessMemoryInUse is what NVML reports for this process in PyTorch's OOM message:
// the CUDA context (total − free at start, less driverReserve) plus what the replay holds.
func (m *oracleMemory) ProcessMemoryInUse() (uint64, bool) {
	ctx := m.total - m.startFree
	if ctx > driverReserve {
		ctx -= driverReserve
	}
	return ctx + m.used, true
}

// Granularity is 2 MiB.
func (m *oracleMemory) Granularity() uint64 { return granularity }

// ReserveAddress returns the recorded address for a new expandable segment.
func (m *oracleMemory) ReserveAddress(size uint64) (uint64, error) {
	addr, ok := m.takePtr(size)
	if !ok {
		addr, ok = m.takeRecorded(size, false)
	}
	if !ok {
		addr = m.synth
		m.synth += alignUp(size, 1<<30) + 1<<30
		m.Guessed++
	}
	m.vas[addr] = size
	return addr, nil
}

// FreeAddress releases a reservation.
func (m *oracleMemory) FreeAddress(addr, size uint64) error {
	return freeReservation(m.vas, addr, size)
}

// Map accounts for newly mapped pages.
func (m *oracleMemory) Map(addr, size uint64) error {
	if m.used+size > m.startFree {
		return oom(size)
	}
	m.used += size
	return nil
}

// Unmap accounts for unmapped pages.
func (m *oracleMemory) Unmap(addr, size uint64) error {
	m.used -= size
	return nil
}
