
struct ConvNhwc_1x8x8x16_k3x3_s2x2_p1x1_d1x1_o4x4 {  // Im2colK's geometry
  static constexpr int H = 8, W = 8, C = 16, KW = 3;
  static constexpr int SH = 2, SW = 2, PH = 1, PW = 1, DH = 1, DW = 1;
  static constexpr int OH = 4, OW = 4, P = 16, K = 144;
};

struct G5Epilogue {
  const float* a;
  const float* b;
  const float* bias;
  float* out;
  long long base;
  struct In { float x[1]; };
  template <bool L, bool S = true>
  __device__ __forceinline__ float run(int m, int n, float v, In& in) const {
    const long long i = base + (long long)m * 32LL + n;
    v += (L ? (in.x[0] = to_float(bias[n])) : in.x[0]);  // bias
    v = fmaxf(v, 0.0f);  // /b2/b2.2/Relu.nhwc
    if (!L && S) out[i] = from_float<float>(v);
    return v;
  }
  __device__ __forceinline__ void load(int m, int n, In& in) const { run<true>(m, n, 0.0f, in); }
  __device__ __forceinline__ void operator()(int m, int n, float v, const In& in) const {
    run<false>(m, n, v, const_cast<In&>(in));
  }
};

// group 5
__device__ __forceinline__ void g5_conv(int item, const float* __restrict__ A, const float* __restrict__ B, G5Epilogue epi, float* ws, unsigned int* cnt) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmF32<32, 64, 16, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = item / 1;
  int t = item % 1;
  const int tm = t % 1; t /= 1;
  const int tn = t % 1;
  const long long b = t / 1;
  const int k0 = split * 48, k1 = min(144, k0 + 48);
  Im2colK<float, ConvNhwc_1x8x8x16_k3x3_s2x2_p1x1_d1x1_o4x4> la{A};  // channels-last im2col
  DenseK<float, true> lb{B, 32, 144, 144};
  epi.base = b * 512LL;
  const long long tile_id = (b * 1 + tm) * 1 + tn;
  GemmF32<32, 64, 16, 2, 4>::tile(16, 32, tm * 32, tn * 64, k0, k1, la, lb, epi, smem, ws + tile_id * 6144LL, cnt + tile_id, 3, split);
}
