// ---- group functions (shared by groups with the same code) ----

// group 0
__device__ __forceinline__ void g0_gather(int item, const long long* __restrict__ indices, const half_t* __restrict__ x, const half_t* __restrict__ add1_in1, const half_t* __restrict__ add2_in1, half_t* __restrict__ out) {
  for (int e = 0; e < 1; ++e) {
    const long long i = ((long long)item * 1 + e) * MONO_THREADS + threadIdx.x;
    if (i >= 1024LL) return;
    int o_rest = (int)(i);
    const int o2 = o_rest % 64; o_rest /= 64;
    const int o1 = o_rest % 16; o_rest /= 16;
    const int o0 = o_rest % 1; o_rest /= 1;
    (void)o_rest;
    long long g = (long long)indices[o1];
    if (g < 0) g += 1000LL;
    g = g < 0 ? 0 : (g >= 1000LL ? 999LL : g);  // clamp: never read outside
    float v = to_float(x[(g) * 64LL + o2]);
    int e0__rest = (int)(i);
    const int e0_2 = e0__rest % 64; e0__rest /= 64;
    const int e0_1 = e0__rest % 16; e0__rest /= 16;
    const int e0_0 = e0__rest % 1; e0__rest /= 1;
    (void)e0__rest;
    v = (v + to_float(add1_in1[e0_1 * 64LL + e0_2]));  // node_add
    v = (v + to_float(add2_in1[e0_1 * 64LL + e0_2]));  // node_add_1
    out[i] = from_float<half_t>(v);
  }
}
