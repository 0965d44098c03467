// The CUDA backend without a GPU: every tiny model, in both precisions, plans into one kernel
// whose generated source compiles for sm_90 with NVRTC, holds exactly one __global__
// function, and uses no spill memory with the default schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <tuple>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/artifact.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

// A tiny model of tests/data/models, loaded and simplified (every test's starting point).
LoadResult load_tiny(const std::string& model) {
  LoadResult loaded = load_onnx(std::string(MONO_SOURCE_DIR) + "/tests/data/models/" + model + "/model.onnx");
  simplify(*loaded.graph);
  return loaded;
}

const char* kModels[] = {"tiny-bert-opset17", "tiny-bert-opset20", "tiny-gpt2-opset20",
                         "tiny-mobilenet-opset17", "tiny-mobilenet-opset20", "tiny-resnet-opset17",
                         "tiny-resnet-opset20", "tiny-vit-opset17", "tiny-vit-opset20"};

struct Case {
  const char* model;
  Precision precision;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const char* m : kModels)
    for (Precision p : {Precision::kF32, Precision::kF16}) c.push_back({m, p});
  return c;
}

class CodegenTest : public ::testing::TestWithParam<Case> {};

TEST_P(CodegenTest, CompilesForSm90AsOneKernelWithoutSpills) {
  const Case& c = GetParam();
  LoadResult loaded = load_tiny(c.model);
  PlanOptions po;
  po.precision = c.precision;
  NvrtcOptions nvrtc;  // no cache: compile for real
  nvrtc.sm_arch = 90;
  BuiltKernel b = build_kernel(*loaded.graph, po, c.model, nvrtc, /*compile=*/true);

  // One kernel.
  std::regex global(R"(__global__)");
  auto n_global = std::distance(std::sregex_iterator(b.source.begin(), b.source.end(), global), std::sregex_iterator());
  EXPECT_EQ(n_global, 1) << "expected exactly one __global__ function";
  for (const DeviceHeader& h : device_headers())
    EXPECT_EQ(std::string(h.text).find("__global__"), std::string::npos) << h.include_name << " defines a kernel";

  // Compiled, resources read back from ptxas, no spills.
  EXPECT_GT(b.compiled.cubin.size(), 1000u);
  EXPECT_GT(b.compiled.usage.registers, 0) << b.compiled.log;
  EXPECT_LE(b.compiled.usage.registers, b.plan.ctx.register_cap());
  EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
  EXPECT_EQ(b.compiled.usage.spill_load_bytes, 0) << b.compiled.log;
  EXPECT_EQ(b.compiled.usage.stack_frame_bytes, 0) << b.compiled.log;

  // Every group's schedule fits the context; barriers only between stages.
  for (const Group& g : b.plan.groups) EXPECT_LE(g.smem_bytes, b.plan.ctx.smem_bytes);
  // (A barrier is grid_barrier, or grid_arrive ... grid_wait around a weight preload.)
  auto count = [&](const char* re) {
    std::regex r(re);
    return std::distance(std::sregex_iterator(b.source.begin(), b.source.end(), r), std::sregex_iterator());
  };
  const long arrives = count(R"(grid_arrive\(p\.sync\))");
  EXPECT_EQ(arrives, count(R"(grid_wait\(p\.sync, bar\))"));
  EXPECT_EQ(count(R"(grid_barrier\(p\.sync\))") + arrives, static_cast<long>(b.plan.stages.size()) - 1);
  std::printf("%-24s %s: %zu groups, %zu stages, %s\n", c.model, c.precision == Precision::kF16 ? "fp16" : "fp32",
              b.plan.groups.size(), b.plan.stages.size(), b.compiled.usage.str().c_str());
}

INSTANTIATE_TEST_SUITE_P(Tiny, CodegenTest, ::testing::ValuesIn(cases()), [](const ::testing::TestParamInfo<Case>& info) {
  std::string n = std::string(info.param.model) + (info.param.precision == Precision::kF16 ? "_fp16" : "_fp32");
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
});

