// Weight packing: which constants are packed tile by tile for their GEMM's schedule
// (tile_weights), their size in the weights blob, and the blob itself (pack_weights).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "compiler/codegen/planner/steps.h"
#include "compiler/codegen/support.h"
#include "compiler/codegen/tile_pack.h"
#include "compiler/ops/pool.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

// The [rows][K] matrix a tile-packed constant is read as: a MatMul weight (transposed) is
// [K][rows] in the model; a Gemm transB weight [rows][K].
void tile_matrix(const Value& v, const Packing& p, int64_t* rows, int64_t* k) {
  const Shape& s = v.type.shape;
  MONO_CHECK(!s.empty() && s[0] > 0, "tile-packed constant ", v.name, " has no rows");
  *rows = p.transposed ? s[1] : s[0];
  *k = p.transposed ? s[0] : v.type.numel() / s[0];
}

}  // namespace

namespace planner {

// fp16 MatMul/Gemm groups with constant 2-D weights read them packed tile by tile for their
// (final) schedule, one bulk copy per stage; not attention's (no weights). H100, same call
// (bench/RESULTS.md session 9): bert-base 735.5 -> 718.7 us, gpt2 754.7 -> 733.5, vit-base
// 1095.1 -> 1068.1. Channels-last convolutions' weights are their B operand, [F][KH*KW*C], and
// are packed as a Gemm's; standard convolutions' weights (their A operand) stay row by row:
// resnet50 went 921.6 -> 933.0 us with them tiled.
void tile_weights(KernelPlan* plan) {
  for (const Group& grp : plan->groups) {
    if (!grp.f16 || grp.runs_fused()) continue;
    const Node& n = *grp.anchor;
    if (grp.kind != GroupKind::kGemm && !(grp.kind == GroupKind::kConvGemm && channels_last_layout(n))) continue;
    const Value* w = n.input(1) ? plan->root(n.inputs[1]) : nullptr;
    if (!w || !w->is_constant()) continue;
    if (n.op == OpKind::kMatMul && n.inputs[1]->type.rank() != 2) continue;
    Packing p = constant_packing(n, 1);
    p.tile_rows = grp.gemm.bn;
    p.tile_k = grp.gemm.bk;
    p.swizzled = grp.gemm.wgmma;  // GemmWg reads its stages swizzled
    plan->weight_tiles[&n] = p;
  }
}

size_t packed_bytes(const KernelPlan& plan, const Value& v, const Packing& packing) {
  const size_t es = dtype_size(plan.dtype_of(&v));
  if (!packing.tiled()) return align_up(static_cast<size_t>(v.type.numel()) * es, 256);
  int64_t rows, k;
  tile_matrix(v, packing, &rows, &k);
  return align_up(static_cast<size_t>(tile_packed_elems(rows, k, packing.tile_rows, packing.tile_k, packing.swizzled)) * es, 256);
}

}  // namespace planner

namespace {

// One constant into its range of the blob, in its packing. fp32 values stored as fp16 are
// converted on the way (no fp16 copy of the whole constant first); a constant already in its
// stored type is read in place. Other type changes go through a cast copy.
void pack_constant(const KernelPlan& plan, const KernelPlan::PackedConstant& c, unsigned char* blob) {
  const Tensor& value = *c.value->constant;
  const DType to = plan.dtype_of(c.value);
  const bool to_half = value.dtype() == DType::kF32 && to == DType::kF16;
  Tensor cast_copy;
  const Tensor* t = &value;
  if (!to_half && value.dtype() != to) {
    cast_copy = value.cast(to);
    t = &cast_copy;
  }
  const size_t es = dtype_size(to);
  const unsigned char* src = static_cast<const unsigned char*>(t->raw());
  unsigned char* dst = blob + c.offset;
  const float* src_f32 = to_half ? static_cast<const float*>(t->raw()) : nullptr;
  // Element s of the source to element d of the destination; n consecutive ones.
  auto one = [&](size_t d, size_t s) {
    if (to_half) {
      const Half h = float_to_half(src_f32[s]);
      std::memcpy(dst + d * 2, &h, 2);
    } else if (es == 2) {
      std::memcpy(dst + d * 2, src + s * 2, 2);
    } else if (es == 4) {
      std::memcpy(dst + d * 4, src + s * 4, 4);
    } else {
      std::memcpy(dst + d * es, src + s * es, es);
    }
  };
  auto run = [&](size_t d, size_t s, size_t n) {
    if (to_half) {
      Half h[8];
      for (size_t done = 0; done < n; done += 8) {
        const size_t m = n - done < 8 ? n - done : 8;
        floats_to_halves(src_f32 + s + done, h, static_cast<int64_t>(m));
        std::memcpy(dst + (d + done) * 2, h, m * 2);
      }
    } else {
      std::memcpy(dst + d * es, src + s * es, n * es);
    }
  };
  const int64_t numel = value.numel();
  if (c.packing.tiled()) {  // tile by tile (tile_pack.h); padding stays zero
    int64_t rows, k;
    tile_matrix(*c.value, c.packing, &rows, &k);
    if (!c.packing.transposed && c.packing.tile_k % 8 == 0) {  // runs of 8 consecutive k, both sides
      for_each_tile_run(
          rows, k, c.packing.tile_rows, c.packing.tile_k,
          [&](size_t i, int64_t r, int64_t kk, int len) { run(i, static_cast<size_t>(r * k + kk), static_cast<size_t>(len)); },
          c.packing.swizzled);
    } else {  // a transposed weight ([K][rows]) in squares, for the reads' sake
      for_each_tile_packed_blocked(
          rows, k, c.packing.tile_rows, c.packing.tile_k,
          [&](size_t i, int64_t r, int64_t kk) {
            one(i, static_cast<size_t>(c.packing.transposed ? kk * rows + r : r * k + kk));
          },
          c.packing.swizzled);
    }
  } else if (c.packing.transposed) {  // [K][N] -> [N][K] (B operands of GEMMs read K-contiguous;
    // a channels-last depthwise Conv's [C][KH][KW][1] as [C][KH*KW])
    const int64_t k = value.shape()[0], n = k > 0 ? numel / k : 0;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) one(static_cast<size_t>(j * k + i), static_cast<size_t>(i * n + j));
  } else if (numel > 0) {
    run(0, 0, static_cast<size_t>(numel));
  }
}

}  // namespace

std::vector<unsigned char> pack_weights(const KernelPlan& plan) {
  std::vector<unsigned char> blob(plan.weights_bytes, 0);
  // The constants fill disjoint ranges of the blob: packed on all cores, the same bytes (a
  // model's 100 M weights took ~2 s on one core, most of an artifact build from a warm cache).
  const size_t n = plan.constants.size();
  const size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        pack_constant(plan, plan.constants[i], blob.data());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = n;  // stop the others early
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return blob;
}

}  // namespace mono
