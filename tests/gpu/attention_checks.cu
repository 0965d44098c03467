// FlashAttention and FlashStream cases of the device-library check (device_lib_check.cu): one item per block over
// random fp16 Q, K and V, scores scaled in s_fn, against a double-precision softmax(Q K^T) V, with
// and without the causal mode (a key is masked for a row unless key <= row + offset): whole and
// partial row blocks, key counts that are not multiples of 16, keys beyond the rows (offset > 0),
// and 1, 2 and 4 row blocks per item; several items a block, later ones with fewer keys; errors
// per output row. FlashStream (keys in chunks, online softmax) also over keys that end mid-chunk,
// masked rows whose first chunks hold no live key (masked to -inf and to -FLT_MAX), and Whisper's
// 1500 keys; FlashWg (FlashStream's 128-row items on the warpgroup MMA) over the same.
#include "tests/gpu/device_lib_check.cuh"

#include <cfloat>

#include "compiler/codegen/device/attention.cuh"

namespace {

// Each block runs items blockIdx.x, blockIdx.x + gridDim.x, ... counted from the last row block
// down, as a persistent kernel's blocks do: a block's later item then has fewer unmasked keys
// than its earlier one, whose K and V rows are still in shared memory.
// FA: FlashAttention, or FlashStream (STREAM: no probabilities' functor).
template <class FA, int D, bool STREAM>
__global__ void __launch_bounds__(256) flash_kernel(const half_t* Q, const half_t* K, const half_t* V, int batch,
                                                    int rows, int keys, float scale, int off, int lead, float masked,
                                                    float* O) {
  extern __shared__ __align__(1024) unsigned char smem[];
  constexpr int BQ = FA::BQ;
  const int tm = (rows + BQ - 1) / BQ, items = batch * tm;
  for (int it = blockIdx.x; it < items; it += gridDim.x) {
    const int item = items - 1 - it;
    const int b = item / tm, q0 = (item % tm) * BQ, nq = rows - q0 < BQ ? rows - q0 : BQ;
    // odd rows' first `lead` keys masked by the scores' epilogue (to -inf, or -FLT_MAX as an
    // additive torch.finfo(float32).min mask leaves them)
    const auto s_fn = [&](int r, int c, float x) { return (r & 1) && c < lead ? masked : x * scale; };
    const auto p_fn = [&](int, int, float x) { return isnan(x) ? 0.0f : x; };  // the models' NaN guard
    const auto o_fn = [&](int r, int c, float x) { O[((long long)b * rows + r) * D + c] = x; };
    const half_t *q = Q + (long long)b * rows * D, *k = K + (long long)b * keys * D, *v = V + (long long)b * keys * D;
    if constexpr (STREAM)
      FA::item(q, k, v, q0, nq, keys, s_fn, o_fn, smem, off);
    else
      FA::item(q, k, v, q0, nq, keys, s_fn, p_fn, o_fn, smem, off);
  }
}

// The largest error of an output row relative to that row's largest |reference| (a causal
// row's outputs shrink as it averages more keys: one global scale would hide a late row's error).
double row_rel_err(const std::vector<float>& got, const std::vector<double>& ref, int D) {
  double worst = 0;
  for (size_t r = 0; r * D < ref.size(); ++r) {
    double md = 0, mr = 0;
    for (int d = 0; d < D; ++d) {
      const double diff = std::fabs((double)got[r * D + d] - ref[r * D + d]);
      if (!(diff == diff)) return INFINITY;
      md = std::max(md, diff);
      mr = std::max(mr, std::fabs(ref[r * D + d]));
    }
    worst = std::max(worst, mr > 0 ? md / mr : md);
  }
  return worst;
}

template <class FA, int D, bool CAUSAL, bool STREAM>
void flash_case(const char* what, int batch, int rows, int keys, int lead = 0, float masked = -INFINITY) {
  const int off = keys - rows;
  const float scale = 1.0f / std::sqrt((float)D);
  auto q = rand_vec(size_t(batch) * rows * D), k = rand_vec(size_t(batch) * keys * D),
       v = rand_vec(size_t(batch) * keys * D);
  round_to_half(q), round_to_half(k), round_to_half(v);
  const std::vector<double> ref = ref_attention(q, k, v, batch, rows, keys, D, CAUSAL, lead, masked);
  half_t* dq = to_dev<half_t>(q);
  half_t* dk = to_dev<half_t>(k);
  half_t* dv = to_dev<half_t>(v);
  float* dout;
  CK(cudaMalloc(&dout, sizeof(float) * ref.size()));
  CK(cudaMemset(dout, 0xff, sizeof(float) * ref.size()));  // NaN: an output nobody writes shows
  auto kern = flash_kernel<FA, D, STREAM>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, FA::kSmemBytes));
  const int items = batch * ((rows + FA::BQ - 1) / FA::BQ);
  kern<<<(items + 2) / 3, 256, FA::kSmemBytes>>>(dq, dk, dv, batch, rows, keys, scale, off, lead, masked, dout);  // ~3 items a block
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  char name[160];
  std::snprintf(name, sizeof name, "%s batch=%d rows=%d keys=%d%s", what, batch, rows, keys,
                !lead ? "" : masked == -INFINITY ? " (odd rows' first keys masked)" : " (odd rows' first keys at -FLT_MAX)");
  report(name, row_rel_err(from_dev(dout, ref.size()), ref, D), 5e-3);
  for (void* p : {(void*)dq, (void*)dk, (void*)dv, (void*)dout}) CK(cudaFree(p));
}

}  // namespace