// Generated source names the ONNX nodes each stage implements, and no model text can end a
// comment early.
TEST(Codegen, SourceIsReadableAndModelTextIsEscaped) {
  LoadResult loaded = load_tiny("tiny-resnet-opset20");
  // A hostile node name.
  const_cast<Node*>(loaded.graph->nodes()[0].get())->name = "evil */ } int x; /*";
  BuiltKernel b = build_kernel(*loaded.graph, PlanOptions{}, "tiny-resnet */ oops", NvrtcOptions{}, false);
  EXPECT_NE(b.source.find("// ---- stage 0 ----"), std::string::npos);
  EXPECT_NE(b.source.find("(Conv)"), std::string::npos);
  EXPECT_EQ(b.source.find("evil */"), std::string::npos);
  EXPECT_EQ(b.source.find("resnet */"), std::string::npos);
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// The profiling build stamps every stage twice (work done, barrier left) and still compiles.
TEST(Codegen, ProfilingBuildCompiles) {
  LoadResult loaded = load_tiny("tiny-resnet-opset20");
  PlanOptions po;
  po.profile = true;
  BuiltKernel b = build_kernel(*loaded.graph, po, "tiny-resnet", NvrtcOptions{}, true);
  size_t stamps = 0;
  for (size_t p = b.source.find("MONO_STAMP("); p != std::string::npos; p = b.source.find("MONO_STAMP(", p + 1)) ++stamps;
  EXPECT_EQ(stamps, 2 * b.plan.stages.size() + 1);  // + the macro's definition
  EXPECT_TRUE(b.manifest.profile);
  EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0);
}

}  // namespace
}  // namespace mono

#include "compiler/reference/interpreter.h"

namespace mono {
namespace {

// fp16 with fp32 fallback: tensors whose calibrated range does not fit fp16 stay fp32, and a
// GEMM reading one runs on the fp32 path; models whose ranges fit keep everything in fp16.
TEST(Codegen, Fp16KeepsOutOfRangeTensorsInFp32) {
  for (const char* m : {"tiny-mobilenet-opset20", "tiny-bert-opset20"}) {
    LoadResult loaded = load_tiny(m);
    Graph& g = *loaded.graph;
    PlanOptions po;
    po.precision = Precision::kF16;
    std::vector<Tensor> inputs;
    for (const Value* in : g.inputs) inputs.emplace_back(in->type);
    for (Tensor& t : inputs)
      if (is_float(t.dtype())) t = Tensor::from_floats(t.shape(), std::vector<float>(t.numel(), 0.5f));
    po.ranges = float_ranges(g, inputs);
    KernelPlan plan = plan_kernel(g, po);
    int f32_gemms = 0;
    for (const Group& grp : plan.groups) {
      if (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm) continue;
      const DType a = plan.dtype_of(grp.anchor->inputs[0]), b = plan.dtype_of(grp.anchor->inputs[1]);
      EXPECT_EQ(a, b) << grp.nodes() << ": GEMM operands must share a type";
      EXPECT_EQ(grp.f16, a == DType::kF16);
      f32_gemms += !grp.f16;
    }
    if (std::string(m).find("mobilenet") != std::string::npos) {
      EXPECT_GT(plan.fp32_fallbacks, 0);
      EXPECT_GT(f32_gemms, 0);
    } else {
      EXPECT_EQ(plan.fp32_fallbacks, 0);
      EXPECT_EQ(f32_gemms, 0);
    }
  }
}

}  // namespace
}  // namespace mono

