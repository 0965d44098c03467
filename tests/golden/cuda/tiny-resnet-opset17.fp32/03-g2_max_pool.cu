
// group 2
__device__ __forceinline__ void g2_max_pool(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long i = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;
    if (i >= 1024LL) return;
    int o_rest = (int)(i);
    const int o3 = o_rest % 16; o_rest /= 16;
    const int o2 = o_rest % 8; o_rest /= 8;
    const int o1 = o_rest % 8; o_rest /= 8;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    float t[9];
    bool in[9];
#pragma unroll
    for (int k0 = 0; k0 < 3; ++k0) {
    const int x0 = o1 * 2 - 1 + k0 * 1;
#pragma unroll
    for (int k1 = 0; k1 < 3; ++k1) {
    const int x1 = o2 * 2 - 1 + k1 * 1;
    const int j = k0 * 3 + k1;
    in[j] = x0 >= 0 && x0 < 16 && x1 >= 0 && x1 < 16;
    t[j] = to_float(x[in[j] ? ((o0 * 16LL + x0) * 16LL + x1) * 16LL + o3 : 0LL]);
    }
    }
    float v = -__int_as_float(0x7f800000);
#pragma unroll
    for (int j = 0; j < 9; ++j)
      if (in[j]) v = fmax_nan(v, t[j]);
    out[i] = from_float<float>(v);
  }
}
