
// groups 11, 22
__device__ __forceinline__ void g11_mat_mul(int item, const half_t* __restrict__ A, const half_t* __restrict__ B, G8Epilogue epi, float* ws, unsigned int* cnt, const TensorMap* amap) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmWg<64, 32, 128, 4, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = 0;
  int t = item;
  const int tm = t % 1; t /= 1;
  const int tn = t % 2;
  const long long b = t / 2;
    const long long a_off = 0;
    const long long b_off = 0;
  const int k0 = split * 128, k1 = min(128, k0 + 128);
  TensorK<half_t> la{amap};  // through a tensor map (TMA unit)
  BulkTileK<half_t> lb{B + b_off, 1};  // packed tile by tile
  epi.base = b * 1024LL;
  GemmWg<64, 32, 128, 4, 2, 4>::tile(16, 64, tm * 64, tn * 32, k0, k1, la, lb, epi, smem, (float*)nullptr, (unsigned int*)nullptr, 1, 0);
}

