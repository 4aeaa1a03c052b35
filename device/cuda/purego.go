package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libcuda is libcuda.so.1 loaded with purego: the driver API reached without
// cgo. Symbols with a _v2 variant are resolved by that name explicitly, as the
// cuda.h macros would.
type libcuda struct {
	handle uintptr
	fn     map[string]uintptr
}

var (
	libOnce sync.Once
	lib     *libcuda
	libErr  error
)

// libSymbols are the driver entry points memlab calls.
var libSymbols = []string{
	"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName",
	"cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain",
	"cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxSynchronize",
	"cuMemAlloc_v2", "cuMemFree_v2", "cuMemGetInfo_v2",
	"cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2",
	"cuMemsetD8_v2", "cuMemsetD16_v2", "cuMemsetD32_v2",
	"cuModuleLoadData", "cuModuleGetFunction", "cuModuleGetGlobal_v2", "cuModuleUnload",
	"cuLaunchKernel",
	"cuEventCreate", "cuEventRecord", "cuEventSynchronize", "cuEventElapsedTime", "cuEventDestroy_v2",
	"cuGetErrorName",
	"cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate", "cuMemMap", "cuMemSetAccess",
	"cuMemUnmap", "cuMemRelease", "cuMemGetAllocationGranularity",
}

// loadLib loads and initialises libcuda.so.1 once per process.
func loadLib() (*libcuda, error) {
	libOnce.Do(func() {
		h, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			libErr = fmt.Errorf("%w: cannot load libcuda.so.1: %v", ErrNoDriver, err)
			return
		}
		l := &libcuda{handle: h, fn: map[string]uintptr{}}
		for _, s := range libSymbols {
			p, err := purego.Dlsym(h, s)
			if err != nil || p == 0 {
				libErr = fmt.Errorf("%w: libcuda.so.1 lacks %s (driver too old for memlab, which needs CUDA 11.8 / driver 520 or later)", ErrNoDriver, s)
				return
			}
			l.fn[s] = p
		}
		if err := l.check("cuInit", l.call("cuInit", 0)); err != nil {
			libErr = fmt.Errorf("%w: %v", ErrNoDriver, err)
			return
		}
		lib = l
	})
	return lib, libErr
}

// call invokes symbol name with integer arguments and returns its CUresult.
// Like purego.SyscallN it moves what its uintptr arguments point at to the
// heap, so that a stack move cannot invalidate them during the call.
//
//go:uintptrescapes
func (l *libcuda) call(name string, args ...uintptr) int {
	r, _, _ := purego.SyscallN(l.fn[name], args...)
	return int(int32(uint32(r)))
}

// check turns a CUresult into an *Error (nil on success).
func (l *libcuda) check(name string, code int) error {
	if code == resultSuccess {
		return nil
	}
	return &Error{Call: name, Code: code, Name: l.errorName(code)}
}

func (l *libcuda) errorName(code int) string {
	var p *byte
	if l.call("cuGetErrorName", uintptr(code), uintptr(unsafe.Pointer(&p))) != 0 || p == nil {
		return resultName(code)
	}
	return cString(p)
}

func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// do calls name and converts its CUresult (see call).
//
//go:uintptrescapes
func (l *libcuda) do(name string, args ...uintptr) error { return l.check(name, l.call(name, args...)) }

// deviceCount returns the number of CUDA devices.
func (l *libcuda) deviceCount() (int, error) {
	var n int32
	err := l.do("cuDeviceGetCount", uintptr(unsafe.Pointer(&n)))
	return int(n), err
}

// puregoDriver implements driver and vmm over libcuda.
type puregoDriver struct {
	l   *libcuda
	dev int32   // CUdevice
	ctx uintptr // CUcontext (the primary context)
	ord int
}

func newPuregoDriver() (*puregoDriver, error) {
	l, err := loadLib()
	if err != nil {
		return nil, err
	}
	return &puregoDriver{l: l}, nil
}

func (d *puregoDriver) binding() string { return "purego" }

