package cuda

import (
	"errors"
	"fmt"
)

// CUresult codes memlab tells apart.
const (
	resultSuccess                 = 0
	resultOutOfMemory             = 2
	resultNotInitialized          = 3
	resultInsufficientDriver      = 35
	resultNoDevice                = 100
	resultNoBinaryForGPU          = 209
	resultInvalidPTX              = 218
	resultUnsupportedPTXVersion   = 222
	resultJITCompilerNotFound     = 221
	resultNotSupported            = 801
	resultSystemDriverMismatch    = 803
	resultCompatNotSupportedOnDev = 804
)

// Error is a failed CUDA driver call.
type Error struct {
	Call string // the driver entry point, such as "cuMemAlloc_v2"
	Code int    // the CUresult
	Name string // the CUresult's name, such as "CUDA_ERROR_OUT_OF_MEMORY"
}

// Error formats e as "device/cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)".
func (e *Error) Error() string {
	return fmt.Sprintf("device/cuda: %s: %s (%d)", e.Call, e.Name, e.Code)
}

// OutOfMemory reports whether the driver ran out of device memory, the
// condition the caching allocator answers by freeing its cache and retrying.
func (e *Error) OutOfMemory() bool { return e.Code == resultOutOfMemory }

// ErrNoDriver is wrapped by the error Open returns when libcuda.so.1 cannot be
// loaded or initialised, or reports no device.
var ErrNoDriver = errors.New("device/cuda: no CUDA driver")

// ErrClosed is returned by every method of a Device after Close.
var ErrClosed = errors.New("device/cuda: device is closed")

// resultName returns the name of the CUresult codes this package mentions,
// for drivers whose cuGetErrorName is unavailable.
func resultName(code int) string {
	switch code {
	case resultSuccess:
		return "CUDA_SUCCESS"
	case resultOutOfMemory:
		return "CUDA_ERROR_OUT_OF_MEMORY"
	case resultNotInitialized:
		return "CUDA_ERROR_NOT_INITIALIZED"
	case resultInsufficientDriver:
		return "CUDA_ERROR_INSUFFICIENT_DRIVER"
	case resultNoDevice:
		return "CUDA_ERROR_NO_DEVICE"
	case resultNoBinaryForGPU:
		return "CUDA_ERROR_NO_BINARY_FOR_GPU"
	case resultInvalidPTX:
		return "CUDA_ERROR_INVALID_PTX"
	case resultJITCompilerNotFound:
		return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"
	case resultUnsupportedPTXVersion:
		return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
	case resultNotSupported:
		return "CUDA_ERROR_NOT_SUPPORTED"
	case resultSystemDriverMismatch:
		return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
	case resultCompatNotSupportedOnDev:
		return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
	}
	return "CUDA_ERROR"
}

// ptxTooNew reports whether code says the driver cannot compile memlab's PTX.
func ptxTooNew(code int) bool {
	return code == resultUnsupportedPTXVersion || code == resultInvalidPTX ||
		code == resultNoBinaryForGPU || code == resultJITCompilerNotFound
}
