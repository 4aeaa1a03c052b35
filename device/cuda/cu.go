//go:build cuda && cgo

package cuda

// #include <cuda.h>
// #include <stdlib.h>
// #include <string.h>
//
// // launch copies each kernel argument, of its own size, into C memory and
// // calls cuLaunchKernel on the default stream.
// static CUresult memlab_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
//                               unsigned bx, unsigned by, unsigned bz, unsigned shared,
//                               void **args, size_t *sizes, int n) {
//   void *params[64];
//   void *store[64];
//   if (n > 64) return CUDA_ERROR_INVALID_VALUE;
//   for (int i = 0; i < n; i++) {
//     store[i] = malloc(sizes[i]);
//     memcpy(store[i], args[i], sizes[i]);
//     params[i] = store[i];
//   }
//   CUresult r = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, 0, params, 0);
//   for (int i = 0; i < n; i++) free(store[i]);
//   return r;
// }
import "C"

import (
	"errors"
	"reflect"
	"unsafe"

	"gorgonia.org/cu"
)

// CUBindingAvailable reports whether this binary has the gorgonia.org/cu binding.
const CUBindingAvailable = true

// DefaultBinding is the binding Open uses: "cu" in a -tags cuda build,
// "purego" otherwise.
const DefaultBinding = "cu"

// cuDriver implements driver with gorgonia.org/cu. Kernel launches call
// cuLaunchKernel through cgo here, because cu's Function.Launch copies exactly
// 8 bytes of every argument and memlab passes 152-byte descriptors by value.
type cuDriver struct {
	dev cu.Device
	ctx cu.CUContext
}

func newCUDriver() (driver, error) { return &cuDriver{}, nil }

// cuErr converts an error of gorgonia.org/cu (a CUresult) into an *Error.
func cuErr(call string, err error) error {
	if err == nil {
		return nil
	}
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Int {
		code := int(v.Int())
		return &Error{Call: call, Code: code, Name: resultName(code) + " (" + err.Error() + ")"}
	}
	return &Error{Call: call, Code: -1, Name: err.Error()}
}

func (d *cuDriver) binding() string { return "gorgonia.org/cu" }

func (d *cuDriver) open(ordinal int) error {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return cuErr("cuDeviceGet", err)
	}
	d.dev = dev
	if d.ctx, err = dev.RetainPrimaryCtx(); err != nil {
		return cuErr("cuDevicePrimaryCtxRetain", err)
	}
	return cuErr("cuCtxSetCurrent", cu.SetCurrentContext(d.ctx))
}

func (d *cuDriver) makeCurrent() error {
	return cuErr("cuCtxSetCurrent", cu.SetCurrentContext(d.ctx))
}

func (d *cuDriver) close() error {
	return cuErr("cuDevicePrimaryCtxRelease", d.dev.ReleasePrimaryCtx())
}

func (d *cuDriver) version() (int, error) { return cu.Version(), nil }

func (d *cuDriver) deviceName() (string, error) {
	n, err := d.dev.Name()
	return n, cuErr("cuDeviceGetName", err)
}

func (d *cuDriver) attribute(attr int) (int, error) {
	v, err := d.dev.Attribute(cu.DeviceAttribute(attr))
	return v, cuErr("cuDeviceGetAttribute", err)
}

func (d *cuDriver) totalMem() (uint64, error) {
	v, err := d.dev.TotalMem()
	return uint64(v), cuErr("cuDeviceTotalMem", err)
}

func (d *cuDriver) memAlloc(size uint64) (uint64, error) {
	p, err := cu.MemAlloc(int64(size))
	return uint64(p), cuErr("cuMemAlloc", err)
}

func (d *cuDriver) memFree(addr uint64) error {
	return cuErr("cuMemFree", cu.MemFree(cu.DevicePtr(addr)))
}

func (d *cuDriver) memGetInfo() (free, total uint64, err error) {
	f, t, err := cu.MemInfo()
	return uint64(f), uint64(t), cuErr("cuMemGetInfo", err)
}

func (d *cuDriver) memcpyHtoD(dst uint64, src unsafe.Pointer, n uint64) error {
	return cuErr("cuMemcpyHtoD", cu.MemcpyHtoD(cu.DevicePtr(dst), src, int64(n)))
}

func (d *cuDriver) memcpyDtoH(dst unsafe.Pointer, src uint64, n uint64) error {
	return cuErr("cuMemcpyDtoH", cu.MemcpyDtoH(dst, cu.DevicePtr(src), int64(n)))
}

func (d *cuDriver) memcpyDtoD(dst, src uint64, n uint64) error {
	return cuErr("cuMemcpyDtoD", cu.MemcpyDtoD(cu.DevicePtr(dst), cu.DevicePtr(src), int64(n)))
}

