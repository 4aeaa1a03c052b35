// reduce.cu: sum and max along one dimension, softmax and layer
// normalisation along the last dimension.
#include "common.cuh"

enum { RED_SUM = 0, RED_MAX = 1 };

__device__ __forceinline__ float red_op(int op, float a, float b) {
  return op == RED_SUM ? a + b : fmaxf(a, b);
}

__device__ __forceinline__ float red_init(int op) {
  return op == RED_SUM ? 0.0f : -__int_as_float(0x7f800000);
}

// NaN-propagating max as in torch.max.
__device__ __forceinline__ float red_max_nan(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}

__device__ __forceinline__ float warp_red(int op, float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = op == RED_SUM ? v + w : red_max_nan(v, w);
  }
  return v;
}

// reduce_dim: out (shape of src with shape[dim] = 1) holds the reduction of
// L elements of src spaced by stride sd. One thread per output element; the
// host uses this when the reduced dimension is not the innermost one, so
// consecutive threads read consecutive addresses.
extern "C" __global__ void reduce_dim(int op, Desc dst, Desc src, long long L, long long sd,
                                     long long n) {
  GRID_STRIDE(i, n) {
    long long od, os, unused;
    elem_offsets2(dst, dst, src, i, &od, &os, &unused);
    float acc = red_init(op);
    for (long long k = 0; k < L; k++) {
      float v = load_f(src.base, src.dtype, os + k * sd);
      acc = op == RED_SUM ? acc + v : red_max_nan(acc, v);
    }
    store_f(dst.base, dst.dtype, od, acc);
  }
}

// reduce_inner: one warp per output element, for reductions along a
// dimension of stride sd whose elements are close together (usually sd = 1).
extern "C" __global__ void reduce_inner(int op, Desc dst, Desc src, long long L, long long sd,
                                        long long n) {
  int lane = threadIdx.x & 31;
  long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long i = warp; i < n; i += nwarps) {
    long long od, os, unused;
    elem_offsets2(dst, dst, src, i, &od, &os, &unused);
    float acc = red_init(op);
    for (long long k = lane; k < L; k += 32) {
      float v = load_f(src.base, src.dtype, os + k * sd);
      acc = op == RED_SUM ? acc + v : red_max_nan(acc, v);
    }
    acc = warp_red(op, acc);
    if (lane == 0) store_f(dst.base, dst.dtype, od, acc);
  }
}

// Block-wide reduction through shared memory; every thread gets the result.
__device__ __forceinline__ float block_red(int op, float v, float* sh) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  v = warp_red(op, v);
  __syncthreads();
  if (lane == 0) sh[w] = v;
  __syncthreads();
  v = lane < nw ? sh[lane] : red_init(op);
  v = warp_red(op, v);
  return v;
}

#define ROW_VALS 16

// Row kernels: one block per row. `dst` and `src` are given with their last
// dimension set to size 1, so that row r's first element is found by the
// usual strided indexing; L is the row length, sdl/ssl the strides along it.
// Each thread keeps up to ROW_VALS elements in registers when
// L <= ROW_VALS * blockDim.x; longer rows are read again from memory.

template <typename T>
__device__ __forceinline__ void softmax_row(const Desc& dst, const Desc& src, long long L,
                                            long long sdl, long long ssl) {
  __shared__ float sh[32];
  long long row = blockIdx.x;
  long long od, os, unused;
  elem_offsets2(dst, dst, src, row, &od, &os, &unused);
  const T* s = (const T*)src.base + os;
  T* d = (T*)dst.base + od;
  bool cached = L <= (long long)ROW_VALS * blockDim.x;
  float v[ROW_VALS];
  float m = red_init(RED_MAX);
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      v[k] = j < L ? F<T>::to(s[j * ssl]) : red_init(RED_MAX);
      m = fmaxf(m, v[k]);
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x) m = fmaxf(m, F<T>::to(s[j * ssl]));
  }
  m = block_red(RED_MAX, m, sh);
  float sum = 0.0f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      v[k] = j < L ? expf(v[k] - m) : 0.0f;
      sum += v[k];
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x) sum += expf(F<T>::to(s[j * ssl]) - m);
  }
  sum = block_red(RED_SUM, sum, sh);
  float inv = 1.0f / sum;
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      if (j < L) d[j * sdl] = F<T>::from(v[k] * inv);
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x)
      d[j * sdl] = F<T>::from(expf(F<T>::to(s[j * ssl]) - m) * inv);
  }
}

extern "C" __global__ void softmax_f32(Desc dst, Desc src, long long L, long long sdl, long long ssl) {
  softmax_row<float>(dst, src, L, sdl, ssl);
}
extern "C" __global__ void softmax_f16(Desc dst, Desc src, long long L, long long sdl, long long ssl) {
  softmax_row<__half>(dst, src, L, sdl, ssl);
}
extern "C" __global__ void softmax_bf16(Desc dst, Desc src, long long L, long long sdl, long long ssl) {
  softmax_row<__nv_bfloat16>(dst, src, L, sdl, ssl);
}

