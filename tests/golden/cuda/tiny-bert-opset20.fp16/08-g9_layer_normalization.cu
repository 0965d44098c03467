
// groups 9, 12, 20, 23
__device__ __forceinline__ void g9_layer_normalization(int item, const half_t* __restrict__ x, half_t* __restrict__ out, const half_t* __restrict__ gamma, const half_t* __restrict__ beta, unsigned int* rows_done) {
  {  // the rows' GEMM tiles, in this stage: group 8
    const int t = item * 8 / 64;
    rows_ready_wait(rows_done + t, 2u, (unsigned int)((min(64, 16 - t * 64) + 7) / 8));
  }
  const int row = item * (MONO_THREADS / 32) + threadIdx.x / 32;
  if (row >= 16) return;
  const RowIn_h in{x, 64};
  const auto store = [&](int row, int col, float v) {
    const long long i = (long long)row * 64LL + col;
    out[i] = from_float<half_t>(v);
  };
  layer_norm_row_f(in, row, 64, gamma, beta, 1e-12f, store);
}
