// variants.cu: the diagnostic behind issue 13 (memlab's contiguous copy and
// elementwise kernels against PyTorch on the H200). One program times, on
// 256 MiB operands, with the method of `memlab bench` (CUDA events around 5
// back-to-back runs after 3 warm-ups, median of 20 samples, bytes read +
// written):
//
//   - memlab's kernels exactly as memlab runs them, from PTX loaded with
//     cuModuleLoadData (so the driver JIT-compiles it for the GPU): the PTX of
//     before issue 13 (kernels/elementwise.ptx at commit 3c2113e, compute_80)
//     with its grid (min(ceil(nv/1024), 8*SMs) blocks of 256) and other grids,
//     to separate the grid from the code, and the committed PTX with its grid
//     (ceil(nv/256) blocks of 256);
//   - cudaMemcpyAsync device to device (what PyTorch's copy_ calls);
//   - templated candidates: three loop shapes (MODE), 1-8 vectors per thread
//     (U), cache hints (H), block sizes and grids.
//
// Every candidate is checked bit for bit against a scalar reference kernel
// (itself checked against the CPU) on a poisoned output before it is timed.
// Registers and resident blocks per SM of every kernel are printed.
//
// Build (CUDA 11.8 on the development machine, see NOTES.md; or nvcc on the GPU machine):
//   nvcc -O3 -std=c++17 -gencode arch=compute_80,code=compute_80 -o variants-jit80 variants.cu -lcuda
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -o variants-sm90 variants.cu -lcuda
// Run: ./variants-jit80 old-elementwise.ptx new-elementwise.ptx [out.csv [MODE]]
// MODE: none (the full sweep), "quick" (hint H0, U1-U4, 256-thread blocks
// except for the one-vector shape), "extra" (block sizes, resident blocks,
// L2 policies, operand sizes 128 MiB-4 GiB), "profile" (one launch of each
// shape, for ncu.sh).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static void ck(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    fprintf(stderr, "line %d: %s: %s\n", line, what, cudaGetErrorString(e));
    exit(1);
  }
}
static void ckd(CUresult e, const char* what, int line) {
  if (e != CUDA_SUCCESS) {
    const char* s = "?";
    cuGetErrorName(e, &s);
    fprintf(stderr, "line %d: %s: %s\n", line, what, s);
    exit(1);
  }
}
#define CK(x) ck((x), #x, __LINE__)
#define CKD(x) ckd((x), #x, __LINE__)

// ------------------------------------------------------------------ ops on 16-byte vectors

__device__ __forceinline__ float relu1(float x) { return x > 0.0f ? x : (x != x ? x : 0.0f); }

struct OpCopy {
  static constexpr int NIN = 1;
  __device__ static uint4 f(uint4 a, uint4) { return a; }
};
struct OpReluF32 {
  static constexpr int NIN = 1;
  __device__ static uint4 f(uint4 a, uint4) {
    float* e = (float*)&a;
#pragma unroll
    for (int k = 0; k < 4; k++) e[k] = relu1(e[k]);
    return a;
  }
};
struct OpReluBF16 {
  static constexpr int NIN = 1;
  __device__ static uint4 f(uint4 a, uint4) {
    __nv_bfloat16* e = (__nv_bfloat16*)&a;
#pragma unroll
    for (int k = 0; k < 8; k++) e[k] = __float2bfloat16_rn(relu1(__bfloat162float(e[k])));
    return a;
  }
};
struct OpAddF32 {
  static constexpr int NIN = 2;
  __device__ static uint4 f(uint4 a, uint4 b) {
    float* e = (float*)&a;
    const float* g = (const float*)&b;
#pragma unroll
    for (int k = 0; k < 4; k++) e[k] = e[k] + g[k];
    return a;
  }
};
struct OpAddBF16 {
  static constexpr int NIN = 2;
  __device__ static uint4 f(uint4 a, uint4 b) {
    __nv_bfloat16* e = (__nv_bfloat16*)&a;
    const __nv_bfloat16* g = (const __nv_bfloat16*)&b;
#pragma unroll
    for (int k = 0; k < 8; k++) e[k] = __float2bfloat16_rn(__bfloat162float(e[k]) + __bfloat162float(g[k]));
    return a;
  }
};

