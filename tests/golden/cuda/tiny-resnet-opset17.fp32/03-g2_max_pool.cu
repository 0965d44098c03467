
// group 2
__device__ __forceinline__ void g2_max_pool(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long t = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;  // eight channels
    if (t >= 128LL) return;
    const long long i8 = t * 8;
    int o_rest = (int)(i8);
    const int o3 = o_rest % 16; o_rest /= 16;
    const int o2 = o_rest % 8; o_rest /= 8;
    const int o1 = o_rest % 8; o_rest /= 8;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    float av[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) av[j] = -__int_as_float(0x7f800000);
    bool in[9];
#pragma unroll
    for (int k0 = 0; k0 < 3; ++k0) {
    const int x0 = o1 * 2 - 1 + k0 * 1;
#pragma unroll
    for (int k1 = 0; k1 < 3; ++k1) {
    const int x1 = o2 * 2 - 1 + k1 * 1;
    const int w = k0 * 3 + k1;
    in[w] = x0 >= 0 && x0 < 16 && x1 >= 0 && x1 < 16;
#pragma unroll
    for (int j = 0; j < 8; ++j) if (in[w]) av[j] = fmax_nan(av[j], to_float(x[(in[w] ? ((o0 * 16LL + x0) * 16LL + x1) * 16LL + o3 : 0LL) + j]));
    }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const long long i = i8 + j;
      float v = av[j];
      out[i] = from_float<float>(v);
    }
  }
}
