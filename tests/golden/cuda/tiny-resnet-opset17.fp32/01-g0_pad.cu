// ---- group functions (shared by groups with the same code) ----

// group 0
__device__ __forceinline__ void g0_pad(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long i = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;
    if (i >= 8192LL) return;
    int o_rest = (int)(i);
    const int o3 = o_rest % 32; o_rest /= 32;
    const int o2 = o_rest % 32; o_rest /= 32;
    const int o1 = o_rest % 8; o_rest /= 8;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    const long long i0 = o0 - 0LL;
    const long long i1 = o1 - 0LL;
    const long long i2 = o2 - 0LL;
    const long long i3 = o3 - 0LL;
    float v = (i1 >= 0 && i1 < 3LL) ? to_float(x[(i1) * 1024LL + (i2) * 32LL + i3]) : 0.0f;
    int e0__rest = (int)(i);
    const int e0_3 = e0__rest % 32; e0__rest /= 32;
    const int e0_2 = e0__rest % 32; e0__rest /= 32;
    const int e0_1 = e0__rest % 8; e0__rest /= 8;
    const int e0_0 = e0__rest % 1; e0__rest /= 1;
    (void)e0__rest;
    // /stem/stem.0/Conv.nhwc.pad.y.nhwc_t: stored transposed
    out[(e0_2) * 256LL + (e0_3) * 8LL + e0_1] = from_float<float>(v);
  }
}