namespace mono {
namespace {

// LayerNorm folding (plan.h LnFold, --fold-layernorm): on tiny-bert the three LayerNorms that a
// GEMM writes the input of (all but the embeddings' and the last) fold away, a stage and a
// barrier each; the kernel still compiles without spills; the readers' weights are packed
// gamma-scaled, with the column sums and beta terms of the epilogue correction.
TEST(Codegen, FoldedLayerNormRemovesStagesAndPacksScaledWeights) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions plain;
  PlanOptions folded;
  folded.fold_layernorm = true;
  const KernelPlan p0 = plan_kernel(*loaded.graph, plain);
  BuiltKernel b = build_kernel(*loaded.graph, folded, "tiny-bert", NvrtcOptions{}, /*compile=*/true);
  const KernelPlan& p1 = b.plan;
  ASSERT_EQ(p1.ln_folds.size(), 3u);
  EXPECT_EQ(p1.stages.size() + 3, p0.stages.size());
  EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
  EXPECT_NE(b.source.find("ln_row_stats<"), std::string::npos);
  for (const LnFold& f : p1.ln_folds) {
    EXPECT_EQ(p1.groups[f.ln_group].folded_ln, &f - p1.ln_folds.data());
    EXPECT_EQ(p1.groups[f.producer].computes_stats, &f - p1.ln_folds.data());
    EXPECT_EQ(p1.placement.count(f.y), 0u) << "a folded LayerNorm's output is never stored";
    EXPECT_GT(f.parts, 0);
  }
  // Every GEMM reading a folded output as A: W' = diag(gamma) W and (c, d) per column (fp32).
  const std::vector<unsigned char> blob = pack_weights(p1);
  ASSERT_FALSE(p1.ln_fold_of_gemm.empty());
  for (const auto& [node, f] : p1.ln_fold_of_gemm) {
    const Node& ln = *p1.groups[p1.ln_folds[f].ln_group].anchor;
    const Value* w = p1.root(node->inputs[1]);
    const std::string packing = p1.packing(*node, 1);
    ASSERT_EQ(packing, "nk|ln" + std::to_string(f));
    const Tensor wt = w->constant->cast(DType::kF32), g = p1.root(ln.inputs[1])->constant->cast(DType::kF32),
                 be = p1.root(ln.inputs[2])->constant->cast(DType::kF32);
    const int64_t K = w->type.shape[0], N = w->type.shape[1];
    const float* scaled = reinterpret_cast<const float*>(blob.data() + p1.constant_offset(w, packing));
    const float* cd = reinterpret_cast<const float*>(blob.data() + p1.constant_offset(w, "cd" + packing));
    for (int64_t n = 0; n < N; ++n) {
      double c = 0, d = 0;
      for (int64_t k = 0; k < K; ++k) {
        const float want = wt.data<float>()[k * N + n] * g.data<float>()[k];
        ASSERT_EQ(scaled[n * K + k], want) << "W'[" << n << "][" << k << "]";
        c += want;
        d += static_cast<double>(be.data<float>()[k]) * wt.data<float>()[k * N + n];
      }
      EXPECT_NEAR(cd[2 * n], c, 1e-5 * (1 + std::fabs(c)));
      EXPECT_NEAR(cd[2 * n + 1], d, 1e-5 * (1 + std::fabs(d)));
    }
  }
}

// --tile-weights (KernelPlan::weight_tiles): every fp16 GEMM with constant weights (MatMul/Gemm B,
// a convolution's A) reads them packed tile by tile for its schedule; the packed blob holds
// element (r, k) of the [rows][K] operand at block (r / rows_tile, k / bk), row r % rows_tile,
// column k % bk of a (bk + 8)-element row, padding zero; the kernel compiles without spills.
TEST(Codegen, TileWeightsArePackedTileByTile) {
  {  // defaults: MatMul/Gemm weights tiled, convolutions' not
    LoadResult r = load_tiny("tiny-resnet-opset20");
    PlanOptions po;
    po.precision = Precision::kF16;
    const KernelPlan p = plan_kernel(*r.graph, po);
    for (const auto& [node, suffix] : p.weight_tiles) EXPECT_NE(node->op, OpKind::kConv) << node->name;
    int convs = 0;
    for (const Group& g : p.groups) convs += g.kind == GroupKind::kConvGemm;
    EXPECT_GT(convs, 0);
  }
  for (const char* model : {"tiny-bert-opset17", "tiny-resnet-opset20"}) {
    SCOPED_TRACE(model);
    LoadResult loaded = load_tiny(model);
    PlanOptions po;
    po.precision = Precision::kF16;
    po.tile_weights = true;
    po.tile_conv_weights = true;
    BuiltKernel b = build_kernel(*loaded.graph, po, model, NvrtcOptions{}, /*compile=*/true);
    const KernelPlan& p = b.plan;
    EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
    EXPECT_NE(b.source.find("BulkTileK<half_t> "), std::string::npos);
    int gemms = 0;
    for (const Group& g : p.groups)
      if (g.f16 && !g.in_attention() && (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm) &&
          p.root(g.anchor->inputs[1])->is_constant()) {
        ++gemms;
        const bool conv = g.kind == GroupKind::kConvGemm;
        ASSERT_EQ(p.weight_tiles.count(g.anchor), 1u) << g.anchor->name;
        EXPECT_EQ(p.weight_tiles.at(g.anchor), "@t" + std::to_string(conv ? g.gemm.bm : g.gemm.bn) + "x" + std::to_string(g.gemm.bk));
      }
    ASSERT_GT(gemms, 0);
    EXPECT_EQ(static_cast<int>(p.weight_tiles.size()), gemms);
    const std::vector<unsigned char> blob = pack_weights(p);
    for (const auto& [node, suffix] : p.weight_tiles) {
      const Value* w = p.root(node->inputs[1]);
      const std::string packing = p.packing(*node, 1);
      TilePacking t;
      ASSERT_TRUE(parse_tile_packing(packing, &t)) << packing;
      const bool nk = packing.rfind("nk", 0) == 0;  // MatMul weights are [K][N] in the model
      const Shape& s = w->type.shape;
      const int64_t rows = nk ? s[1] : s[0], K = nk ? s[0] : w->type.numel() / s[0];
      const Tensor h = w->constant->cast(DType::kF16);
      const uint16_t* src = static_cast<const uint16_t*>(h.raw());
      const uint16_t* dst = reinterpret_cast<const uint16_t*>(blob.data() + p.constant_offset(w, packing));
      const int64_t ld = t.bk + 8, kts = (K + t.bk - 1) / t.bk, row_tiles = (rows + t.rows - 1) / t.rows;
      std::vector<bool> seen(static_cast<size_t>(row_tiles * kts * t.rows * ld), false);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t at = ((r / t.rows * kts + k / t.bk) * t.rows + r % t.rows) * ld + k % t.bk;
          ASSERT_EQ(dst[at], src[nk ? k * rows + r : r * K + k]) << node->name << " (" << r << ", " << k << ")";
          seen[at] = true;
        }
      for (size_t i = 0; i < seen.size(); ++i)
        if (!seen[i]) ASSERT_EQ(dst[i], 0) << node->name << ": padding element " << i << " is not zero";
    }
  }
}

