
struct ConvNhwc_1x32x32x8_k3x3_s2x2_p1x1_d1x1_o16x16 {  // Im2colK's geometry
  static constexpr int H = 32, W = 32, C = 8, KW = 3;
  static constexpr int SH = 2, SW = 2, PH = 1, PW = 1, DH = 1, DW = 1;
  static constexpr int OH = 16, OW = 16, P = 256, K = 72;
};

struct G1Epilogue {
  const float* a;
  const float* b;
  const float* bias;
  float* out;
  long long base;
  struct In { float x[1]; };
  template <bool L, bool S = true>
  __device__ __forceinline__ float run(int m, int n, float v, In& in) const {
    const long long i = base + (long long)m * 16LL + n;
    v += (L ? (in.x[0] = to_float(bias[n])) : in.x[0]);  // bias
    v = fmaxf(v, 0.0f);  // /stem/stem.2/Relu.nhwc
    if (!L && S) out[i] = from_float<float>(v);
    return v;
  }
  __device__ __forceinline__ void load(int m, int n, In& in) const { run<true>(m, n, 0.0f, in); }
  __device__ __forceinline__ void operator()(int m, int n, float v, const In& in) const {
    run<false>(m, n, v, const_cast<In&>(in));
  }
};

// group 1
__device__ __forceinline__ void g1_conv(int item, const float* __restrict__ A, const float* __restrict__ B, G1Epilogue epi, float* ws, unsigned int* cnt) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmF32<32, 64, 16, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = 0;
  int t = item;
  const int tm = t % 8; t /= 8;
  const int tn = t % 1;
  const long long b = t / 1;
  const int k0 = split * 80, k1 = min(72, k0 + 80);
  Im2colK<float, ConvNhwc_1x32x32x8_k3x3_s2x2_p1x1_d1x1_o16x16> la{A};  // channels-last im2col
  DenseK<float, true> lb{B, 16, 72, 72};
  epi.base = b * 4096LL;
  GemmF32<32, 64, 16, 2, 4>::tile(256, 16, tm * 32, tn * 64, k0, k1, la, lb, epi, smem, (float*)nullptr, (unsigned int*)nullptr, 1, 0);
}
