
// group 12
__device__ __forceinline__ void g12_mat_mul(int item, const half_t* __restrict__ A, const half_t* __restrict__ B, G3Epilogue epi, float* ws, unsigned int* cnt, const TensorMap* amap, const float2* __restrict__ rstats, const float* __restrict__ fold_u, const float* __restrict__ fold_c, const half_t* __restrict__ gamma, const half_t* __restrict__ beta, half_t* norm_out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmWg<64, 64, 64, 4, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = 0;
  int t = item;
  const int tn = t % 1; t /= 1;
  const int tm = t % 1;
  const long long b = t / 1;
    const long long a_off = 0;
    const long long b_off = 0;
  const int k0 = split * 64, k1 = min(64, k0 + 64);
  NormK<64, half_t, half_t> la{amap, rstats, fold_u, fold_c, 1e-12f, A, norm_out, gamma, beta};  // node 'node_layer_norm_2' (LayerNormalization, opset 20) folded into the weights
  BulkTileK<half_t> lb{B + b_off, 1};  // packed tile by tile
  epi.base = b * 1024LL;
  GemmWg<64, 64, 64, 4, 2, 4>::tile(16, 64, tm * 64, tn * 64, k0, k1, la, lb, epi, smem, (float*)nullptr, (unsigned int*)nullptr, 1, 0);
}
