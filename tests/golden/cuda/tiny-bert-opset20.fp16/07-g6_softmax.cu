
// groups 6, 17
__device__ __forceinline__ void g6_softmax(int item, const half_t* __restrict__ x, half_t* __restrict__ out) {
  const int row = item;
  if (row >= 64) return;
  const RowIn_h in{x, 16};
  const auto store = [&](int row, int col, float v) {
    const long long i = (long long)row * 16LL + col;
    v = isnan(v) ? 0.0f : v;  // node_Where_86 (NaN guard)
    out[i] = from_float<half_t>(v);
  };
  softmax_row_f(in, row, 16, store);
}
