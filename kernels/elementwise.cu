// elementwise.cu: fill, random initialisation, copies (any layout to any
// layout, with dtype conversion; a tiled transpose for 2-D permutations) and
// unary and binary elementwise operations, with vectorised fast paths for
// contiguous operands.
#include "common.cuh"

// ---------------------------------------------------------------- fill

extern "C" __global__ void fill_strided(Desc dst, double v, long long n) {
  GRID_STRIDE(i, n) { store_d(dst.base, dst.dtype, elem_offset(dst, i), v); }
}

// fill_contig8 writes the 8-byte pattern p to n contiguous 8-byte elements
// (int64 fills; 1-, 2- and 4-byte fills use cuMemsetD8/16/32).
extern "C" __global__ void fill_contig8(unsigned long long dst, unsigned long long p, long long n) {
  GRID_STRIDE(i, n) { ((unsigned long long*)dst)[i] = p; }
}

// ---------------------------------------------------------------- random

__device__ __forceinline__ double splitmix_u(unsigned long long seed, unsigned long long j) {
  unsigned long long z = seed + (j + 1ULL) * 0x9E3779B97F4A7C15ULL;
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ULL;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) * 1.1102230246251565e-16;  // 2^-53
}

// random_strided fills dst from the counter-based generator: element with
// logical row-major index i gets uniform u(i) scaled to [lo, hi), or, when
// normal != 0, the Box-Muller value of u(2i), u(2i+1) with mean lo and std hi.
extern "C" __global__ void random_strided(Desc dst, unsigned long long seed, int normal, double lo,
                                          double hi, long long n) {
  GRID_STRIDE(i, n) {
    double v;
    if (normal) {
      double u1 = splitmix_u(seed, 2ULL * (unsigned long long)i);
      double u2 = splitmix_u(seed, 2ULL * (unsigned long long)i + 1ULL);
      v = lo + hi * sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
    } else {
      double u = splitmix_u(seed, (unsigned long long)i);
      v = lo + (hi - lo) * u;
    }
    store_d(dst.base, dst.dtype, elem_offset(dst, i), v);
  }
}

// ---------------------------------------------------------------- copy

// copy_strided_same copies elements of one size between any two layouts of
// the same shape, bit for bit.
template <typename T>
__device__ __forceinline__ void copy_same(const Desc& dst, const Desc& src, long long n) {
  GRID_STRIDE(i, n) {
    long long od, os, unused;
    elem_offsets2(dst, dst, src, i, &od, &os, &unused);
    ((T*)dst.base)[od] = ((const T*)src.base)[os];
  }
}

extern "C" __global__ void copy_strided_same(Desc dst, Desc src, long long n) {
  switch (dt_size(dst.dtype)) {
    case 1: copy_same<unsigned char>(dst, src, n); break;
    case 2: copy_same<unsigned short>(dst, src, n); break;
    case 4: copy_same<unsigned int>(dst, src, n); break;
    default: copy_same<unsigned long long>(dst, src, n); break;
  }
}

// copy_strided_convert copies with dtype conversion through double, so that
// int64 values up to 2^53 and every float32 survive exactly.
extern "C" __global__ void copy_strided_convert(Desc dst, Desc src, long long n) {
  GRID_STRIDE(i, n) {
    long long od, os, unused;
    elem_offsets2(dst, dst, src, i, &od, &os, &unused);
    store_d(dst.base, dst.dtype, od, load_d(src.base, src.dtype, os));
  }
}

// Contiguous fast paths: one 16-byte vector per thread and operand, in a grid
// of blocks of CONTIG_THREADS that covers the data once (the host launches
// ceil(vectors / CONTIG_THREADS) blocks; the grid-stride loop only runs more
// than once past 2^31-1 blocks). Measured on the H200 (kernels/tuning/NOTES.md):
// this shape moves 4.17 TB/s (copy) and 4.32 TB/s (add), while persistent
// grid-stride loops of any unrolling (1-8 vectors per thread) and any grid of
// 1-32 blocks per multiprocessor stay at 3.8-4.0 and 4.0-4.18 TB/s. The
// launch bound keeps 8 blocks (2048 threads) resident per multiprocessor.
#define CONTIG_THREADS 256

// copy_contig_vec16 copies n16 16-byte words (the contiguous fast path when
// both ends are 16-byte aligned); other sizes go through cuMemcpy.
extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    copy_contig_vec16(unsigned long long dst, unsigned long long src, long long n16) {
  const uint4* s = (const uint4*)src;
  uint4* d = (uint4*)dst;
  GRID_STRIDE(i, n16) { d[i] = s[i]; }
}

