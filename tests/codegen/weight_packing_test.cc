// Packing the weights: the run-by-run tile copy and the batched fp16 conversion give the same
// bytes as the element-by-element forms they replaced (which the GPU checks ran on).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/codegen/tile_pack.h"
#include "compiler/ir/dtype.h"
#include "compiler/support/error.h"
#include "tests/codegen/tiny_model.h"

namespace mono {
namespace {

// Every (destination index -> (r, k)) the runs and the squares visit is the one the element
// walk visits, and the runs visit as many elements.
TEST(TilePack, RunsAndSquaresVisitWhatTheElementWalkVisits) {
  int cases = 0;
  for (bool swizzled : {false, true})
    for (int bk : {32, 64, 128})
      for (int tile_rows : {16, 32, 64})
        for (int64_t rows : {1, 5, 64, 67})
          for (int64_t k : {3, 8, 13, 64, 200}) {
            if (swizzled && bk % 64 != 0) continue;
            SCOPED_TRACE(str_cat(swizzled ? "swizzled " : "", "bk ", bk, " tile_rows ", tile_rows, " rows ", rows, " k ", k));
            std::map<size_t, std::pair<int64_t, int64_t>> want, got;
            for_each_tile_packed(rows, k, tile_rows, bk, [&](size_t i, int64_t r, int64_t kk) { want[i] = {r, kk}; }, swizzled);
            size_t visits = 0;
            for_each_tile_run(
                rows, k, tile_rows, bk,
                [&](size_t i, int64_t r, int64_t kk, int len) {
                  for (int j = 0; j < len; ++j, ++visits) got[i + j] = {r, kk + j};
                },
                swizzled);
            EXPECT_EQ(visits, want.size());
            EXPECT_EQ(got, want);
            std::map<size_t, std::pair<int64_t, int64_t>> squares;
            for_each_tile_packed_blocked(rows, k, tile_rows, bk, [&](size_t i, int64_t r, int64_t kk) { squares[i] = {r, kk}; },
                                         swizzled);
            EXPECT_EQ(squares, want);
            ++cases;
          }
  EXPECT_EQ(cases, 300);
}

TEST(Half, TheBatchConversionGivesTheScalarBits) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65520.0f, -65520.0f, 1e-8f, 5.96e-8f, 2.98e-8f,
                          6.1e-5f, 3.0e38f, INFINITY, -INFINITY, NAN, 0.333333f, 1.0009765625f, 1.00048828125f};
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {  // random bit patterns: every exponent, subnormals and NaNs among them
    const uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  std::vector<Half> got(x.size());
  floats_to_halves(x.data(), got.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i].bits, float_to_half(x[i]).bits) << "value " << i << ": " << x[i];
}

// The packing before runs and batched conversion: every element copied on its own.
std::vector<unsigned char> pack_element_by_element(const KernelPlan& plan) {
  std::vector<unsigned char> blob(plan.weights_bytes, 0);
  for (const KernelPlan::PackedConstant& c : plan.constants) {
    const Tensor t = c.value->constant->cast(plan.dtype_of(c.value));
    const size_t es = dtype_size(t.dtype());
    const unsigned char* src = static_cast<const unsigned char*>(t.raw());
    unsigned char* dst = blob.data() + c.offset;
    const Shape& s = c.value->type.shape;
    if (c.packing.tiled()) {
      const int64_t rows = c.packing.transposed ? s[1] : s[0];
      const int64_t k = c.packing.transposed ? s[0] : c.value->type.numel() / s[0];
      for_each_tile_packed(
          rows, k, c.packing.tile_rows, c.packing.tile_k,
          [&](size_t i, int64_t r, int64_t kk) {
            std::memcpy(dst + i * es, src + static_cast<size_t>(c.packing.transposed ? kk * rows + r : r * k + kk) * es, es);
          },
          c.packing.swizzled);
    } else if (c.packing.transposed) {
      const int64_t k = t.shape()[0], n = k > 0 ? t.numel() / k : 0;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) std::memcpy(dst + (j * k + i) * es, src + (i * n + j) * es, es);
    } else if (t.nbytes() > 0) {
      std::memcpy(dst, src, t.nbytes());
    }
  }
  return blob;
}

// Every tiny model's plan in both precisions (tile-packed weights, swizzled for wgmma,
// transposed MatMul weights, channels-last convolution weights whose K is no multiple of 8).
TEST(WeightPacking, TinyModelsPackAsElementByElement) {
  int tiled = 0, transposed_tiled = 0, ragged = 0;
  for_each_tiny_plan([&](const Graph&, const KernelPlan& plan) {
    for (const KernelPlan::PackedConstant& c : plan.constants) {
      if (!c.packing.tiled()) continue;
      ++tiled;
      transposed_tiled += c.packing.transposed;
      const Shape& s = c.value->type.shape;
      const int64_t k = c.packing.transposed ? s[0] : c.value->type.numel() / s[0];
      ragged += k % 8 != 0;
    }
    EXPECT_EQ(pack_weights(plan), pack_element_by_element(plan));
  });
  EXPECT_GT(tiled, 20);
  EXPECT_GT(transposed_tiled, 5);
  std::printf("tile-packed constants: %d (%d transposed, %d with K not a multiple of 8)\n", tiled, transposed_tiled, ragged);
}

}  // namespace
}  // namespace mono
