
// groups 5, 16
__device__ __forceinline__ void g5_mat_mul(int item, const half_t* __restrict__ q, const half_t* __restrict__ k_in, const half_t* __restrict__ v_in, half_t* __restrict__ out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  using FA = FlashAttention<16, 1, 1>;
  static_assert(FA::kSmemBytes <= MONO_SMEM_BYTES, "attention item does not fit the context");
  const long long b = item / 1;
  const int q0 = (int)(item % 1) * 16, nq = min(16, 16 - q0);
    int bb_rest = (int)(b);
    const int bb1 = bb_rest % 4; bb_rest /= 4;
    const int bb0 = bb_rest % 1; bb_rest /= 1;
    (void)bb_rest;
  const auto s_fn = [&](int r, int c, float v) {
    const long long i = b * 256LL + (long long)r * 16 + c;
    return v;
  };
  const auto p_fn = [&](int r, int c, float v) {
    const long long i = b * 256LL + (long long)r * 16 + c;
    v = isnan(v) ? 0.0f : v;  // node_Where_86 (NaN guard)
    return v;
  };
  const auto o_fn = [&](int r, int c, float v) {
    const long long i = b * 256LL + (long long)r * 16 + c;
    int e0__rest = (int)(i);
    const int e0_3 = e0__rest % 16; e0__rest /= 16;
    const int e0_2 = e0__rest % 16; e0__rest /= 16;
    const int e0_1 = e0__rest % 4; e0__rest /= 4;
    const int e0_0 = e0__rest % 1; e0__rest /= 1;
    (void)e0__rest;
    // node_transpose_3: stored transposed
    out[(e0_2) * 64LL + (e0_1) * 16LL + e0_3] = from_float<half_t>(v);
  };
  FA::item(q + (bb1) * 256LL, k_in + (bb1) * 256LL, v_in + (bb1) * 256LL, q0, nq, 16, s_fn, p_fn, o_fn, smem);
}
