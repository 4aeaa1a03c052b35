// matmul.cu: C = A @ B, batched over blockIdx.z, for any strides of the three
// operands. A tiled shared-memory kernel: 128x128 output tile per block of
// 256 threads, 8x8 outputs per thread, K in steps of 8. Float16 and bfloat16
// inputs are widened to float32 in shared memory and accumulate in float32
// (plain FFMA, never TF32), so the result matches a float64 reference to
// float32 rounding.
#include "common.cuh"

#define BM 128
#define BN 128
#define BK 8

template <typename T>
__device__ __forceinline__ void gemm(unsigned long long A, unsigned long long B, unsigned long long C,
                                     int cdt, long long M, long long N, long long K, long long asb,
                                     long long asm_, long long ask, long long bsb, long long bsk,
                                     long long bsn, long long csb, long long csm, long long csn) {
  __shared__ __align__(16) float As[BK][BM];
  __shared__ __align__(16) float Bs[BK][BN];
  const int t = threadIdx.x;
  const int tx = t % 16, ty = t / 16;
  const long long bz = blockIdx.z;
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
  const T* a = (const T*)A + bz * asb;
  const T* b = (const T*)B + bz * bsb;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;

  const bool aK = ask == 1;  // A's rows are contiguous along K
  const bool bN = bsn == 1;  // B's rows are contiguous along N

  for (long long k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      int m, k;
      if (aK) {
        m = t / 2;
        k = (t % 2) * 4 + i;
      } else {
        int idx = t + 256 * i;
        m = idx % BM;
        k = idx / BM;
      }
      long long gm = m0 + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? F<T>::to(a[gm * asm_ + gk * ask]) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
      int n, k;
      if (bN) {
        int idx = t + 256 * i;
        n = idx % BN;
        k = idx / BN;
      } else {
        n = t / 2;
        k = (t % 2) * 4 + i;
      }
      long long gn = n0 + n, gk = k0 + k;
      Bs[k][n] = (gn < N && gk < K) ? F<T>::to(b[gk * bsk + gn * bsn]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float4 a0 = *(const float4*)&As[k][ty * 4];
      float4 a1 = *(const float4*)&As[k][64 + ty * 4];
      float4 b0 = *(const float4*)&Bs[k][tx * 4];
      float4 b1 = *(const float4*)&Bs[k][64 + tx * 4];
      float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; i++) {
    long long gm = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (gm >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      long long gn = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
      if (gn < N) store_f(C, cdt, bz * csb + gm * csm + gn * csn, acc[i][j]);
    }
  }
}

#define MM_ARGS                                                                               \
  unsigned long long A, unsigned long long B, unsigned long long C, int cdt, long long M,     \
      long long N, long long K, long long asb, long long asm_, long long ask, long long bsb, \
      long long bsk, long long bsn, long long csb, long long csm, long long csn
#define MM_PASS A, B, C, cdt, M, N, K, asb, asm_, ask, bsb, bsk, bsn, csb, csm, csn

extern "C" __global__ void __launch_bounds__(256) matmul_f32(MM_ARGS) { gemm<float>(MM_PASS); }
extern "C" __global__ void __launch_bounds__(256) matmul_f16(MM_ARGS) { gemm<__half>(MM_PASS); }
extern "C" __global__ void __launch_bounds__(256) matmul_bf16(MM_ARGS) { gemm<__nv_bfloat16>(MM_PASS); }