// Tiled transpose: dst[b][r][c] = src[b][r][c] where dst is row-major
// (strides dsb, dsr, 1) and src is column-major in the last two dimensions
// (strides ssb, 1, ssc). A 32x32 tile goes through shared memory so that both
// the reads and the writes are coalesced.
#define TT 32
#define TROWS 8
template <typename T>
__device__ __forceinline__ void transpose_tile(T* dst, const T* src, long long R, long long C,
                                               long long dsb, long long dsr, long long ssb,
                                               long long ssc) {
  __shared__ T tile[TT][TT + 1];
  long long b = blockIdx.z;
  long long r0 = (long long)blockIdx.y * TT, c0 = (long long)blockIdx.x * TT;
  const T* s = src + b * ssb;
  T* d = dst + b * dsb;
  // Read: consecutive threads take consecutive rows r (src stride 1 along r).
  for (int j = threadIdx.y; j < TT; j += TROWS) {
    long long c = c0 + j, r = r0 + threadIdx.x;
    if (r < R && c < C) tile[j][threadIdx.x] = s[r + c * ssc];
  }
  __syncthreads();
  // Write: consecutive threads take consecutive columns c (dst stride 1 along c).
  for (int j = threadIdx.y; j < TT; j += TROWS) {
    long long r = r0 + j, c = c0 + threadIdx.x;
    if (r < R && c < C) d[r * dsr + c] = tile[threadIdx.x][j];
  }
}

extern "C" __global__ void transpose_4(unsigned long long dst, unsigned long long src, long long R,
                                       long long C, long long dsb, long long dsr, long long ssb,
                                       long long ssc) {
  transpose_tile<unsigned int>((unsigned int*)dst, (const unsigned int*)src, R, C, dsb, dsr, ssb, ssc);
}
extern "C" __global__ void transpose_2(unsigned long long dst, unsigned long long src, long long R,
                                       long long C, long long dsb, long long dsr, long long ssb,
                                       long long ssc) {
  transpose_tile<unsigned short>((unsigned short*)dst, (const unsigned short*)src, R, C, dsb, dsr, ssb, ssc);
}
extern "C" __global__ void transpose_8(unsigned long long dst, unsigned long long src, long long R,
                                       long long C, long long dsb, long long dsr, long long ssb,
                                       long long ssc) {
  transpose_tile<unsigned long long>((unsigned long long*)dst, (const unsigned long long*)src, R, C, dsb, dsr, ssb, ssc);
}
extern "C" __global__ void transpose_1(unsigned long long dst, unsigned long long src, long long R,
                                       long long C, long long dsb, long long dsr, long long ssb,
                                       long long ssc) {
  transpose_tile<unsigned char>((unsigned char*)dst, (const unsigned char*)src, R, C, dsb, dsr, ssb, ssc);
}

// ---------------------------------------------------------------- unary

enum { OP_RELU = 0, OP_GELU = 1, OP_EXP = 2, OP_NEG = 3, OP_SCALE = 4 };

__device__ __forceinline__ float unary_f(int op, float x, float alpha) {
  switch (op) {
    case OP_RELU: return x > 0.0f ? x : (x != x ? x : 0.0f);
    case OP_GELU: {
      const float k0 = 0.7978845608028654f, k1 = 0.044715f;
      return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
    }
    case OP_EXP: return expf(x);
    case OP_NEG: return -x;
    default: return x * alpha;
  }
}

__device__ __forceinline__ double unary_d(int op, double x, double alpha) {
  switch (op) {
    case OP_RELU: return x > 0.0 ? x : (x != x ? x : 0.0);
    case OP_GELU: return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case OP_EXP: return exp(x);
    case OP_NEG: return -x;
    default: return x * alpha;
  }
}

// unary_strided: any layouts and dtypes; float dtypes compute in float32
// (as PyTorch does for half types), integers in double.
extern "C" __global__ void unary_strided(int op, Desc dst, Desc src, double alpha, long long n) {
  bool fl = dst.dtype <= DT_BF16 && src.dtype <= DT_BF16;
  GRID_STRIDE(i, n) {
    long long od, os, unused;
    elem_offsets2(dst, dst, src, i, &od, &os, &unused);
    if (fl) {
      store_f(dst.base, dst.dtype, od, unary_f(op, load_f(src.base, src.dtype, os), (float)alpha));
    } else {
      store_d(dst.base, dst.dtype, od, unary_d(op, load_d(src.base, src.dtype, os), alpha));
    }
  }
}

