
// groups 1, 9, 12, 20
__device__ __forceinline__ void g1_layer_normalization(int item, const half_t* __restrict__ x, half_t* __restrict__ out, const half_t* __restrict__ gamma, const half_t* __restrict__ beta) {
  const int row = item * (MONO_THREADS / 32) + threadIdx.x / 32;
  if (row >= 16) return;
  const auto out8 = [&](int row, int col, const float (&y)[8]) {
    float r[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float v = y[j];
    {
    const long long i = (long long)row * 64LL + col + j;
    }
      r[j] = v;
    }
    const long long i = (long long)row * 64LL + col;
    store8(out + (i), r);
  };
  layer_norm_row_v8(x, row, 64, gamma, beta, 1e-12f, out8);
}
