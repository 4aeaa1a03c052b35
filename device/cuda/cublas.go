package cuda

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
	"memlab.dev/memlab/tensor"
)

// cuBLAS, loaded at run time like the driver, runs Matmul when it is present
// (set MEMLAB_CUBLAS=0 to use memlab's tiled kernel instead). Only
// cublasGemmStridedBatchedEx is used, with CUBLAS_COMPUTE_32F: float32
// accumulation and no TF32, the same numerics as the tiled kernel.

// cublasNames are tried in order; MEMLAB_CUBLAS_PATH, when set, comes first.
var cublasNames = []string{
	"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
	"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
	"/usr/local/cuda/lib64/libcublas.so",
}

type cublas struct {
	handle uintptr
	path   string
	gemm   uintptr // cublasGemmStridedBatchedEx
	create uintptr
	destr  uintptr
}

// loadCUBLAS loads cuBLAS and creates a handle in the calling thread's
// current context. It returns nil and why when cuBLAS cannot be used.
func loadCUBLAS() (*cublas, error) {
	if os.Getenv("MEMLAB_CUBLAS") == "0" {
		return nil, errors.New("disabled by MEMLAB_CUBLAS=0")
	}
	names := cublasNames
	if p := os.Getenv("MEMLAB_CUBLAS_PATH"); p != "" {
		names = append([]string{p}, names...)
	}
	var h uintptr
	var path string
	var lastErr error
	for _, n := range names {
		var err error
		if h, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			path = n
			break
		}
		lastErr = err
	}
	if h == 0 {
		return nil, fmt.Errorf("no libcublas: %v", lastErr)
	}
	c := &cublas{path: path}
	for name, p := range map[string]*uintptr{
		"cublasGemmStridedBatchedEx": &c.gemm, "cublasCreate_v2": &c.create, "cublasDestroy_v2": &c.destr,
	} {
		s, err := purego.Dlsym(h, name)
		if err != nil || s == 0 {
			return nil, fmt.Errorf("%s lacks %s", path, name)
		}
		*p = s
	}
	if st := callStatus(c.create, uintptr(unsafe.Pointer(&c.handle))); st != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", st)
	}
	return c, nil
}

// callStatus calls a cuBLAS function and returns its cublasStatus_t.
//
//go:uintptrescapes
func callStatus(fn uintptr, args ...uintptr) int {
	r, _, _ := purego.SyscallN(fn, args...)
	return int(int32(uint32(r)))
}

func (c *cublas) close() {
	if c != nil && c.handle != 0 {
		callStatus(c.destr, c.handle)
		c.handle = 0
	}
}

// cudaDataType of memlab's float dtypes.
func cublasType(dt tensor.DType) (uintptr, bool) {
	switch dt {
	case tensor.Float32:
		return 0, true // CUDA_R_32F
	case tensor.Float16:
		return 2, true // CUDA_R_16F
	case tensor.BFloat16:
		return 14, true // CUDA_R_16BF
	}
	return 0, false
}

// gemmOperand is one row-major matrix as cuBLAS sees it: the column-major
// matrix of its transpose (op N, leading dimension ld) or of itself (op T).
type gemmOperand struct {
	op uintptr // CUBLAS_OP_N = 0, CUBLAS_OP_T = 1
	ld int
}

// colMajorTranspose describes X[rows, cols] (strides sr, sc) as the operand
// whose op() is X^T in column-major order: cols×rows.
func colMajorTranspose(rows, cols, sr, sc int) (gemmOperand, bool) {
	switch {
	case sc == 1 || cols == 1: // row-major: X^T is column-major with ld = sr
		ld := sr
		if rows == 1 || ld < cols {
			if rows != 1 {
				return gemmOperand{}, false
			}
			ld = max(cols, 1)
		}
		return gemmOperand{op: 0, ld: ld}, true
	case sr == 1 || rows == 1: // column-major X: ld = sc, transpose it
		ld := sc
		if ld < rows {
			return gemmOperand{}, false
		}
		return gemmOperand{op: 1, ld: ld}, true
	}
	return gemmOperand{}, false
}

// matmulCUBLAS runs dst = a @ b through cuBLAS and reports false when the
// layouts do not suit it (the caller then uses the tiled kernel).
func (d *Device) matmulCUBLAS(dst, a, b tensor.Strided, od, oa, ob operand, B, M, N, K, asb, bsb, csb int) (bool, error) {
	d.mu.Lock()
	c, use := d.blas, d.useBLAS
	d.mu.Unlock()
	if c == nil || !use {
		return false, nil
	}
	ra, rb, rd := len(a.Shape), len(b.Shape), len(dst.Shape)
	ta, ok := cublasType(a.DType)
	tc, ok2 := cublasType(dst.DType)
	if !ok || !ok2 {
		return false, nil
	}
	const lim = 1<<31 - 1
	if M > lim || N > lim || K > lim || B > lim {
		return false, nil
	}
	// C^T (N×M, column-major, ldc = row stride of dst) = B^T · A^T.
	if dst.Strides[rd-1] != 1 && N != 1 {
		return false, nil
	}
	ldc := dst.Strides[rd-2]
	if M == 1 || ldc < N {
		if M != 1 {
			return false, nil
		}
		ldc = max(N, 1)
	}
	opB, ok := colMajorTranspose(K, N, b.Strides[rb-2], b.Strides[rb-1])
	if !ok {
		return false, nil
	}
	opA, ok := colMajorTranspose(M, K, a.Strides[ra-2], a.Strides[ra-1])
	if !ok {
		return false, nil
	}
	alpha, beta := new(float32), new(float32)
	*alpha = 1
	var st int
	err := d.do(func() error {
		st = callStatus(c.gemm, c.handle, opB.op, opA.op,
			uintptr(N), uintptr(M), uintptr(K),
			uintptr(unsafe.Pointer(alpha)),
			uintptr(ob.start), ta, uintptr(opB.ld), uintptr(int64(bsb)),
			uintptr(oa.start), ta, uintptr(opA.ld), uintptr(int64(asb)),
			uintptr(unsafe.Pointer(beta)),
			uintptr(od.start), tc, uintptr(ldc), uintptr(int64(csb)),
			uintptr(B), 68 /* CUBLAS_COMPUTE_32F */, uintptr(uint32(0xffffffff)) /* CUBLAS_GEMM_DEFAULT */)
		return nil
	})
	if err != nil {
		return true, err
	}
	if st != 0 {
		return true, fmt.Errorf("device/cuda: Matmul: cublasGemmStridedBatchedEx: status %d", st)
	}
	return true, nil
}

// SetCUBLAS selects cuBLAS (on) or memlab's tiled kernel (off) for Matmul
// and reports whether cuBLAS is loaded; with cuBLAS absent the tiled kernel
// runs either way.
func (d *Device) SetCUBLAS(on bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.useBLAS = on
	return d.blas != nil
}

// CUBLAS reports the cuBLAS library Matmul uses, or why it uses none.
func (d *Device) CUBLAS() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.blas != nil && d.useBLAS {
		return d.blas.path
	}
	if d.blas != nil {
		return "off (SetCUBLAS(false))"
	}
	return "none: " + d.blasWhy
}
