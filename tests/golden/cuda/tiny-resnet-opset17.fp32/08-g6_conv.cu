
struct ConvNhwc_1x4x4x32_k3x3_s1x1_p1x1_d1x1_o4x4 {  // Im2colK's geometry
  static constexpr int H = 4, W = 4, C = 32, KW = 3;
  static constexpr int SH = 1, SW = 1, PH = 1, PW = 1, DH = 1, DW = 1;
  static constexpr int OH = 4, OW = 4, P = 16, K = 288;
};

struct G6Epilogue {
  const float* a;
  const float* b;
  const float* bias;
  float* out;
  const float* add1_in1;
  long long base;
  struct In { float x[2]; };
  template <bool L, bool S = true>
  __device__ __forceinline__ float run(int m, int n, float v, In& in) const {
    const long long i = base + (long long)m * 32LL + n;
    v += (L ? (in.x[0] = to_float(bias[n])) : in.x[0]);  // bias
    int e0__rest = (int)(i);
    const int e0_3 = e0__rest % 32; e0__rest /= 32;
    const int e0_2 = e0__rest % 4; e0__rest /= 4;
    const int e0_1 = e0__rest % 4; e0__rest /= 4;
    const int e0_0 = e0__rest % 1; e0__rest /= 1;
    (void)e0__rest;
    v = (v + (L ? (in.x[1] = to_float(add1_in1[e0_1 * 128LL + e0_2 * 32LL + e0_3])) : in.x[1]));  // /Add_1.nhwc
    v = fmaxf(v, 0.0f);  // /Relu_1.nhwc
    // /Relu_1.nchw: stored transposed
    if (!L && S) out[(e0_3) * 16LL + (e0_1) * 4LL + e0_2] = from_float<float>(v);
    return v;
  }
  __device__ __forceinline__ void load(int m, int n, In& in) const { run<true>(m, n, 0.0f, in); }
  __device__ __forceinline__ void operator()(int m, int n, float v, const In& in) const {
    run<false>(m, n, v, const_cast<In&>(in));
  }
};

// group 6
__device__ __forceinline__ void g6_conv(int item, const float* __restrict__ A, const float* __restrict__ B, G6Epilogue epi, float* ws, unsigned int* cnt) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmF32<32, 64, 16, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = item / 1;
  int t = item % 1;
  const int tm = t % 1; t /= 1;
  const int tn = t % 1;
  const long long b = t / 1;
  const int k0 = split * 48, k1 = min(288, k0 + 48);
  Im2colK<float, ConvNhwc_1x4x4x32_k3x3_s1x1_p1x1_d1x1_o4x4> la{A};  // channels-last im2col
  DenseK<float, true> lb{B, 32, 288, 288};
  epi.base = b * 512LL;
  const long long tile_id = (b * 1 + tm) * 1 + tn;
  GemmF32<32, 64, 16, 2, 4>::tile(16, 32, tm * 32, tn * 64, k0, k1, la, lb, epi, smem, ws + tile_id * 12288LL, cnt + tile_id, 6, split);
}
