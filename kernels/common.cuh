// common.cuh: what every memlab kernel shares: the tensor descriptor passed by
// value, element loads and stores with dtype conversion, and strided indexing.
// The Go side (device/cuda) packs Desc byte for byte; keep the two in step.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define MEMLAB_MAX_RANK 8

// Element types, numbered as tensor.DType in Go.
enum {
  DT_F32 = 0,
  DT_F16 = 1,
  DT_BF16 = 2,
  DT_I32 = 3,
  DT_I64 = 4,
  DT_U8 = 5,
  DT_BOOL = 6
};

// Desc describes one strided operand: element (i0, i1, ...) lives at byte
// address base + (offset + sum ik*strides[k]) * size(dtype). 152 bytes.
struct Desc {
  unsigned long long base;
  long long offset;
  long long shape[MEMLAB_MAX_RANK];
  long long strides[MEMLAB_MAX_RANK];
  int rank;
  int dtype;
};

// Set by kernels that find bad data (an embedding index out of range); the
// host reads and clears it after such a kernel.
__device__ int memlab_error;

__device__ __forceinline__ int dt_size(int dt) {
  switch (dt) {
    case DT_F32: case DT_I32: return 4;
    case DT_F16: case DT_BF16: return 2;
    case DT_I64: return 8;
    default: return 1;
  }
}

// Element offset (in elements) of logical row-major index i in d.
__device__ __forceinline__ long long elem_offset(const Desc& d, long long i) {
  long long off = d.offset;
#pragma unroll
  for (int k = MEMLAB_MAX_RANK - 1; k >= 0; k--) {
    if (k < d.rank) {
      long long s = d.shape[k];
      long long c = i % s;
      i /= s;
      off += c * d.strides[k];
    }
  }
  return off;
}

// Offsets of index i, decomposed over the shape of `by`, in operands a and b
// (which have by's rank); used by elementwise kernels with broadcast inputs.
__device__ __forceinline__ void elem_offsets2(const Desc& by, const Desc& a, const Desc& b,
                                              long long i, long long* oa, long long* ob,
                                              long long* oby) {
  long long offa = a.offset, offb = b.offset, offby = by.offset;
#pragma unroll
  for (int k = MEMLAB_MAX_RANK - 1; k >= 0; k--) {
    if (k < by.rank) {
      long long s = by.shape[k];
      long long c = i % s;
      i /= s;
      offa += c * a.strides[k];
      offb += c * b.strides[k];
      offby += c * by.strides[k];
    }
  }
  *oa = offa;
  *ob = offb;
  *oby = offby;
}

__device__ __forceinline__ double load_d(unsigned long long base, int dt, long long off) {
  switch (dt) {
    case DT_F32: return (double)((const float*)base)[off];
    case DT_F16: return (double)__half2float(((const __half*)base)[off]);
    case DT_BF16: return (double)__bfloat162float(((const __nv_bfloat16*)base)[off]);
    case DT_I32: return (double)((const int*)base)[off];
    case DT_I64: return (double)((const long long*)base)[off];
    case DT_U8: return (double)((const unsigned char*)base)[off];
    default: return ((const unsigned char*)base)[off] ? 1.0 : 0.0;
  }
}

__device__ __forceinline__ float load_f(unsigned long long base, int dt, long long off) {
  switch (dt) {
    case DT_F32: return ((const float*)base)[off];
    case DT_F16: return __half2float(((const __half*)base)[off]);
    case DT_BF16: return __bfloat162float(((const __nv_bfloat16*)base)[off]);
    case DT_I32: return (float)((const int*)base)[off];
    case DT_I64: return (float)((const long long*)base)[off];
    case DT_U8: return (float)((const unsigned char*)base)[off];
    default: return ((const unsigned char*)base)[off] ? 1.0f : 0.0f;
  }
}

// Converts v to an integer as C does (toward zero), saturating instead of
// invoking undefined behaviour on NaN or out-of-range values.
__device__ __forceinline__ long long to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return 0x7fffffffffffffffLL;
  if (v <= -9.2233720368547758e18) return (long long)0x8000000000000000ULL;
  return (long long)v;
}

__device__ __forceinline__ void store_d(unsigned long long base, int dt, long long off, double v) {
  switch (dt) {
    case DT_F32: ((float*)base)[off] = (float)v; break;
    case DT_F16: ((__half*)base)[off] = __float2half_rn((float)v); break;
    case DT_BF16: ((__nv_bfloat16*)base)[off] = __float2bfloat16_rn((float)v); break;
    case DT_I32: ((int*)base)[off] = (int)to_i64(v); break;
    case DT_I64: ((long long*)base)[off] = to_i64(v); break;
    case DT_U8: ((unsigned char*)base)[off] = (unsigned char)to_i64(v); break;
    default: ((unsigned char*)base)[off] = (v != 0.0) ? 1 : 0; break;
  }
}

__device__ __forceinline__ void store_f(unsigned long long base, int dt, long long off, float v) {
  switch (dt) {
    case DT_F32: ((float*)base)[off] = v; break;
    case DT_F16: ((__half*)base)[off] = __float2half_rn(v); break;
    case DT_BF16: ((__nv_bfloat16*)base)[off] = __float2bfloat16_rn(v); break;
    default: store_d(base, dt, off, (double)v); break;
  }
}

// Storage types of the floating-point dtypes, for templated fast paths.
template <typename T> struct F;
template <> struct F<float> {
  static __device__ __forceinline__ float to(float x) { return x; }
  static __device__ __forceinline__ float from(float x) { return x; }
};
template <> struct F<__half> {
  static __device__ __forceinline__ float to(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from(float x) { return __float2half_rn(x); }
};
template <> struct F<__nv_bfloat16> {
  static __device__ __forceinline__ float to(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
};

#define GRID_STRIDE(i, n)                                                        \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)blockDim.x * gridDim.x)