// The shared attention reference (device_lib_check.cuh).
std::vector<double> ref_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                  int batch, int rows, int keys, int D, bool causal, int lead, float masked) {
  const int off = keys - rows;
  const double scale = 1.0 / std::sqrt((double)D);
  std::vector<double> ref(size_t(batch) * rows * D);
  for (int b = 0; b < batch; ++b)
    for (int r = 0; r < rows; ++r) {
      std::vector<double> s(keys);
      double mx = -INFINITY;
      for (int j = 0; j < keys; ++j) {
        double acc = 0;
        for (int d = 0; d < D; ++d) acc += (double)q[(size_t(b) * rows + r) * D + d] * k[(size_t(b) * keys + j) * D + d];
        s[j] = causal && j > r + off ? -INFINITY : (r & 1) && j < lead ? (double)masked : acc * scale;
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int j = 0; j < keys; ++j) sum += (s[j] = std::exp(s[j] - mx));
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j < keys; ++j) o += s[j] / sum * v[(size_t(b) * keys + j) * D + d];
        ref[(size_t(b) * rows + r) * D + d] = o;
      }
    }
  return ref;
}

void attention_checks() {
  using mono_dev::FlashAttention;
  using mono_dev::FlashStream;
  flash_case<FlashAttention<64, 1, 8>, 64, false, false>("FlashAttention<64,1,8>", 2, 128, 128);  // BERT's heads
  // GPT-2's: every key group of a late row block busy
  flash_case<FlashAttention<64, 1, 8, true>, 64, true, false>("FlashAttention<64,1,8,causal>", 2, 128, 128);
  // a partial last row block and key tile
  flash_case<FlashAttention<64, 2, 5, true>, 64, true, false>("FlashAttention<64,2,5,causal>", 1, 77, 77);
  // keys beyond the rows: offset 40
  flash_case<FlashAttention<32, 1, 7, true>, 32, true, false>("FlashAttention<32,1,7,causal>", 2, 60, 100);
  // four row blocks per item
  flash_case<FlashAttention<64, 4, 4, true>, 64, true, false>("FlashAttention<64,4,4,causal>", 1, 50, 50);
  flash_case<FlashAttention<64, 2, 13>, 64, false, false>("FlashAttention<64,2,13>", 1, 197, 197);  // ViT's
  // Whisper's encoder: 1500 keys, six chunks of 256 (the last partial)
  flash_case<FlashStream<64, 4, 16>, 64, false, true>("FlashStream<64,4,16>", 2, 1500, 1500);
  // one row block, key chunks of 128 (8 tiles, one a warp), keys ending mid-tile
  flash_case<FlashStream<64, 1, 8>, 64, false, true>("FlashStream<64,1,8>", 3, 70, 300);
  // odd rows' first 200 keys masked: their first chunk has no live key (running maximum -inf)
  flash_case<FlashStream<64, 1, 8>, 64, false, true>("FlashStream<64,1,8>", 1, 40, 600, 200);
  // the same masked by -FLT_MAX (a padding mask of torch.finfo(float32).min, added): a running
  // maximum near -FLT_MAX must not overflow when scaled to base 2 (found in review)
  flash_case<FlashStream<64, 2, 8>, 64, false, true>("FlashStream<64,2,8>", 1, 40, 600, 200, -FLT_MAX);
  flash_case<FlashAttention<64, 2, 13>, 64, false, false>("FlashAttention<64,2,13>", 1, 40, 200, 100, -FLT_MAX);
  // causal: early rows' later chunks are skipped, late rows see every chunk
  flash_case<FlashStream<64, 2, 8, true>, 64, true, true>("FlashStream<64,2,8,causal>", 1, 333, 333);
  // keys beyond the rows (offset 300), a head size of 32 and of 128
  flash_case<FlashStream<32, 2, 16, true>, 32, true, true>("FlashStream<32,2,16,causal>", 2, 90, 390);
  flash_case<FlashStream<128, 4, 8>, 128, false, true>("FlashStream<128,4,8>", 1, 100, 700);
  // eight row blocks, one key group (whisper's 128-row items): a partial last item, masked
  // leading keys, causal
  flash_case<FlashStream<64, 8, 8>, 64, false, true>("FlashStream<64,8,8>", 2, 1500, 1500);
  flash_case<FlashStream<64, 8, 8>, 64, false, true>("FlashStream<64,8,8>", 1, 40, 600, 200);
  flash_case<FlashStream<64, 8, 8, true>, 64, true, true>("FlashStream<64,8,8,causal>", 1, 333, 333);
  // the same items on the warpgroup MMA (what the planner runs for 64-wide heads): Whisper's
  // 1500 keys, keys ending mid-chunk and mid-tile, masked leading keys (-inf and -FLT_MAX),
  // causal with keys beyond the rows
  using mono_dev::FlashWg;
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 2, 1500, 1500);
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 3, 70, 300);
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 2, 50, 100);   // one chunk
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 1, 130, 250);  // two
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 1, 40, 600, 200);
  flash_case<FlashWg<64>, 64, false, true>("FlashWg<64>", 1, 300, 600, 200, -FLT_MAX);
  flash_case<FlashWg<64, true>, 64, true, true>("FlashWg<64,causal>", 1, 333, 333);
  flash_case<FlashWg<64, true>, 64, true, true>("FlashWg<64,causal>", 2, 200, 457);
}