func (d *cuDriver) memsetD8(dst uint64, v uint8, n uint64) error {
	return cuErr("cuMemsetD8", cu.MemsetD8(cu.DevicePtr(dst), v, int64(n)))
}

func (d *cuDriver) memsetD16(dst uint64, v uint16, n uint64) error {
	return cuErr("cuMemsetD16", cu.MemsetD16(cu.DevicePtr(dst), v, int64(n)))
}

func (d *cuDriver) memsetD32(dst uint64, v uint32, n uint64) error {
	return cuErr("cuMemsetD32", cu.MemsetD32(cu.DevicePtr(dst), v, int64(n)))
}

// cu.Module, cu.Function and cu.Event each hold one C handle; memlab keeps
// the handle as a uintptr.
func (d *cuDriver) moduleLoadData(image []byte) (uintptr, error) {
	m, err := cu.LoadData(string(image[:len(image)-1]))
	if err != nil {
		return 0, cuErr("cuModuleLoadData", err)
	}
	return *(*uintptr)(unsafe.Pointer(&m)), nil
}

func moduleOf(h uintptr) cu.Module     { return *(*cu.Module)(unsafe.Pointer(&h)) }
func functionOf(h uintptr) cu.Function { return *(*cu.Function)(unsafe.Pointer(&h)) }

func (d *cuDriver) moduleFunction(mod uintptr, name string) (uintptr, error) {
	f, err := moduleOf(mod).Function(name)
	if err != nil {
		return 0, cuErr("cuModuleGetFunction", err)
	}
	return *(*uintptr)(unsafe.Pointer(&f)), nil
}

func (d *cuDriver) moduleGlobal(mod uintptr, name string) (uint64, error) {
	p, _, err := moduleOf(mod).Global(name)
	return uint64(p), cuErr("cuModuleGetGlobal", err)
}

func (d *cuDriver) moduleUnload(mod uintptr) error {
	return cuErr("cuModuleUnload", moduleOf(mod).Unload())
}

func (d *cuDriver) launch(fn uintptr, grid, block [3]uint32, shared uint32, params []karg) error {
	n := len(params)
	if n > 64 {
		return errors.New("device/cuda: more than 64 kernel arguments")
	}
	args := (*[64]unsafe.Pointer)(C.malloc(C.size_t(64 * unsafe.Sizeof(uintptr(0)))))
	sizes := (*[64]C.size_t)(C.malloc(C.size_t(64 * unsafe.Sizeof(C.size_t(0)))))
	defer C.free(unsafe.Pointer(args))
	defer C.free(unsafe.Pointer(sizes))
	var cmem []unsafe.Pointer
	defer func() {
		for _, p := range cmem {
			C.free(p)
		}
	}()
	for i := 0; i < n; i++ {
		sz := params[i].n
		c := C.malloc(C.size_t(sz))
		C.memcpy(c, params[i].p, C.size_t(sz))
		cmem = append(cmem, c)
		args[i] = c
		sizes[i] = C.size_t(sz)
	}
	f := functionOf(fn)
	r := C.memlab_launch(*(*C.CUfunction)(unsafe.Pointer(&f)), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(shared),
		(*unsafe.Pointer)(unsafe.Pointer(args)), (*C.size_t)(unsafe.Pointer(sizes)), C.int(n))
	if r != C.CUDA_SUCCESS {
		return &Error{Call: "cuLaunchKernel", Code: int(r), Name: resultName(int(r))}
	}
	return nil
}

func (d *cuDriver) synchronize() error { return cuErr("cuCtxSynchronize", cu.Synchronize()) }

func (d *cuDriver) eventCreate() (uintptr, error) {
	e, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return 0, cuErr("cuEventCreate", err)
	}
	return *(*uintptr)(unsafe.Pointer(&e)), nil
}

func eventOf(h uintptr) cu.Event { return *(*cu.Event)(unsafe.Pointer(&h)) }

func (d *cuDriver) eventRecord(ev uintptr) error {
	return cuErr("cuEventRecord", eventOf(ev).Record(cu.NoStream))
}

func (d *cuDriver) eventSynchronize(ev uintptr) error {
	return cuErr("cuEventSynchronize", eventOf(ev).Synchronize())
}

func (d *cuDriver) eventElapsed(start, end uintptr) (float32, error) {
	ms, err := eventOf(start).Elapsed(eventOf(end))
	return float32(ms), cuErr("cuEventElapsedTime", err)
}

func (d *cuDriver) eventDestroy(ev uintptr) error {
	e := eventOf(ev)
	return cuErr("cuEventDestroy", cu.DestroyEvent(&e))
}
