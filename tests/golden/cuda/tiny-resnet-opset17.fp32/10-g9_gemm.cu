
// group 9
__device__ __forceinline__ void g9_gemm(int item, const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long t = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;
    const long long u = t / 4;  // the unit; 4 lane(s) each
    const int lane = (int)(t % 4);
    const bool live = u < 10LL;  // every lane reaches the shuffles
    const long long i = u;  // the output
    float v = 0.0f;
    if (live) {
      const float* wr = w + i * 32LL;
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        const long long c = (long long)s * 4 + lane;
        const u32x4 wq = *reinterpret_cast<const u32x4*>(wr + c * 4);
        const u32x4 xq = *reinterpret_cast<const u32x4*>(x + c * 4);
        const float* wv = reinterpret_cast<const float*>(&wq);
        const float* xv = reinterpret_cast<const float*>(&xq);
#pragma unroll
        for (int j = 0; j < 4; ++j) v += to_float(wv[j]) * to_float(xv[j]);
      }
    }
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    if (!live) continue;
    int o_rest = (int)(i);
    const int o1 = o_rest % 10; o_rest /= 10;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    v += to_float(bias[i]);
    if (lane == 0) out[i] = from_float<float>(v);
  }
}