// Contiguous fast path: one 16-byte vector of T per thread (see
// CONTIG_THREADS), then the n % (16/sizeof(T)) last elements, one per thread
// of the first threads of the grid.
template <typename T>
__device__ __forceinline__ void unary_contig(int op, T* dst, const T* src, float alpha, long long n) {
  const int V = 16 / sizeof(T);
  long long nv = n / V;
  GRID_STRIDE(i, nv) {
    uint4 raw = ((const uint4*)src)[i];
    T* e = (T*)&raw;
#pragma unroll
    for (int k = 0; k < V; k++) e[k] = F<T>::from(unary_f(op, F<T>::to(e[k]), alpha));
    ((uint4*)dst)[i] = raw;
  }
  long long t = nv * V + (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) dst[t] = F<T>::from(unary_f(op, F<T>::to(src[t]), alpha));
}

extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    unary_contig_f32(int op, unsigned long long dst, unsigned long long src,
        float alpha, long long n) {
  unary_contig<float>(op, (float*)dst, (const float*)src, alpha, n);
}
extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    unary_contig_f16(int op, unsigned long long dst, unsigned long long src,
        float alpha, long long n) {
  unary_contig<__half>(op, (__half*)dst, (const __half*)src, alpha, n);
}
extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    unary_contig_bf16(int op, unsigned long long dst, unsigned long long src,
        float alpha, long long n) {
  unary_contig<__nv_bfloat16>(op, (__nv_bfloat16*)dst, (const __nv_bfloat16*)src, alpha, n);
}

// ---------------------------------------------------------------- binary

enum { OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_DIV = 3 };

__device__ __forceinline__ float binary_f(int op, float a, float b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    default: return a / b;
  }
}

__device__ __forceinline__ double binary_d(int op, double a, double b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    default: return a / b;
  }
}

// binary_strided: any layouts (broadcast inputs have stride 0) and dtypes.
extern "C" __global__ void binary_strided(int op, Desc dst, Desc a, Desc b, long long n) {
  bool fl = dst.dtype <= DT_BF16 && a.dtype <= DT_BF16 && b.dtype <= DT_BF16;
  GRID_STRIDE(i, n) {
    long long oa, ob, od;
    elem_offsets2(dst, a, b, i, &oa, &ob, &od);
    if (fl) {
      store_f(dst.base, dst.dtype, od,
              binary_f(op, load_f(a.base, a.dtype, oa), load_f(b.base, b.dtype, ob)));
    } else {
      store_d(dst.base, dst.dtype, od,
              binary_d(op, load_d(a.base, a.dtype, oa), load_d(b.base, b.dtype, ob)));
    }
  }
}

// Contiguous fast path of binary ops, shaped as unary_contig.
template <typename T>
__device__ __forceinline__ void binary_contig(int op, T* dst, const T* a, const T* b, long long n) {
  const int V = 16 / sizeof(T);
  long long nv = n / V;
  GRID_STRIDE(i, nv) {
    uint4 ra = ((const uint4*)a)[i];
    uint4 rb = ((const uint4*)b)[i];
    T* ea = (T*)&ra;
    const T* eb = (const T*)&rb;
#pragma unroll
    for (int k = 0; k < V; k++) ea[k] = F<T>::from(binary_f(op, F<T>::to(ea[k]), F<T>::to(eb[k])));
    ((uint4*)dst)[i] = ra;
  }
  long long t = nv * V + (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) dst[t] = F<T>::from(binary_f(op, F<T>::to(a[t]), F<T>::to(b[t])));
}

extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    binary_contig_f32(int op, unsigned long long dst, unsigned long long a,
        unsigned long long b, long long n) {
  binary_contig<float>(op, (float*)dst, (const float*)a, (const float*)b, n);
}
extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    binary_contig_f16(int op, unsigned long long dst, unsigned long long a,
        unsigned long long b, long long n) {
  binary_contig<__half>(op, (__half*)dst, (const __half*)a, (const __half*)b, n);
}
extern "C" __global__ void __launch_bounds__(CONTIG_THREADS, 8)
    binary_contig_bf16(int op, unsigned long long dst, unsigned long long a,
        unsigned long long b, long long n) {
  binary_contig<__nv_bfloat16>(op, (__nv_bfloat16*)dst, (const __nv_bfloat16*)a,
                               (const __nv_bfloat16*)b, n);
}
