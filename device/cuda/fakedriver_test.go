package cuda

import (
	"slices"
	"sync"
	"unsafe"
)

// fakeDriver is a driver and vmm over host memory: every driver call memlab
// makes except kernel execution (launches are recorded and do nothing), so
// that Device's bookkeeping, validation, host copies, virtual memory and the
// host path of integer work are tested where there is no GPU.
type fakeDriver struct {
	mu       sync.Mutex
	total    uint64
	used     uint64
	next     uint64
	blocks   []fakeBlock        // sorted by addr: allocations and mappings
	handles  map[uint64][]byte  // cuMemCreate handles
	launches []uintptr          // functions launched, in order
	names    map[uintptr]string // function handle -> kernel name
	reserved map[uint64]uint64
}

type fakeBlock struct {
	addr uint64
	b    []byte
	h    uint64 // the handle behind a mapping, 0 for an allocation
}

func newFakeDriver(total uint64) *fakeDriver {
	return &fakeDriver{total: total, next: 1 << 32, handles: map[uint64][]byte{}, names: map[uintptr]string{}, reserved: map[uint64]uint64{}}
}

func fakeErr(call string, code int) error {
	return &Error{Call: call, Code: code, Name: resultName(code)}
}

func (f *fakeDriver) binding() string                 { return "fake" }
func (f *fakeDriver) open(int) error                  { return nil }
func (f *fakeDriver) makeCurrent() error              { return nil }
func (f *fakeDriver) close() error                    { return nil }
func (f *fakeDriver) version() (int, error)           { return 13000, nil }
func (f *fakeDriver) deviceName() (string, error)     { return "fake GPU", nil }
func (f *fakeDriver) totalMem() (uint64, error)       { return f.total, nil }
func (f *fakeDriver) synchronize() error              { return nil }
func (f *fakeDriver) eventCreate() (uintptr, error)   { return 1, nil }
func (f *fakeDriver) eventRecord(uintptr) error       { return nil }
func (f *fakeDriver) eventSynchronize(uintptr) error  { return nil }
func (f *fakeDriver) eventDestroy(uintptr) error      { return nil }
func (f *fakeDriver) moduleUnload(uintptr) error      { return nil }
func (f *fakeDriver) granularity(int) (uint64, error) { return 2 << 20, nil }
func (f *fakeDriver) eventElapsed(_, _ uintptr) (float32, error) {
	return 0.5, nil
}

func (f *fakeDriver) attribute(attr int) (int, error) {
	switch attr {
	case attrMultiprocessorCount:
		return 4, nil
	case attrCCMajor:
		return 9, nil
	}
	return 0, nil
}

// insert records a block; f.mu must be held.
func (f *fakeDriver) insert(b fakeBlock) {
	i, _ := slices.BinarySearchFunc(f.blocks, b.addr, func(x fakeBlock, a uint64) int { return int(int64(x.addr - a)) })
	f.blocks = slices.Insert(f.blocks, i, b)
}

// access returns the host bytes behind [addr, addr+n), which may span
// blocks that follow each other without a gap (adjacent mappings).
func (f *fakeDriver) access(addr, n uint64) ([][]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, b := range f.blocks {
		end := b.addr + uint64(len(b.b))
		if n == 0 || addr < b.addr || addr >= end {
			continue
		}
		m := min(n, end-addr)
		out = append(out, b.b[addr-b.addr:addr-b.addr+m])
		addr, n = addr+m, n-m
	}
	if n != 0 {
		return nil, fakeErr("fake memcpy", 1)
	}
	return out, nil
}

// read returns a copy of [addr, addr+n).
func (f *fakeDriver) read(addr, n uint64) ([]byte, error) {
	parts, err := f.access(addr, n)
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, err
}

// write copies src to addr.
func (f *fakeDriver) write(addr uint64, src []byte) error {
	parts, err := f.access(addr, uint64(len(src)))
	for _, p := range parts {
		src = src[copy(p, src):]
	}
	return err
}

func (f *fakeDriver) memAlloc(size uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+size > f.total {
		return 0, fakeErr("cuMemAlloc_v2", resultOutOfMemory)
	}
	a := f.next
	f.next += (size + 1<<21) &^ (1<<20 - 1)
	f.used += size
	f.insert(fakeBlock{addr: a, b: make([]byte, size)})
	return a, nil
}