// fp16 GEMM epilogues whose stores run along n in whole chunks of 8 store 8 elements at once
// (gemm.cuh vec8_stores); never one whose stores run along m (K^T stored as computed, with
// --no-swap-b), none with --no-vec-epilogue, none in fp32 (GemmF32 has no chunked epilogue).
TEST(Codegen, VecEpilogueOnlyWhereStoresRunAlongN) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  auto source = [&](bool f16, bool vec, bool swap) {
    PlanOptions po;
    po.precision = f16 ? Precision::kF16 : Precision::kF32;
    po.vec_epilogue = vec;
    po.swap_b_operands = swap;
    return emit_cuda(*loaded.graph, plan_kernel(*loaded.graph, po), "tiny-bert");
  };
  // Epilogue structs (named by their text, so identical layers share one) with each property.
  auto count = [](const std::string& src, bool* mixed) {
    int vec = 0, mf = 0;
    for (size_t at = src.find("struct Epi_"); at != std::string::npos;) {
      const size_t next = src.find("struct Epi_", at + 1);
      const std::string e = src.substr(at, next == std::string::npos ? std::string::npos : next - at);
      const bool v = e.find("vec8_stores = true") != std::string::npos, m = e.find("m_fastest = true") != std::string::npos;
      vec += v, mf += m;
      if (v && m) *mixed = true;
      at = next;
    }
    return std::make_pair(vec, mf);
  };
  bool mixed = false;
  const auto on = count(source(true, true, true), &mixed);
  EXPECT_GE(on.first, 3) << "Q, K and V at least";
  const auto along_m = count(source(true, true, false), &mixed);
  EXPECT_GT(along_m.second, 0) << "K^T stored as computed runs along m";
  EXPECT_EQ(along_m.first, on.first - along_m.second);
  EXPECT_FALSE(mixed) << "an epilogue storing along m declares vec8 stores";
  EXPECT_EQ(count(source(true, false, true), &mixed).first, 0);
  EXPECT_EQ(count(source(false, true, true), &mixed).first, 0);
  EXPECT_NE(source(true, true, true).find("store8("), std::string::npos);
}

