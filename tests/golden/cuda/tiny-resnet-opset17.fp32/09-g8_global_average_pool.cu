
// group 8
__device__ __forceinline__ void g8_global_average_pool(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long i = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;
    if (i >= 32LL) return;
    int o_rest = (int)(i);
    const int o3 = o_rest % 1; o_rest /= 1;
    const int o2 = o_rest % 1; o_rest /= 1;
    const int o1 = o_rest % 32; o_rest /= 32;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    float v = 0.0f;
    const long long base = (o0 * 32LL + o1) * 16LL;
    for (long long k = 0; k < 16LL; ++k) v += to_float(x[base + k]);
    v *= 0.0625f;
    out[i] = from_float<float>(v);
  }
}