func (f *fakeDriver) memFree(addr uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.blocks {
		if b.addr == addr && b.h == 0 {
			f.used -= uint64(len(b.b))
			f.blocks = slices.Delete(f.blocks, i, i+1)
			return nil
		}
	}
	return fakeErr("cuMemFree_v2", 1)
}

func (f *fakeDriver) memGetInfo() (free, total uint64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total - f.used, f.total, nil
}

func (f *fakeDriver) memcpyHtoD(dst uint64, src unsafe.Pointer, n uint64) error {
	return f.write(dst, unsafe.Slice((*byte)(src), n))
}

func (f *fakeDriver) memcpyDtoH(dst unsafe.Pointer, src uint64, n uint64) error {
	b, err := f.read(src, n)
	copy(unsafe.Slice((*byte)(dst), n), b)
	return err
}

func (f *fakeDriver) memcpyDtoD(dst, src uint64, n uint64) error {
	b, err := f.read(src, n)
	if err != nil {
		return err
	}
	return f.write(dst, b)
}

func (f *fakeDriver) memset(dst uint64, pat []byte, n uint64) error {
	b := make([]byte, n*uint64(len(pat)))
	for i := uint64(0); i < n; i++ {
		copy(b[i*uint64(len(pat)):], pat)
	}
	return f.write(dst, b)
}

func (f *fakeDriver) memsetD8(dst uint64, v uint8, n uint64) error {
	return f.memset(dst, []byte{v}, n)
}

func (f *fakeDriver) memsetD16(dst uint64, v uint16, n uint64) error {
	return f.memset(dst, []byte{byte(v), byte(v >> 8)}, n)
}

func (f *fakeDriver) memsetD32(dst uint64, v uint32, n uint64) error {
	return f.memset(dst, []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}, n)
}

func (f *fakeDriver) moduleLoadData([]byte) (uintptr, error) { return 1, nil }

func (f *fakeDriver) moduleFunction(_ uintptr, name string) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := uintptr(len(f.names) + 1)
	f.names[h] = name
	return h, nil
}

func (f *fakeDriver) moduleGlobal(_ uintptr, name string) (uint64, error) {
	return f.memAlloc(4)
}

func (f *fakeDriver) launch(fn uintptr, _, _ [3]uint32, _ uint32, _ []karg) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launches = append(f.launches, fn)
	return nil
}

// launched returns the names of the kernels launched so far.
func (f *fakeDriver) launched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, h := range f.launches {
		out = append(out, f.names[h])
	}
	return out
}

func (f *fakeDriver) addressReserve(size, align uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := (f.next + align - 1) &^ (align - 1)
	f.next = a + size + align
	f.reserved[a] = size
	return a, nil
}

func (f *fakeDriver) addressFree(addr, size uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reserved[addr] != size {
		return fakeErr("cuMemAddressFree", 1)
	}
	delete(f.reserved, addr)
	return nil
}

func (f *fakeDriver) memCreate(_ int, size uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+size > f.total {
		return 0, fakeErr("cuMemCreate", resultOutOfMemory)
	}
	f.used += size
	h := uint64(len(f.handles) + 1)
	f.handles[h] = make([]byte, size)
	return h, nil
}

func (f *fakeDriver) memMap(addr, size uint64, h uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.handles[h]
	if !ok || uint64(len(b)) != size {
		return fakeErr("cuMemMap", 1)
	}
	f.insert(fakeBlock{addr: addr, b: b, h: h})
	return nil
}

func (f *fakeDriver) memSetAccess(int, uint64, uint64) error { return nil }

func (f *fakeDriver) memUnmap(addr, size uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.blocks {
		if b.addr == addr && b.h != 0 && uint64(len(b.b)) == size {
			f.blocks = slices.Delete(f.blocks, i, i+1)
			return nil
		}
	}
	return fakeErr("cuMemUnmap", 1)
}

func (f *fakeDriver) memRelease(h uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.handles[h]
	if !ok {
		return fakeErr("cuMemRelease", 1)
	}
	f.used -= uint64(len(b))
	delete(f.handles, h)
	return nil
}
