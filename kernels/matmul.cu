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

// ---------------------------------------------------------------- tensor cores
// Float16 / bfloat16 inputs on tensor cores (mma.sync through nvcuda::wmma,
// sm_80 and later), float32 accumulation: 128x128 output tile per block of
// 8 warps (2 x 4), each warp 64x32 as 4x2 fragments of 16x16, K in steps of
// 32. Operands with unit stride along K (A) or N (B) and 16-byte alignment
// are loaded 8 elements at a time; other layouts element by element.
#include <mma.h>

#define TBM 128
#define TBN 128
#define TBK 32
#define APAD 8
#define BPAD 8

template <typename T>
__device__ __forceinline__ void gemm_tc(unsigned long long A, unsigned long long B, unsigned long long C,
                                        int cdt, long long M, long long N, long long K, long long asb,
                                        long long asm_, long long ask, long long bsb, long long bsk,
                                        long long bsn, long long csb, long long csm, long long csn,
                                        int avec, int bvec) {
  using namespace nvcuda;
  __shared__ __align__(32) T As[TBM][TBK + APAD];
  __shared__ __align__(32) T Bs[TBK][TBN + BPAD];
  __shared__ __align__(32) float Cs[8][16][16];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm = warp / 4, wn = warp % 4;  // warp tile: rows wm*64, cols wn*32
  const long long bz = blockIdx.z;
  const long long m0 = (long long)blockIdx.y * TBM, n0 = (long long)blockIdx.x * TBN;
  const T* a = (const T*)A + bz * asb;
  const T* b = (const T*)B + bz * bsb;
  const T zero = F<T>::from(0.0f);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

  for (long long k0 = 0; k0 < K; k0 += TBK) {
    // A tile: 128 x 32.
    if (avec) {
#pragma unroll
      for (int i = 0; i < 2; i++) {
        int idx = t + 256 * i;  // 512 vectors of 8
        int m = idx / 4, kv = (idx % 4) * 8;
        long long gm = m0 + m, gk = k0 + kv;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (gm < M && gk < K) v = *(const uint4*)(a + gm * asm_ + gk);
        *(uint4*)&As[m][kv] = v;
      }
    } else {
      for (int i = 0; i < 16; i++) {
        int idx = t + 256 * i;
        int m, k;
        if (ask == 1) {
          m = idx / TBK;
          k = idx % TBK;
        } else {
          m = idx % TBM;
          k = idx / TBM;
        }
        long long gm = m0 + m, gk = k0 + k;
        As[m][k] = (gm < M && gk < K) ? a[gm * asm_ + gk * ask] : zero;
      }
    }
    // B tile: 32 x 128.
    if (bvec) {
#pragma unroll
      for (int i = 0; i < 2; i++) {
        int idx = t + 256 * i;
        int k = idx / 16, nv = (idx % 16) * 8;
        long long gk = k0 + k, gn = n0 + nv;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (gk < K && gn < N) v = *(const uint4*)(b + gk * bsk + gn);
        *(uint4*)&Bs[k][nv] = v;
      }
    } else {
      for (int i = 0; i < 16; i++) {
        int idx = t + 256 * i;
        int n, k;
        if (bsn == 1) {
          n = idx % TBN;
          k = idx / TBN;
        } else {
          k = idx % TBK;
          n = idx / TBK;
        }
        long long gk = k0 + k, gn = n0 + n;
        Bs[k][n] = (gk < K && gn < N) ? b[gk * bsk + gn * bsn] : zero;
      }
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 4; i++) wmma::load_matrix_sync(fa[i], &As[wm * 64 + i * 16][kk], TBK + APAD);
#pragma unroll
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &Bs[kk][wn * 32 + j * 16], TBN + BPAD);
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Epilogue: each warp stages one 16x16 fragment at a time in shared memory
  // and writes it with dst's strides, dtype and bounds.
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) {
      wmma::store_matrix_sync(&Cs[warp][0][0], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        int r = e / 16, c = e % 16;
        long long gm = m0 + wm * 64 + i * 16 + r, gn = n0 + wn * 32 + j * 16 + c;
        if (gm < M && gn < N) store_f(C, cdt, bz * csb + gm * csm + gn * csn, Cs[warp][r][c]);
      }
      __syncwarp();
    }
}

#define TC_ARGS MM_ARGS, int avec, int bvec
#define TC_PASS MM_PASS, avec, bvec
extern "C" __global__ void __launch_bounds__(256, 2) matmul_tc_bf16(TC_ARGS) { gemm_tc<__nv_bfloat16>(TC_PASS); }
extern "C" __global__ void __launch_bounds__(256, 2) matmul_tc_f16(TC_ARGS) { gemm_tc<__half>(TC_PASS); }
