// embedding.cu: rows of a 2-D weight gathered by integer indices.
#include "common.cuh"

// embedding_rows: for each of the n indices (idx, decomposed over its own
// shape), copies row idx[i] of weight (V rows, D columns, strides swr, swc)
// into dst, whose first elements of each output row are found by indexing
// dst (given with its last dimension set to size 1) by i; sdc is dst's stride
// along the last dimension. One block per index. An index outside [0, V)
// sets memlab_error and leaves its row untouched.
extern "C" __global__ void embedding_rows(Desc dst, long long sdc, Desc idx, unsigned long long weight,
                                          long long V, long long D, long long swr, long long swc,
                                          long long n) {
  for (long long i = blockIdx.x; i < n; i += gridDim.x) {
    long long oi = elem_offset(idx, i);
    long long r = idx.dtype == DT_I64 ? ((const long long*)idx.base)[oi]
                                      : (long long)((const int*)idx.base)[oi];
    if (r < 0 || r >= V) {
      if (threadIdx.x == 0) atomicExch(&memlab_error, 1);
      continue;
    }
    long long od = elem_offset(dst, i);
    int sz = dt_size(dst.dtype);
    for (long long c = threadIdx.x; c < D; c += blockDim.x) {
      long long ws = r * swr + c * swc, ds = od + c * sdc;
      switch (sz) {
        case 1: ((unsigned char*)dst.base)[ds] = ((const unsigned char*)weight)[ws]; break;
        case 2: ((unsigned short*)dst.base)[ds] = ((const unsigned short*)weight)[ws]; break;
        case 4: ((unsigned int*)dst.base)[ds] = ((const unsigned int*)weight)[ws]; break;
        default: ((unsigned long long*)dst.base)[ds] = ((const unsigned long long*)weight)[ws]; break;
      }
    }
  }
}