func (d *puregoDriver) open(ordinal int) error {
	d.ord = ordinal
	if err := d.l.do("cuDeviceGet", uintptr(unsafe.Pointer(&d.dev)), uintptr(ordinal)); err != nil {
		return err
	}
	if err := d.l.do("cuDevicePrimaryCtxRetain", uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev)); err != nil {
		return err
	}
	return d.l.do("cuCtxSetCurrent", d.ctx)
}

func (d *puregoDriver) makeCurrent() error { return d.l.do("cuCtxSetCurrent", d.ctx) }

func (d *puregoDriver) close() error {
	return d.l.do("cuDevicePrimaryCtxRelease_v2", uintptr(d.dev))
}

func (d *puregoDriver) version() (int, error) {
	var v int32
	err := d.l.do("cuDriverGetVersion", uintptr(unsafe.Pointer(&v)))
	return int(v), err
}

func (d *puregoDriver) deviceName() (string, error) {
	buf := make([]byte, 256)
	if err := d.l.do("cuDeviceGetName", uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d.dev)); err != nil {
		return "", err
	}
	return cString(&buf[0]), nil
}

func (d *puregoDriver) attribute(attr int) (int, error) {
	var v int32
	err := d.l.do("cuDeviceGetAttribute", uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(d.dev))
	return int(v), err
}

func (d *puregoDriver) totalMem() (uint64, error) {
	var v uint64
	err := d.l.do("cuDeviceTotalMem_v2", uintptr(unsafe.Pointer(&v)), uintptr(d.dev))
	return v, err
}

func (d *puregoDriver) memAlloc(size uint64) (uint64, error) {
	var p uint64
	err := d.l.do("cuMemAlloc_v2", uintptr(unsafe.Pointer(&p)), uintptr(size))
	return p, err
}

func (d *puregoDriver) memFree(addr uint64) error { return d.l.do("cuMemFree_v2", uintptr(addr)) }

func (d *puregoDriver) memGetInfo() (free, total uint64, err error) {
	err = d.l.do("cuMemGetInfo_v2", uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, err
}

func (d *puregoDriver) memcpyHtoD(dst uint64, src unsafe.Pointer, n uint64) error {
	err := d.l.do("cuMemcpyHtoD_v2", uintptr(dst), uintptr(src), uintptr(n))
	runtime.KeepAlive(src)
	return err
}

func (d *puregoDriver) memcpyDtoH(dst unsafe.Pointer, src uint64, n uint64) error {
	err := d.l.do("cuMemcpyDtoH_v2", uintptr(dst), uintptr(src), uintptr(n))
	runtime.KeepAlive(dst)
	return err
}

func (d *puregoDriver) memcpyDtoD(dst, src uint64, n uint64) error {
	return d.l.do("cuMemcpyDtoD_v2", uintptr(dst), uintptr(src), uintptr(n))
}

func (d *puregoDriver) memsetD8(dst uint64, v uint8, n uint64) error {
	return d.l.do("cuMemsetD8_v2", uintptr(dst), uintptr(v), uintptr(n))
}

func (d *puregoDriver) memsetD16(dst uint64, v uint16, n uint64) error {
	return d.l.do("cuMemsetD16_v2", uintptr(dst), uintptr(v), uintptr(n))
}

func (d *puregoDriver) memsetD32(dst uint64, v uint32, n uint64) error {
	return d.l.do("cuMemsetD32_v2", uintptr(dst), uintptr(v), uintptr(n))
}

func (d *puregoDriver) moduleLoadData(image []byte) (uintptr, error) {
	var m uintptr
	err := d.l.do("cuModuleLoadData", uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	return m, err
}

func (d *puregoDriver) moduleFunction(mod uintptr, name string) (uintptr, error) {
	var f uintptr
	cname := append([]byte(name), 0)
	err := d.l.do("cuModuleGetFunction", uintptr(unsafe.Pointer(&f)), mod, uintptr(unsafe.Pointer(&cname[0])))
	runtime.KeepAlive(cname)
	return f, err
}

func (d *puregoDriver) moduleGlobal(mod uintptr, name string) (uint64, error) {
	var p, size uint64
	cname := append([]byte(name), 0)
	err := d.l.do("cuModuleGetGlobal_v2", uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&size)), mod, uintptr(unsafe.Pointer(&cname[0])))
	runtime.KeepAlive(cname)
	return p, err
}