// fp16 MatMul/Gemm activations are read through tensor maps (gemm.cuh TensorK): one map per
// distinct (operand, tile) pair, each describing the GEMM's A exactly as the plan places it
// (arena offset, M x K, row stride, the tile's rows as the box), every call passing an entry of
// a table of the listed size; none with --no-tensor-a, in fp32, or for convolutions (their A is
// the weights).
TEST(Codegen, ActivationsThroughTensorMaps) {
  for (const char* model : {"tiny-bert-opset17", "tiny-gpt2-opset20", "tiny-vit-opset20", "tiny-resnet-opset20"}) {
    SCOPED_TRACE(model);
    LoadResult loaded = load_tiny(model);
    PlanOptions po;
    po.precision = Precision::kF16;
    const KernelPlan plan = plan_kernel(*loaded.graph, po);
    std::vector<TensorMapSpec> maps;
    const std::string src = emit_cuda(*loaded.graph, plan, model, &maps);
    // What the plan implies, independently of the emitter: every fp16 MatMul/Gemm group of one
    // matrix whose A sits in the arena and whose k tile is whole swizzle rows.
    std::set<std::tuple<uint64_t, int64_t, int64_t, int>> expected;
    for (const Group& g : plan.groups) {
      if (g.kind != GroupKind::kGemm || !g.f16 || g.in_attention() || g.gemm.bk % 64 != 0) continue;
      const Node& n = *g.anchor;
      const AttrValue* ta = n.attr("transA");
      if (n.op == OpKind::kGemm && ta && std::get<int64_t>(*ta) != 0) continue;
      const GemmProblem pr = gemm_problem(g);
      if (pr.batch != 1) continue;
      const Value* a = n.inputs[0];
      auto fold = plan.ln_fold_of_gemm.find(&n);
      if (fold != plan.ln_fold_of_gemm.end()) a = plan.ln_folds[fold->second].x;
      const Placement& pl = plan.placement.at(plan.root(a));
      if (pl.space != Placement::kArena) continue;
      expected.insert({pl.offset, pr.m, pr.k, g.gemm.bm});
    }
    std::set<std::tuple<uint64_t, int64_t, int64_t, int>> got;
    for (const TensorMapSpec& t : maps) {
      EXPECT_EQ(tensor_map_problem(t), "");
      EXPECT_EQ(t.row_stride, t.cols * 2);
      EXPECT_EQ(t.box_cols, 64);
      EXPECT_LE(t.arena_offset + t.row_stride * (t.rows - 1) + t.cols * 2, plan.arena_bytes);
      EXPECT_TRUE(got.insert({t.arena_offset, t.rows, t.cols, t.box_rows}).second) << "a map listed twice";
    }
    EXPECT_EQ(got, expected);
    if (std::string(model).find("resnet") == std::string::npos) EXPECT_FALSE(maps.empty());
    // The table and its uses.
    if (!maps.empty())
      EXPECT_NE(src.find(str_cat("__constant__ TensorMap mono_tmaps[", maps.size(), "];")), std::string::npos);
    const std::regex use("&mono_tmaps\\[([0-9]+)\\]");
    std::set<size_t> used;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), use); it != std::sregex_iterator(); ++it)
      used.insert(std::stoul((*it)[1].str()));
    EXPECT_EQ(used.size(), maps.size()) << "every map used, no index beyond the table";
    if (!used.empty()) EXPECT_LT(*used.rbegin(), maps.size());
    // Off, and fp32: the cp.async loaders, no table.
    po.tensor_a = false;
    std::vector<TensorMapSpec> none;
    EXPECT_EQ(emit_cuda(*loaded.graph, plan_kernel(*loaded.graph, po), model, &none).find("TensorK<"), std::string::npos);
    EXPECT_TRUE(none.empty());
    po = PlanOptions{};
    EXPECT_EQ(emit_cuda(*loaded.graph, plan_kernel(*loaded.graph, po), model, &none).find("mono_tmaps"), std::string::npos);
    EXPECT_TRUE(none.empty());
  }
}