// ------------------------------------------------------------------ loads and stores with hints
// H0 plain; H1 ld.global.cs / st.global.cs; H2 ld.global.L2::256B / plain st;
// H3 ld.global.L2::256B / st.global.cs; H4 ld.global.nc.L1::no_allocate.L2::256B / plain st.
// H5 loads with an L2 evict_first policy, plain stores; H6 plain loads, stores
// evict_first; H7 loads evict_first, stores evict_last (createpolicy, sm_80+;
// H7 is no longer timed, see extraCands).
__device__ __forceinline__ unsigned long long policy_first() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long policy_last() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
template <int H>
__device__ __forceinline__ uint4 ld(const uint4* p) {
  uint4 r;
  if (H == 5 || H == 7) {
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p), "l"(policy_first()));
  } else if (H == 0 || H == 6) {
    r = *p;
  } else if (H == 1) {
    r = __ldcs(p);
  } else if (H == 2 || H == 3) {
    asm volatile("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  }
  return r;
}
template <int H>
__device__ __forceinline__ void st(uint4* p, uint4 v) {
  if (H == 1 || H == 3) {
    __stcs(p, v);
  } else if (H == 6 || H == 7) {
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w), "l"(H == 6 ? policy_first() : policy_last())
                 : "memory");
  } else {
    *p = v;
  }
}

// ------------------------------------------------------------------ candidate kernels
// MODE 0: grid-stride, the U vectors of a trip nth apart (memlab's shape before issue 13).
// MODE 1: one trip per thread, no loop: block k handles vectors [k*B*U, (k+1)*B*U),
//         thread t the vectors t, t+B, ... (PyTorch's shape).
// MODE 2: grid-stride over block chunks of B*U vectors laid out as in MODE 1.
template <class Op, int U, int H>
__device__ __forceinline__ void trip(uint4* d, const uint4* a, const uint4* b, long long nv,
                                     long long base, long long stride) {
  uint4 ra[U], rb[U];
  if (base + (U - 1) * stride < nv) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      ra[u] = ld<H>(a + base + u * stride);
      if (Op::NIN == 2) rb[u] = ld<H>(b + base + u * stride);
    }
#pragma unroll
    for (int u = 0; u < U; u++) st<H>(d + base + u * stride, Op::f(ra[u], rb[u]));
  } else {
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + u * stride;
      if (i < nv) {
        ra[u] = ld<H>(a + i);
        if (Op::NIN == 2) rb[u] = ld<H>(b + i);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long i = base + u * stride;
      if (i < nv) st<H>(d + i, Op::f(ra[u], rb[u]));
    }
  }
}

template <class Op, int MODE, int U, int H>
__global__ void cand(uint4* d, const uint4* a, const uint4* b, long long nv) {
  if (MODE == 1) {
    trip<Op, U, H>(d, a, b, nv, (long long)blockIdx.x * blockDim.x * U + threadIdx.x, blockDim.x);
  } else if (MODE == 2) {
    long long step = (long long)gridDim.x * blockDim.x * U;
    for (long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x; base < nv; base += step)
      trip<Op, U, H>(d, a, b, nv, base, blockDim.x);
  } else {
    long long nth = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x + threadIdx.x; base < nv; base += nth * U)
      trip<Op, U, H>(d, a, b, nv, base, nth);
  }
}

// ------------------------------------------------------------------ reference, init, compare

template <class Op>
__global__ void ref_kernel(uint4* d, const uint4* a, const uint4* b, long long nv) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x)
    d[i] = Op::f(a[i], Op::NIN == 2 ? b[i] : a[i]);
}

