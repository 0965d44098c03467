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

// One constant into its range of the blob, in its packing.
void pack_constant(const KernelPlan& plan, const KernelPlan::PackedConstant& c, unsigned char* blob) {
  const Tensor t = c.value->constant->cast(plan.dtype_of(c.value));
  const size_t es = dtype_size(t.dtype());
  const unsigned char* src = static_cast<const unsigned char*>(t.raw());
  unsigned char* dst = blob + c.offset;
  if (c.packing.tiled()) {  // tile by tile (tile_pack.h); padding stays zero
    int64_t rows, k;
    tile_matrix(*c.value, c.packing, &rows, &k);
    for_each_tile_packed(
        rows, k, c.packing.tile_rows, c.packing.tile_k,
        [&](size_t i, int64_t r, int64_t kk) {
          std::memcpy(dst + i * es, src + static_cast<size_t>(c.packing.transposed ? kk * rows + r : r * k + kk) * es, es);
        },
        c.packing.swizzled);
  } else if (c.packing.transposed) {  // [K][N] -> [N][K] (B operands of GEMMs read K-contiguous;
    // a channels-last depthwise Conv's [C][KH][KW][1] as [C][KH*KW])
    const Shape& s = t.shape();
    const int64_t k = s[0], n = k > 0 ? t.numel() / k : 0;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) std::memcpy(dst + (j * k + i) * es, src + (i * n + j) * es, es);
  } else if (t.nbytes() > 0) {
    std::memcpy(dst, src, t.nbytes());
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
