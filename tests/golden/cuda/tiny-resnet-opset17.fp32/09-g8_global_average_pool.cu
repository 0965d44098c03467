
// group 8
__device__ __forceinline__ void g8_global_average_pool(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long i = (((long long)item * 1 + e) * MONO_THREADS + threadIdx.x) >> 5;  // a warp per output
    const int lane = threadIdx.x & 31;
    if (i >= 32LL) return;
    int o_rest = (int)(i);
    const int o3 = o_rest % 1; o_rest /= 1;
    const int o2 = o_rest % 1; o_rest /= 1;
    const int o1 = o_rest % 32; o_rest /= 32;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    const long long base = i * 16LL;  // the plane of output i
    float v = 0.0f;
#pragma unroll 4
    for (long long k = lane; k < 16LL; k += 32) v += to_float(x[base + k]);
    v = warp_sum(v) * 0.0625f;
    if (lane == 0) out[i] = from_float<float>(v);
  }
}