__device__ __forceinline__ unsigned long long mix(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
// init fills n 32-bit words with uniform [-1, 1) values: as float32 when bf == 0,
// else two bfloat16s per word.
__global__ void init_kernel(unsigned* p, long long n, unsigned long long seed, int bf) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long z = mix(seed * 0x100000001B3ULL + i);
    float u0 = (float)(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    float u1 = (float)((z >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    if (!bf) {
      ((float*)p)[i] = u0;
    } else {
      __nv_bfloat16 h0 = __float2bfloat16_rn(u0), h1 = __float2bfloat16_rn(u1);
      p[i] = (unsigned)*(unsigned short*)&h0 | ((unsigned)*(unsigned short*)&h1 << 16);
    }
  }
}
__global__ void diff_kernel(const unsigned* x, const unsigned* y, long long n, unsigned long long* bad) {
  unsigned long long c = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    c += x[i] != y[i];
  if (c) atomicAdd(bad, c);
}

// ------------------------------------------------------------------ host

struct Row {
  const char* name;  // bench key
  int op;            // 0 copy, 1 relu f32, 2 relu bf16, 3 add f32, 4 add bf16
  bool inplace;
};
static const Row rows[] = {
    {"copy", 0, false},      {"relu_f32", 1, false}, {"relu__f32", 1, true}, {"add_f32", 3, false},
    {"add__f32", 3, true},   {"relu_bf16", 2, false}, {"relu__bf16", 2, true}, {"add_bf16", 4, false},
    {"add__bf16", 4, true},
};
static int nin(int op) { return op >= 3 ? 2 : 1; }

typedef void (*KFn)(uint4*, const uint4*, const uint4*, long long);

struct Cand {
  std::string name;
  const void* fn;
  int mode, u, h;
};

template <class Op, int MODE, int U>
static void addH(std::vector<Cand>& v) {
  v.push_back({"", (const void*)cand<Op, MODE, U, 0>, MODE, U, 0});
  v.push_back({"", (const void*)cand<Op, MODE, U, 1>, MODE, U, 1});
  v.push_back({"", (const void*)cand<Op, MODE, U, 2>, MODE, U, 2});
  v.push_back({"", (const void*)cand<Op, MODE, U, 3>, MODE, U, 3});
  v.push_back({"", (const void*)cand<Op, MODE, U, 4>, MODE, U, 4});
}
template <class Op, int MODE>
static void addU(std::vector<Cand>& v) {
  addH<Op, MODE, 1>(v);
  addH<Op, MODE, 2>(v);
  addH<Op, MODE, 4>(v);
  addH<Op, MODE, 8>(v);
}
template <class Op>
static std::vector<Cand> extraCands() {
  std::vector<Cand> v;
  // The first entry is the reference (timed first and again last); the second,
  // the same kernel, is the block-size and resident-blocks sweep. H7
  // (evict_last stores) is left out: it leaves lines in L2 that inflate the
  // kernels timed after it (seen 2026-12-01: the reference after it read
  // 4260 GB/s against 4173 before).
  v.push_back({"", (const void*)cand<Op, 1, 1, 0>, 1, 1, 0});
  v.push_back({"", (const void*)cand<Op, 1, 1, 0>, 1, 1, 0});
  v.push_back({"", (const void*)cand<Op, 1, 2, 0>, 1, 2, 0});
  v.push_back({"", (const void*)cand<Op, 1, 1, 5>, 1, 1, 5});
  v.push_back({"", (const void*)cand<Op, 1, 1, 6>, 1, 1, 6});
  return v;
}
static std::vector<Cand> extraFor(int op) {
  switch (op) {
    case 0: return extraCands<OpCopy>();
    case 1: return extraCands<OpReluF32>();
    case 2: return extraCands<OpReluBF16>();
    case 3: return extraCands<OpAddF32>();
    default: return extraCands<OpAddBF16>();
  }
}
template <class Op>
static std::vector<Cand> cands() {
  std::vector<Cand> v;
  addU<Op, 0>(v);
  addU<Op, 1>(v);
  addU<Op, 2>(v);
  return v;
}
static std::vector<Cand> candsFor(int op) {
  switch (op) {
    case 0: return cands<OpCopy>();
    case 1: return cands<OpReluF32>();
    case 2: return cands<OpReluBF16>();
    case 3: return cands<OpAddF32>();
    default: return cands<OpAddBF16>();
  }
}
static const void* refFor(int op) {
  switch (op) {
    case 0: return (const void*)ref_kernel<OpCopy>;
    case 1: return (const void*)ref_kernel<OpReluF32>;
    case 2: return (const void*)ref_kernel<OpReluBF16>;
    case 3: return (const void*)ref_kernel<OpAddF32>;
    default: return (const void*)ref_kernel<OpAddBF16>;
  }
}

struct Stat {
  double med, lo, hi;  // GB/s: median, slowest, fastest sample
};

static int g_iters = 20, g_reps = 5;
static cudaEvent_t e0, e1;

template <class F>
static Stat timeit(F run, double bytes) {
  for (int i = 0; i < 3; i++) run();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < g_iters; i++) {
    CK(cudaEventRecord(e0));
    for (int r = 0; r < g_reps; r++) run();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms / 1e3 / g_reps);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  double med = g_iters % 2 ? t[g_iters / 2] : (t[g_iters / 2 - 1] + t[g_iters / 2]) / 2;
  return {bytes / med / 1e9, bytes / t.back() / 1e9, bytes / t.front() / 1e9};
}

// Buffers: A, B inputs; A0 pristine copy of A (in-place rows); D output; R reference.
static uint4 *A, *B, *A0, *D, *R;
static unsigned long long* dbad;
static long long NV;  // 16-byte vectors per operand
static int SMS;

static unsigned long long compare(const uint4* x) {
  CK(cudaMemset(dbad, 0, 8));
  diff_kernel<<<SMS * 8, 256>>>((const unsigned*)x, (const unsigned*)R, NV * 4, dbad);
  CK(cudaGetLastError());
  unsigned long long bad;
  CK(cudaMemcpy(&bad, dbad, 8, cudaMemcpyDeviceToHost));
  return bad;
}

// prepare sets up the check of one run: out-of-place rows poison D; in-place
// rows restore A from A0 (the run then writes A).
static void prepare(const Row& r) {
  if (r.inplace) {
    CK(cudaMemcpy(A, A0, NV * 16, cudaMemcpyDeviceToDevice));
  } else {
    CK(cudaMemset(D, 0xFF, NV * 16));
  }
}

static FILE* csv;

static void report(const Row& r, const char* variant, int regs, int occ, long long grid, int block, Stat s,
                   const char* check) {
  printf("%-11s %-34s regs %3d occ %2d grid %7lld x %4d  %7.0f GB/s  [%5.0f .. %5.0f]  %s\n", r.name, variant, regs, occ,
         grid, block, s.med, s.lo, s.hi, check);
  if (csv)
    fprintf(csv, "%s,%s,%d,%d,%lld,%d,%.1f,%.1f,%.1f,%s\n", r.name, variant, regs, occ, grid, block, s.med, s.lo, s.hi,
            check);
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s old.ptx new.ptx [out.csv] [quick]\n", argv[0]);
    return 2;
  }
  csv = argc > 3 ? fopen(argv[3], "w") : nullptr;
  bool quick = argc > 4;
  bool extra = argc > 4 && strcmp(argv[4], "extra") == 0;
  bool profile = argc > 4 && strcmp(argv[4], "profile") == 0;
  if (csv) fprintf(csv, "row,variant,regs,blocks_per_sm,grid,block,gbps_median,gbps_slowest,gbps_fastest,check\n");
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  SMS = p.multiProcessorCount;
  int drv;
  CK(cudaDriverGetVersion(&drv));
  printf("device %s, cc %d.%d, %d SMs, L2 %d MiB, driver CUDA %d, built with CUDA %d\n", p.name, p.major, p.minor, SMS,
         p.l2CacheSize >> 20, drv, CUDART_VERSION);
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  // The PTX modules (old: as shipped before issue 13; new: this change), JIT-compiled by the driver.
  struct Mod {
    const char* label;
    CUfunction copy, un[2], bin[2];  // un/bin: f32, bf16
  } mods[2] = {{"old PTX"}, {"new PTX"}};
  for (int m = 0; m < 2; m++) {
    FILE* f = fopen(argv[1 + m], "rb");
    if (!f) {
      perror(argv[1 + m]);
      return 1;
    }
    std::string ptx;
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) ptx.append(buf, k);
    fclose(f);
    CUmodule mod;
    CKD(cuModuleLoadData(&mod, ptx.c_str()));
    CKD(cuModuleGetFunction(&mods[m].copy, mod, "copy_contig_vec16"));
    CKD(cuModuleGetFunction(&mods[m].un[0], mod, "unary_contig_f32"));
    CKD(cuModuleGetFunction(&mods[m].un[1], mod, "unary_contig_bf16"));
    CKD(cuModuleGetFunction(&mods[m].bin[0], mod, "binary_contig_f32"));
    CKD(cuModuleGetFunction(&mods[m].bin[1], mod, "binary_contig_bf16"));
  }

  const size_t bytes = 256ull << 20;
  NV = bytes / 16;
  CK(cudaMalloc(&A, bytes));
  CK(cudaMalloc(&B, bytes));
  CK(cudaMalloc(&A0, bytes));
  CK(cudaMalloc(&D, bytes));
  CK(cudaMalloc(&R, bytes));
  CK(cudaMalloc(&dbad, 8));

  // Check the reference kernels against the CPU on the first and last 64 Ki vectors.
  for (int op = 0; op < 5; op++) {
    int bf = op == 2 || op == 4;
    init_kernel<<<SMS * 8, 256>>>((unsigned*)A, NV * 4, 1, bf);
    init_kernel<<<SMS * 8, 256>>>((unsigned*)B, NV * 4, 2, bf);
    void* args[] = {&R, &A, &B, &NV};
    CK(cudaLaunchKernel(refFor(op), dim3(SMS * 8), dim3(256), args, 0, 0));
    CK(cudaDeviceSynchronize());
    const long long m = 65536 * 4;  // words
    std::vector<unsigned> ha(m), hb(m), hr(m);
    for (long long off : {0LL, NV * 4 - m}) {
      CK(cudaMemcpy(ha.data(), (unsigned*)A + off, m * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hb.data(), (unsigned*)B + off, m * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hr.data(), (unsigned*)R + off, m * 4, cudaMemcpyDeviceToHost));
      long long bad = 0;
      for (long long i = 0; i < m; i++) {
        unsigned want;
        if (op == 0) {
          want = ha[i];
        } else if (!bf) {
          float x, y, z;
          memcpy(&x, &ha[i], 4);
          memcpy(&y, &hb[i], 4);
          z = op == 1 ? (x > 0 ? x : (x != x ? x : 0.0f)) : x + y;
          memcpy(&want, &z, 4);
        } else {
          want = 0;
          for (int h = 0; h < 2; h++) {
            unsigned xa = (ha[i] >> (16 * h)) & 0xFFFF, xb = (hb[i] >> (16 * h)) & 0xFFFF;
            unsigned ua = xa << 16, ub = xb << 16;
            float x, y, z;
            memcpy(&x, &ua, 4);
            memcpy(&y, &ub, 4);
            z = op == 2 ? (x > 0 ? x : (x != x ? x : 0.0f)) : x + y;
            unsigned uz;
            memcpy(&uz, &z, 4);
            // round to nearest even (no NaNs here)
            unsigned r = (uz + 0x7FFF + ((uz >> 16) & 1)) >> 16;
            want |= (r & 0xFFFF) << (16 * h);
          }
        }
        bad += want != hr[i];
      }
      if (bad) {
        fprintf(stderr, "reference kernel of op %d differs from the CPU in %lld words\n", op, bad);
        return 1;
      }
    }
  }
  printf("reference kernels match the CPU\n");

  if (profile) {
    // One launch of each kernel shape for ncu (copy and add f32 rows), after a
    // warm-up copy: the old PTX with the old grid and with nv/1024 blocks, the
    // new PTX with its grid, and two persistent one-vector-per-trip
    // candidates (M0 and M2 with one wave).
    long long nvv = NV, n = NV * 4;
    int opv = 0;
    unsigned long long pd = (unsigned long long)D, pa = (unsigned long long)A, pb = (unsigned long long)B;
    for (int i = 0; i < 200; i++) CK(cudaMemcpyAsync(D, A, NV * 16, cudaMemcpyDeviceToDevice));
    for (int op : {0, 3}) {
      for (int m = 0; m < 2; m++) {
        CUfunction fn = op == 0 ? mods[m].copy : mods[m].bin[0];
        std::vector<long long> grids;
        if (m == 0) grids = {std::min<long long>((nvv + 1023) / 1024, SMS * 8LL), (nvv + 1023) / 1024};
        else grids = {(nvv + 255) / 256};
        for (long long g : grids) {
          if (op == 0) {
            void* args[] = {&pd, &pa, &nvv};
            CKD(cuLaunchKernel(fn, g, 1, 1, 256, 1, 1, 0, 0, args, 0));
          } else {
            void* args[] = {&opv, &pd, &pa, &pb, &n};
            CKD(cuLaunchKernel(fn, g, 1, 1, 256, 1, 1, 0, 0, args, 0));
          }
        }
      }
      const void* c0 = op == 0 ? (const void*)cand<OpCopy, 0, 1, 0> : (const void*)cand<OpAddF32, 0, 1, 0>;
      const void* c2 = op == 0 ? (const void*)cand<OpCopy, 2, 1, 0> : (const void*)cand<OpAddF32, 2, 1, 0>;
      for (const void* c : {c0, c2}) {
        int occ;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c, 256, 0));
        uint4* d = D;
        void* args[] = {&d, &A, &B, &NV};
        CK(cudaLaunchKernel(c, dim3(occ * SMS), dim3(256), args, 0, 0));
      }
      CK(cudaDeviceSynchronize());
    }
    printf("profile launches done\n");
    return 0;
  }

  for (const Row& r : rows) {
    int bf = r.op == 2 || r.op == 4;
    init_kernel<<<SMS * 8, 256>>>((unsigned*)A, NV * 4, 1, bf);
    init_kernel<<<SMS * 8, 256>>>((unsigned*)B, NV * 4, 2, bf);
    CK(cudaMemcpy(A0, A, bytes, cudaMemcpyDeviceToDevice));
    {
      void* args[] = {&R, &A, &B, &NV};
      CK(cudaLaunchKernel(refFor(r.op), dim3(SMS * 8), dim3(256), args, 0, 0));
      CK(cudaDeviceSynchronize());
    }
    uint4* dst = r.inplace ? A : D;
    double moved = (double)bytes * (nin(r.op) + 1);

    // memcpy (copy row only)
    if (r.op == 0) {
      prepare(r);
      CK(cudaMemcpyAsync(D, A, bytes, cudaMemcpyDeviceToDevice));
      unsigned long long bad = compare(D);
      Stat s = timeit([&] { CK(cudaMemcpyAsync(D, A, bytes, cudaMemcpyDeviceToDevice)); }, moved);
      report(r, "cudaMemcpyAsync", 0, 0, 0, 0, s, bad ? "BAD" : "ok");
    }

    // The PTX kernels: the old ones with the old memlab grid and others, the
    // new ones with the new memlab grid (one vector per thread).
    for (int m = 0; m < 2; m++) {
      const Mod& md = mods[m];
      CUfunction fn = r.op == 0 ? md.copy : (r.op <= 2 ? md.un[r.op - 1] : md.bin[r.op - 3]);
      int regs;
      CKD(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
      int occ;
      CKD(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, 256, 0));
      int opv = 0;  // OP_RELU / OP_ADD
      long long n = r.op == 0 ? NV : NV * (bf ? 8 : 4);
      long long nvv = NV;
      float alpha = 0;
      unsigned long long pd = (unsigned long long)dst, pa = (unsigned long long)A, pb = (unsigned long long)B;
      struct G {
        std::string name;
        long long grid;
        bool gaps;
      };
      std::vector<G> grids;
      if (m == 0 && extra) {
        grids = {{"old PTX; old memlab grid 8/SM", std::min<long long>((nvv + 1023) / 1024, SMS * 8LL), false}};
      } else if (m == 0) {
        grids = {{"old PTX; old memlab grid 8/SM", std::min<long long>((nvv + 1023) / 1024, SMS * 8LL), true},
                 {"old PTX; grid = occupancy", (long long)occ * SMS, false},
                 {"old PTX; grid 2x occupancy", 2LL * occ * SMS, false},
                 {"old PTX; grid 32/SM", 32LL * SMS, false},
                 {"old PTX; grid nv/1024 (no loop)", (nvv + 1023) / 1024, false}};
      } else {
        grids = {{"new PTX; new memlab grid nv/256", (nvv + 255) / 256, true}};
      }
      for (auto& g : grids) {
        auto launch = [&] {
          if (r.op == 0) {
            void* args[] = {&pd, &pa, &nvv};
            CKD(cuLaunchKernel(fn, g.grid, 1, 1, 256, 1, 1, 0, 0, args, 0));
          } else if (r.op <= 2) {
            void* args[] = {&opv, &pd, &pa, &alpha, &n};
            CKD(cuLaunchKernel(fn, g.grid, 1, 1, 256, 1, 1, 0, 0, args, 0));
          } else {
            void* args[] = {&opv, &pd, &pa, &pb, &n};
            CKD(cuLaunchKernel(fn, g.grid, 1, 1, 256, 1, 1, 0, 0, args, 0));
          }
        };
        prepare(r);
        launch();
        CK(cudaDeviceSynchronize());
        unsigned long long bad = compare(dst);
        Stat s = timeit(launch, moved);
        report(r, g.name.c_str(), regs, occ, g.grid, 256, s, bad ? "BAD" : "ok");
        if (g.gaps) {
          // Launch gaps: the same launches timed 50 to a pair of events instead of 5.
          g_reps = 50;
          Stat s50 = timeit(launch, moved);
          g_reps = 5;
          report(r, (g.name + "; 50 runs/sample").c_str(), regs, occ, g.grid, 256, s50, "ok");
        }
      }
    }

    if (extra) {
      // Block sizes, resident blocks per SM (limited with dynamic shared
      // memory), L2 eviction-policy hints; the reference shape (M1 U1 H0 B256,
      // the committed kernels' shape) first and last to show the drift.
      std::vector<Cand> ec = extraFor(r.op);
      ec.push_back(ec[0]);
      for (size_t ci = 0; ci < ec.size(); ci++) {
        Cand& c = ec[ci];
        bool ref = ci == 0 || ci + 1 == ec.size();
        bool sweep = ci == 1;
        std::vector<int> bss = {256};
        if (sweep) bss = {64, 128, 256, 512, 1024};
        std::vector<int> ks = {0};
        if (sweep) ks = {0, 2, 3, 4, 5, 6, 7};
        if (c.u == 2) ks = {0, 2, 3, 4, 6};
        for (int bs : bss) {
          for (int kk : ks) {
            if (kk && bs != 256) continue;
            if (sweep && !kk && bs == 256) continue;  // that is the reference
            int smem = 0, occ = 0;
            CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, p.sharedMemPerBlockOptin));
            if (kk) {
              for (smem = std::min<int>(p.sharedMemPerMultiprocessor / kk, p.sharedMemPerBlockOptin); smem > 0;
                   smem -= 1024) {
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.fn, bs, smem));
                if (occ >= kk) break;
              }
              if (occ != kk) continue;
            } else {
              CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.fn, bs, 0));
            }
            if (occ == 0) continue;
            cudaFuncAttributes fa;
            CK(cudaFuncGetAttributes(&fa, c.fn));
            long long grid = (NV + (long long)bs * c.u - 1) / ((long long)bs * c.u);
            char name[96];
            snprintf(name, sizeof name, "M%d U%d H%d B%d%s%s", c.mode, c.u, c.h, bs, kk ? " smem-limited" : "",
                     ref ? " (reference)" : "");
            uint4* pd = dst;
            auto launch = [&] {
              void* args[] = {&pd, &A, &B, &NV};
              CK(cudaLaunchKernel(c.fn, dim3((unsigned)grid), dim3(bs), args, smem, 0));
            };
            prepare(r);
            launch();
            CK(cudaDeviceSynchronize());
            unsigned long long bad = compare(dst);
            Stat st = timeit(launch, moved);
            report(r, name, fa.numRegs, occ, grid, bs, st, bad ? "BAD" : "ok");
          }
        }
      }
      continue;
    }

    // Candidates.
    for (Cand& c : candsFor(r.op)) {
      if (quick && (c.h != 0 || c.u == 8)) continue;
      cudaFuncAttributes fa;
      CK(cudaFuncGetAttributes(&fa, c.fn));
      int blocks[] = {128, 256, 512};
      for (int bs : blocks) {
        if (c.mode != 1 && bs == 128) continue;
        if (quick && bs != 256 && !(c.mode == 1 && c.u == 1)) continue;
        int occ;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.fn, bs, 0));
        if (occ == 0) continue;  // too many registers for this block size
        long long need = (NV + (long long)bs * c.u - 1) / ((long long)bs * c.u);
        std::vector<std::pair<std::string, long long>> gs;
        if (c.mode == 1) {
          gs.push_back({"", need});
        } else {
          gs.push_back({" g=occ", std::min<long long>(need, (long long)occ * SMS)});
          gs.push_back({" g=4occ", std::min<long long>(need, 4LL * occ * SMS)});
        }
        for (auto& g : gs) {
          char name[96];
          snprintf(name, sizeof name, "M%d U%d H%d B%d%s", c.mode, c.u, c.h, bs, g.first.c_str());
          long long grid = g.second;
          uint4* pd = dst;
          auto launch = [&] {
            void* args[] = {&pd, &A, &B, &NV};
            CK(cudaLaunchKernel(c.fn, dim3((unsigned)grid), dim3(bs), args, 0, 0));
          };
          prepare(r);
          launch();
          CK(cudaDeviceSynchronize());
          unsigned long long bad = compare(dst);
          Stat s = timeit(launch, moved);
          report(r, name, fa.numRegs, occ, grid, bs, s, bad ? "BAD" : "ok");
        }
      }
    }
  }
  if (extra) {
    // Per-kernel fixed cost: the committed kernels' shape (M1 U1 H0 B256) on
    // 128 MiB to 4 GiB operands (no check: the same kernel was checked above).
    CK(cudaFree(A0));
    CK(cudaFree(R));
    const size_t big = 4ull << 30;
    uint4 *X, *Y, *Z;
    CK(cudaMalloc(&X, big));
    CK(cudaMalloc(&Y, big));
    CK(cudaMalloc(&Z, big));
    init_kernel<<<SMS * 8, 256>>>((unsigned*)X, big / 4, 1, 0);
    init_kernel<<<SMS * 8, 256>>>((unsigned*)Y, big / 4, 2, 0);
    CK(cudaDeviceSynchronize());
    for (int op : {0, 3}) {
      const void* fn = op == 0 ? (const void*)cand<OpCopy, 1, 1, 0> : (const void*)cand<OpAddF32, 1, 1, 0>;
      for (size_t sz : {128ull << 20, 256ull << 20, 1ull << 30, 4ull << 30}) {
        long long nv = sz / 16;
        long long grid = (nv + 255) / 256;
        auto launch = [&] {
          void* args[] = {&Z, &X, &Y, &nv};
          CK(cudaLaunchKernel(fn, dim3((unsigned)grid), dim3(256), args, 0, 0));
        };
        Stat st = timeit(launch, (double)sz * (op == 0 ? 2 : 3));
        Row rr = {op == 0 ? "copy" : "add_f32", op, false};
        char name[64];
        snprintf(name, sizeof name, "size %llu MiB M1 U1 H0 B256", (unsigned long long)(sz >> 20));
        report(rr, name, 0, 8, grid, 256, st, "-");
      }
    }
  }
  if (csv) fclose(csv);
  return 0;
}