// layernorm_row: y = (x - mean) / sqrt(var + eps) * gamma + beta with the
// biased variance, as torch.nn.functional.layer_norm. gamma and beta are 1-D
// of length L with strides sg and sb, in the same dtype as src.
template <typename T>
__device__ __forceinline__ void layernorm_row(const Desc& dst, const Desc& src, unsigned long long gamma,
                                              long long sg, unsigned long long beta, long long sb,
                                              float eps, long long L, long long sdl, long long ssl) {
  __shared__ float sh[32];
  long long row = blockIdx.x;
  long long od, os, unused;
  elem_offsets2(dst, dst, src, row, &od, &os, &unused);
  const T* s = (const T*)src.base + os;
  T* d = (T*)dst.base + od;
  const T* g = (const T*)gamma;
  const T* bt = (const T*)beta;
  bool cached = L <= (long long)ROW_VALS * blockDim.x;
  float v[ROW_VALS];
  float sum = 0.0f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      v[k] = j < L ? F<T>::to(s[j * ssl]) : 0.0f;
      sum += v[k];
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x) sum += F<T>::to(s[j * ssl]);
  }
  float mean = block_red(RED_SUM, sum, sh) / (float)L;
  float sq = 0.0f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      float c = j < L ? v[k] - mean : 0.0f;
      sq += c * c;
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x) {
      float c = F<T>::to(s[j * ssl]) - mean;
      sq += c * c;
    }
  }
  float rstd = rsqrtf(block_red(RED_SUM, sq, sh) / (float)L + eps);
  if (cached) {
#pragma unroll
    for (int k = 0; k < ROW_VALS; k++) {
      long long j = (long long)k * blockDim.x + threadIdx.x;
      if (j < L) d[j * sdl] = F<T>::from((v[k] - mean) * rstd * F<T>::to(g[j * sg]) + F<T>::to(bt[j * sb]));
    }
  } else {
    for (long long j = threadIdx.x; j < L; j += blockDim.x)
      d[j * sdl] = F<T>::from((F<T>::to(s[j * ssl]) - mean) * rstd * F<T>::to(g[j * sg]) +
                              F<T>::to(bt[j * sb]));
  }
}

#define LN_ARGS                                                                           \
  Desc dst, Desc src, unsigned long long gamma, long long sg, unsigned long long beta, \
      long long sb, float eps, long long L, long long sdl, long long ssl
extern "C" __global__ void layernorm_f32(LN_ARGS) {
  layernorm_row<float>(dst, src, gamma, sg, beta, sb, eps, L, sdl, ssl);
}
extern "C" __global__ void layernorm_f16(LN_ARGS) {
  layernorm_row<__half>(dst, src, gamma, sg, beta, sb, eps, L, sdl, ssl);
}
extern "C" __global__ void layernorm_bf16(LN_ARGS) {
  layernorm_row<__nv_bfloat16>(dst, src, gamma, sg, beta, sb, eps, L, sdl, ssl);
}

// Vectorised float32 row kernels: rows of L floats (L a multiple of 4) with
// unit stride along the row, rows rsd / rss floats apart, all 16-byte
// aligned. Each thread keeps ROW_VEC float4s of its row in registers, so a
// row of up to 16 * blockDim.x floats is read once and written once.
#define ROW_VEC 4

extern "C" __global__ void softmax_f32_vec(unsigned long long dst, unsigned long long src, long long L,
                                           long long rsd, long long rss) {
  __shared__ float sh[32];
  const float4* s = (const float4*)((const float*)src + (long long)blockIdx.x * rss);
  float4* d = (float4*)((float*)dst + (long long)blockIdx.x * rsd);
  const int nv = (int)(L / 4);
  const float ninf = -__int_as_float(0x7f800000);
  float4 v[ROW_VEC];
  float m = ninf;
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    int j = k * blockDim.x + threadIdx.x;
    v[k] = j < nv ? s[j] : make_float4(ninf, ninf, ninf, ninf);
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  }
  m = block_red(RED_MAX, m, sh);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    v[k].x = expf(v[k].x - m);
    v[k].y = expf(v[k].y - m);
    v[k].z = expf(v[k].z - m);
    v[k].w = expf(v[k].w - m);
    sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  sum = block_red(RED_SUM, sum, sh);
  float inv = 1.0f / sum;
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    int j = k * blockDim.x + threadIdx.x;
    if (j < nv) d[j] = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
  }
}

// layernorm_f32_vec also needs gamma and beta contiguous and 16-byte aligned.
extern "C" __global__ void layernorm_f32_vec(unsigned long long dst, unsigned long long src,
                                             unsigned long long gamma, unsigned long long beta,
                                             float eps, long long L, long long rsd, long long rss) {
  __shared__ float sh[32];
  const float4* s = (const float4*)((const float*)src + (long long)blockIdx.x * rss);
  float4* d = (float4*)((float*)dst + (long long)blockIdx.x * rsd);
  const float4* g = (const float4*)gamma;
  const float4* bt = (const float4*)beta;
  const int nv = (int)(L / 4);
  float4 v[ROW_VEC];
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    int j = k * blockDim.x + threadIdx.x;
    v[k] = j < nv ? s[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  float mean = block_red(RED_SUM, sum, sh) / (float)L;
  float sq = 0.0f;
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    int j = k * blockDim.x + threadIdx.x;
    if (j < nv) {
      float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, e = v[k].w - mean;
      sq += (a * a + b * b) + (c * c + e * e);
    }
  }
  float rstd = rsqrtf(block_red(RED_SUM, sq, sh) / (float)L + eps);
#pragma unroll
  for (int k = 0; k < ROW_VEC; k++) {
    int j = k * blockDim.x + threadIdx.x;
    if (j < nv) {
      float4 gg = g[j], bb = bt[j];
      d[j] = make_float4((v[k].x - mean) * rstd * gg.x + bb.x, (v[k].y - mean) * rstd * gg.y + bb.y,
                         (v[k].z - mean) * rstd * gg.z + bb.z, (v[k].w - mean) * rstd * gg.w + bb.w);
    }
  }
}