// The default k tile of 128 (PlanOptions::gemm_bk auto) is taken only where a tile fits the
// context; with too little shared memory for it the menu's k tile is used, and every GEMM's
// schedule is valid. An explicit k tile that fits no tile is an error naming the node.
TEST(Codegen, AutoKTileFallsBackWhereItDoesNotFit) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions po;
  po.precision = Precision::kF16;
  auto check = [&](const KernelPlan& p, bool expect_128) {
    bool any_128 = false;
    for (const Group& g : p.groups) {
      if (g.kind != GroupKind::kGemm || g.in_attention()) continue;
      EXPECT_EQ(gemm_schedule_problem(g.f16, g.gemm, p.ctx, nullptr), "") << g.anchor->name;
      any_128 = any_128 || g.gemm.bk == 128;
    }
    EXPECT_EQ(any_128, expect_128);
  };
  check(plan_kernel(*loaded.graph, po), true);  // FFN2's K = 128
  po.smem_limit = 80 * 1024;                    // BK 128 needs >= 104 KB at 4 stages
  check(plan_kernel(*loaded.graph, po), false);
  po.gemm_bk = 128;
  try {
    plan_kernel(*loaded.graph, po);
    ADD_FAILURE() << "a k tile that fits no tile was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a k tile of 128"), std::string::npos) << e.what();
  }
}

// The manifest carries the tensor maps, and a manifest whose map would reach beyond the arena
// or break the encoder's limits is refused with the map's number.
TEST(Codegen, ManifestTensorMapsRoundTripAndAreChecked) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions po;
  po.precision = Precision::kF16;
  const BuiltKernel built = build_kernel(*loaded.graph, po, "tiny-bert", NvrtcOptions{}, false);
  ASSERT_FALSE(built.manifest.tensor_maps.empty());
  const std::string dir = ::testing::TempDir() + "/mono_tmap_artifact";
  write_artifact(dir, *loaded.graph, built);
  const Manifest m = read_manifest(dir);
  ASSERT_EQ(m.tensor_maps.size(), built.manifest.tensor_maps.size());
  EXPECT_TRUE(m.tensor_maps == built.manifest.tensor_maps);  // every field of every map
  // Corrupt the last map: past the arena, then a box of 300 rows.
  std::string text;
  {
    std::ifstream in(dir + "/manifest.json");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto rewrite = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.rfind(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    std::ofstream(dir + "/manifest.json") << t;
  };
  const std::string off = str_cat("\"arena_offset\": ", m.tensor_maps.back().arena_offset);
  rewrite(off, str_cat("\"arena_offset\": ", m.arena_bytes));
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a map beyond the arena was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(str_cat("tensor map ", m.tensor_maps.size() - 1, " reaches beyond the arena")),
              std::string::npos)
        << e.what();
  }
  rewrite(off, "\"arena_offset\": -16");
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a negative arena offset was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("negative arena offset"), std::string::npos) << e.what();
  }
  rewrite(str_cat("\"box_rows\": ", m.tensor_maps.back().box_rows), "\"box_rows\": 300");
  try {
    read_manifest(dir);
    ADD_FAILURE() << "a 300-row box was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("box rows"), std::string::npos) << e.what();
  }
}

// Attention's K^T (the key GEMM's epilogue transposes so that its stores run along m) is
// stored [.., S, D] and read by QK^T as [N][K]; Q and V are not (their stores run along n).
TEST(Codegen, KeyTransposeIsStoredSwapped) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  const KernelPlan p = plan_kernel(*loaded.graph, PlanOptions{});
  ASSERT_EQ(p.swapped_last2.size(), 2u);  // one per layer
  for (const Value* v : p.swapped_last2) EXPECT_NE(v->producer->name.find("Mul_1"), std::string::npos) << v->name;
  PlanOptions off;
  off.swap_b_operands = false;
  EXPECT_TRUE(plan_kernel(*loaded.graph, off).swapped_last2.empty());
}

}  // namespace
}  // namespace mono
