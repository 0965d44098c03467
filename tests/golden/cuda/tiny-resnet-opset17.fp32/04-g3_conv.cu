
struct ConvNhwc_1x8x8x16_k3x3_s1x1_p1x1_d1x1_o8x8 {  // Im2colK's geometry
  static constexpr int H = 8, W = 8, C = 16, KW = 3;
  static constexpr int SH = 1, SW = 1, PH = 1, PW = 1, DH = 1, DW = 1;
  static constexpr int OH = 8, OW = 8, P = 64, K = 144;
};

// group 3
__device__ __forceinline__ void g3_conv(int item, const float* __restrict__ A, const float* __restrict__ B, G1Epilogue epi, float* ws, unsigned int* cnt) {
  extern __shared__ __align__(1024) unsigned char smem[];
  static_assert(GemmF32<32, 64, 16, 2, 4>::kSmemBytes <= MONO_SMEM_BYTES, "tile does not fit the context");
  const int split = item / 2;
  int t = item % 2;
  const int tm = t % 2; t /= 2;
  const int tn = t % 1;
  const long long b = t / 1;
  const int k0 = split * 48, k1 = min(144, k0 + 48);
  Im2colK<float, ConvNhwc_1x8x8x16_k3x3_s1x1_p1x1_d1x1_o8x8> la{A};  // channels-last im2col
  DenseK<float, true> lb{B, 16, 144, 144};
  epi.base = b * 1024LL;
  const long long tile_id = (b * 2 + tm) * 1 + tn;
  GemmF32<32, 64, 16, 2, 4>::tile(64, 16, tm * 32, tn * 64, k0, k1, la, lb, epi, smem, ws + tile_id * 6144LL, cnt + tile_id, 3, split);
}
