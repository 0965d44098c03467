// ---- group functions (shared by groups with the same code) ----

// group 0
__device__ __forceinline__ void g0_pad(int item, const float* __restrict__ x, float* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long t = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;  // eight channels
    if (t >= 1024LL) return;
    const long long i8 = t * 8;
    int s_rest = (int)(i8);
    const int s3 = s_rest % 8; s_rest /= 8;
    const int s2 = s_rest % 32; s_rest /= 32;
    const int s1 = s_rest % 32; s_rest /= 32;
    const int s0 = s_rest % 1; s_rest /= 1;
    (void)s_rest;
    float av[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int o0 = s0, o1 = j, o2 = s1, o3 = s2;
      (void)s3;
    const long long i0 = o0 - 0LL;
    const long long i1 = o1 - 0LL;
    const long long i2 = o2 - 0LL;
    const long long i3 = o3 - 0LL;
    float v = (i1 >= 0 && i1 < 3LL) ? to_float(x[(i1) * 1024LL + (i2) * 32LL + i3]) : 0.0f;
      av[j] = v;
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const long long i = i8 + j;
      float v = av[j];
      out[i] = from_float<float>(v);
    }
  }
}