func (d *puregoDriver) moduleUnload(mod uintptr) error { return d.l.do("cuModuleUnload", mod) }

func (d *puregoDriver) launch(fn uintptr, grid, block [3]uint32, shared uint32, args []karg) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	var pp uintptr
	if len(args) > 0 {
		params := make([]unsafe.Pointer, len(args))
		for i, a := range args {
			pin.Pin(a.p)
			params[i] = a.p
		}
		pin.Pin(&params[0])
		pp = uintptr(unsafe.Pointer(&params[0]))
	}
	return d.l.do("cuLaunchKernel", fn,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(shared), 0, pp, 0)
}

func (d *puregoDriver) synchronize() error { return d.l.do("cuCtxSynchronize") }

func (d *puregoDriver) eventCreate() (uintptr, error) {
	var e uintptr
	err := d.l.do("cuEventCreate", uintptr(unsafe.Pointer(&e)), 0)
	return e, err
}

func (d *puregoDriver) eventRecord(ev uintptr) error { return d.l.do("cuEventRecord", ev, 0) }

func (d *puregoDriver) eventSynchronize(ev uintptr) error { return d.l.do("cuEventSynchronize", ev) }

func (d *puregoDriver) eventElapsed(start, end uintptr) (float32, error) {
	var ms float32
	err := d.l.do("cuEventElapsedTime", uintptr(unsafe.Pointer(&ms)), start, end)
	return ms, err
}

func (d *puregoDriver) eventDestroy(ev uintptr) error { return d.l.do("cuEventDestroy_v2", ev) }

// memProp is CUmemAllocationProp: pinned device memory on one GPU.
type memProp struct {
	typ          int32 // CU_MEM_ALLOCATION_TYPE_PINNED = 1
	handleTypes  int32
	locType      int32 // CU_MEM_LOCATION_TYPE_DEVICE = 1
	locID        int32
	win32        uintptr
	compression  uint8
	rdma         uint8
	usage        uint16
	reservedFlag [4]byte
}

// accessDesc is CUmemAccessDesc.
type accessDesc struct {
	locType int32
	locID   int32
	flags   int32 // CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
}

func deviceProp(ordinal int) *memProp {
	return &memProp{typ: 1, locType: 1, locID: int32(ordinal)}
}

func (d *puregoDriver) granularity(ordinal int) (uint64, error) {
	var g uint64
	p := deviceProp(ordinal)
	err := d.l.do("cuMemGetAllocationGranularity", uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(p)), 0)
	runtime.KeepAlive(p)
	return g, err
}

func (d *puregoDriver) addressReserve(size, align uint64) (uint64, error) {
	var p uint64
	err := d.l.do("cuMemAddressReserve", uintptr(unsafe.Pointer(&p)), uintptr(size), uintptr(align), 0, 0)
	return p, err
}

func (d *puregoDriver) addressFree(addr, size uint64) error {
	return d.l.do("cuMemAddressFree", uintptr(addr), uintptr(size))
}

func (d *puregoDriver) memCreate(ordinal int, size uint64) (uint64, error) {
	var h uint64
	p := deviceProp(ordinal)
	err := d.l.do("cuMemCreate", uintptr(unsafe.Pointer(&h)), uintptr(size), uintptr(unsafe.Pointer(p)), 0)
	runtime.KeepAlive(p)
	return h, err
}

func (d *puregoDriver) memMap(addr, size uint64, handle uint64) error {
	return d.l.do("cuMemMap", uintptr(addr), uintptr(size), 0, uintptr(handle), 0)
}

func (d *puregoDriver) memSetAccess(ordinal int, addr, size uint64) error {
	a := &accessDesc{locType: 1, locID: int32(ordinal), flags: 3}
	err := d.l.do("cuMemSetAccess", uintptr(addr), uintptr(size), uintptr(unsafe.Pointer(a)), 1)
	runtime.KeepAlive(a)
	return err
}

func (d *puregoDriver) memUnmap(addr, size uint64) error {
	return d.l.do("cuMemUnmap", uintptr(addr), uintptr(size))
}

func (d *puregoDriver) memRelease(handle uint64) error {
	return d.l.do("cuMemRelease", uintptr(handle))
}
