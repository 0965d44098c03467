// The paths of generated code, planned and emitted without a GPU: tile-packed weights, flash
// attention, 8-wide epilogues, causal masks, tensor maps, packed constants, k tiles, the
// swapped key layout, split-K's splits finishing together. (codegen_test.cc: every tiny model
// compiled whole; codegen_cnn_test.cc: the convolutional networks' paths.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/ops/pool.h"
#include "compiler/passes/passes.h"
#include "compiler/backend/build.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/support/error.h"
#include "tests/codegen/tiny_model.h"
#include "tests/lib/test_models.h"

namespace mono {
namespace {

// Tile-packed weights (KernelPlan::weight_tiles): every fp16 MatMul/Gemm with constant 2-D
// weights (its B) reads them packed tile by tile for its schedule; the packed blob holds element
// (r, k) of the [rows][K] operand at block (r / rows_tile, k / bk), row r % rows_tile, column
// k % bk of a (bk + 8)-element row, padding zero; the kernel compiles without spills.
// Convolutions' weights (their A) are not tiled.
TEST(Codegen, TileWeightsArePackedTileByTile) {
  {
    LoadResult r = load_tiny("tiny-resnet-opset20");
    PlanOptions po = fp16_options();
    const KernelPlan p = plan_kernel(*r.graph, po);
    // Channels-last convolutions read their weights as B, [F][KH*KW*C], packed as a Gemm's
    // (every convolution of tiny-resnet is channels-last, its stem's 3 channels padded to 8);
    // standard ones read them row by row as A.
    for (const auto& [node, suffix] : p.weight_tiles) {
      if (node->op == OpKind::kConv) {
        EXPECT_TRUE(channels_last_layout(*node)) << node->name;
      }
    }
    int convs = 0, last = 0;
    for (const Group& g : p.groups) {
      convs += g.kind == GroupKind::kConvGemm;
      last += g.kind == GroupKind::kConvGemm && channels_last_layout(*g.anchor);
      if (g.kind == GroupKind::kConvGemm && channels_last_layout(*g.anchor)) {
        ASSERT_EQ(p.weight_tiles.count(g.anchor), 1u) << g.anchor->name;
        EXPECT_EQ(p.weight_tiles.at(g.anchor).tile_rows, g.gemm.bn);
      }
    }
    EXPECT_GT(last, 0);
    EXPECT_EQ(convs, last);
  }
  for (const char* model : {"tiny-bert-opset17", "tiny-vit-opset20"}) {
    SCOPED_TRACE(model);
    LoadResult loaded = load_tiny(model);
    PlanOptions po = fp16_options();
    BuiltKernel b = build_kernel(*loaded.graph, po, model, NvrtcOptions{}, /*compile=*/true);
    const KernelPlan& p = b.plan;
    EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
    EXPECT_NE(b.source.find("BulkTileK<half_t> "), std::string::npos);
    int gemms = 0, wgmma = 0;
    for (const Group& g : p.groups)
      if (g.f16 && !g.runs_fused() && g.kind == GroupKind::kGemm && p.root(g.anchor->inputs[1])->is_constant() &&
          g.anchor->inputs[1]->type.rank() == 2) {
        ++gemms;
        ASSERT_EQ(p.weight_tiles.count(g.anchor), 1u) << g.anchor->name;
        const Packing& t = p.weight_tiles.at(g.anchor);
        EXPECT_EQ(t.tile_rows, g.gemm.bn);
        EXPECT_EQ(t.tile_k, g.gemm.bk);
        EXPECT_EQ(t.transposed, g.anchor->op == OpKind::kMatMul) << "MatMul weights are [K][N] in the model";
        EXPECT_EQ(t.swizzled, g.gemm.wgmma) << "wgmma tiles read their weights swizzled";
        wgmma += g.gemm.wgmma;
      }
    EXPECT_GT(wgmma, 0) << "the projections of both models run on wgmma";
    ASSERT_GT(gemms, 0);
    EXPECT_EQ(static_cast<int>(p.weight_tiles.size()), gemms);
    const std::vector<unsigned char> blob = pack_weights(p);
    for (const auto& [node, tiles] : p.weight_tiles) {
      const Value* w = p.root(node->inputs[1]);
      const Packing packing = p.packing(*node, 1);
      ASSERT_TRUE(packing == tiles && packing.tiled()) << packing.str();
      struct {
        int64_t rows, bk;
      } t{packing.tile_rows, packing.tile_k};
      const bool nk = packing.transposed;
      const Shape& s = w->type.shape;
      const int64_t rows = nk ? s[1] : s[0], K = nk ? s[0] : w->type.numel() / s[0];
      const Tensor h = w->constant->cast(DType::kF16);
      const uint16_t* src = static_cast<const uint16_t*>(h.raw());
      const uint16_t* dst = reinterpret_cast<const uint16_t*>(blob.data() + p.constant_offset(w, packing));
      // Padded: a block's rows are bk + 8 halves. Swizzled (wgmma): unpadded, [bk/64][rows][64],
      // the 16-byte chunk c of row rr at chunk c ^ (rr % 8).
      const int64_t ld = packing.swizzled ? t.bk : t.bk + 8, kts = (K + t.bk - 1) / t.bk,
                    row_tiles = (rows + t.rows - 1) / t.rows;
      std::vector<bool> seen(static_cast<size_t>(row_tiles * kts * t.rows * ld), false);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t block = r / t.rows * kts + k / t.bk, rr = r % t.rows, kk = k % t.bk;
          const int64_t at = packing.swizzled ? block * t.rows * ld + (kk / 64) * t.rows * 64 + rr * 64 +
                                                    (((kk % 64) / 8) ^ (rr % 8)) * 8 + kk % 8
                                              : (block * t.rows + rr) * ld + kk;
          ASSERT_EQ(dst[at], src[nk ? k * rows + r : r * K + k]) << node->name << " (" << r << ", " << k << ")";
          seen[at] = true;
        }
      for (size_t i = 0; i < seen.size(); ++i)
        if (!seen[i]) {
          ASSERT_EQ(dst[i], 0) << node->name << ": padding element " << i << " is not zero";
        }
    }
  }
}

// FlashAttention has one head size D for Q, K, V and O: an attention whose V is narrower than Q
// (found in review: the flash item staged V and wrote O with Q's width, past the output's end)
// keeps the three-phase path, while the same graph with equal head sizes runs flash.
TEST(Codegen, FlashAttentionOnlyWhereVHasQsHeadSize) {
  for (const int dv : {32, 64}) {
    SCOPED_TRACE(dv);
    const std::string text = str_cat(
        "graph g (opset 20) {\n"
        "  input %x: f32[64,64]\n"
        "  const %wq: f32[64,64] = <4096 elements>\n"
        "  const %wk: f32[64,64] = <4096 elements>\n"
        "  const %wv: f32[64,", dv, "] = <", 64 * dv, " elements>\n"
        "  %q: f32[64,64] = MatMul(%x, %wq) @q\n"
        "  %k: f32[64,64] = MatMul(%x, %wk) @k\n"
        "  %kt: f32[64,64] = Transpose(%k) {perm=[1, 0]} @kt\n"
        "  %v: f32[64,", dv, "] = MatMul(%x, %wv) @v\n"
        "  %s: f32[64,64] = MatMul(%q, %kt) @s\n"
        "  %p: f32[64,64] = Softmax(%s) {axis=-1} @p\n"
        "  %o: f32[64,", dv, "] = MatMul(%p, %v) @o\n"
        "  %y: f32[64,", dv, "] = Relu(%o) @y\n"
        "  output %y\n}\n");
    auto g = ir_graph(text);
    PlanOptions po = fp16_options();
    const KernelPlan p = plan_kernel(*g, po);
    int heads = 0, flash = 0;
    for (const Group& grp : p.groups) {
      heads += !grp.fused.empty();
      flash += grp.flash;
    }
    EXPECT_EQ(heads, 1);
    EXPECT_EQ(flash, dv == 64 ? 1 : 0);
  }
}

// The fp16 plan of a graph, and its (last) attention head.
KernelPlan plan_f16(const Graph& g) { return plan_kernel(g, fp16_options()); }
const Group* attention_head(const KernelPlan& p) {
  const Group* head = nullptr;
  for (const Group& grp : p.groups)
    if (!grp.fused.empty()) head = &grp;
  return head;
}

// Past kFlashWholeKeys (256) keys a flash head streams K and V in chunks (FlashStream, an online
// softmax) instead of holding them whole; that needs a softmax without an epilogue, since the
// probabilities are never normalized before P V: with a NaN guard after it, 300 keys keep the
// three-phase path, while 256 keys stay FlashAttention with or without the guard.
TEST(Codegen, FlashStreamsKeysPastWhatAnItemHolds) {
  for (const int keys : {256, 300}) {
    for (const bool guard : {false, true}) {
      SCOPED_TRACE(str_cat(keys, " keys", guard ? ", NaN guard" : ""));
      const std::string text = str_cat(
          "graph g (opset 20) {\n"
          "  input %x: f32[64,32]\n"
          "  input %m: f32[", keys, ",32]\n"
          "  const %w: f32[32,32] = <1024 elements>\n"
          "  const %zero: f32[] = <1 elements>\n"
          "  %q = MatMul(%x, %w)\n"
          "  %k = MatMul(%m, %w)\n"
          "  %kt = Transpose(%k) {perm=[1, 0]}\n"
          "  %v = MatMul(%m, %w)\n"
          "  %s = MatMul(%q, %kt)\n"
          "  %p = Softmax(%s) {axis=-1}\n",
          guard ? "  %nan = IsNaN(%p)\n  %pg = Where(%nan, %zero, %p)\n  %o = MatMul(%pg, %v)\n"
                : "  %o = MatMul(%p, %v)\n",
          "  output %o\n}\n");
      auto g = ir_graph(text);
      const KernelPlan p = plan_f16(*g);
      const Group* head = attention_head(p);
      ASSERT_NE(head, nullptr);
      const bool stream = keys > 256;
      EXPECT_EQ(head->flash, !(stream && guard));
      EXPECT_EQ(head->flash_chunk, stream && !guard ? 256 : 0);
      const std::string src = emit_cuda(*g, p, "test");
      EXPECT_EQ(src.find("FlashStream<32, 1, 16>") != std::string::npos, stream && !guard);
      EXPECT_EQ(src.find("FlashAttention<32, 1, ") != std::string::npos, !stream);
      if (head->flash_chunk) EXPECT_EQ(src.find("p_fn"), std::string::npos) << "a streamed head has no probabilities' functor";
    }
  }
}

// One attention head of `rows` query rows over 300 keys (streamed: more than kFlashWholeKeys),
// head size d.
std::unique_ptr<Graph> streamed_head_graph(int rows, int d) {
  return ir_graph(str_cat("graph g (opset 20) {\n"
                          "  input %x: f32[", rows, ",", d, "]\n"
                          "  input %m: f32[300,", d, "]\n"
                          "  const %w: f32[", d, ",", d, "] = <", d * d, " elements>\n"
                          "  %q = MatMul(%x, %w)\n"
                          "  %k = MatMul(%m, %w)\n"
                          "  %kt = Transpose(%k) {perm=[1, 0]}\n"
                          "  %v = MatMul(%m, %w)\n"
                          "  %s = MatMul(%q, %kt)\n"
                          "  %p = Softmax(%s) {axis=-1}\n"
                          "  %o = MatMul(%p, %v)\n"
                          "  output %o\n}\n"));
}

// A streamed head whose items of 32 query rows take more than one round of the grid runs 128 rows
// an item (FlashStream's 8 row blocks, chunks of 128 keys) where those fit one round: every item
// streams all of K and V. 4000 rows (125 items of 32) keep 32; 8192 (256 of 32) take 128 (64).
TEST(Codegen, StreamedHeadsTakeWideItemsWhereTheyFitOneRound) {
  for (const int rows : {4000, 8192}) {
    SCOPED_TRACE(str_cat(rows, " rows"));
    auto g = streamed_head_graph(rows, 32);
    const KernelPlan p = plan_f16(*g);
    const Group* head = attention_head(p);
    ASSERT_NE(head, nullptr);
    ASSERT_TRUE(head->flash);
    const bool wide = rows > 4224;
    EXPECT_EQ(head->gemm.bm, wide ? 128 : 32);
    EXPECT_EQ(head->items, wide ? 64 : 125);
    EXPECT_EQ(head->flash_chunk, wide ? 128 : 256);
    EXPECT_EQ(gemm_schedule_problem(true, head->gemm, p.ctx, nullptr), "") << "the S tile as printed";
    const std::string src = emit_cuda(*g, p, "test");
    EXPECT_NE(src.find(wide ? "FlashStream<32, 8, 8>" : "FlashStream<32, 2, 16>"), std::string::npos);
  }
}

// The 128-row streamed item compiles for sm_90 without spills at head sizes 32 (FlashStream's 8
// row blocks) and 64 (FlashWg, on the warpgroup MMA), its shared memory within the plan's.
TEST(Codegen, WideStreamedHeadsCompileWithoutSpills) {
  for (const int d : {32, 64}) {
    SCOPED_TRACE(str_cat("head size ", d));
    auto g = streamed_head_graph(8192, d);
    BuiltKernel b = build_kernel(*g, fp16_options(), "wide_stream", NvrtcOptions{}, /*compile=*/true);
    EXPECT_NE(b.source.find(d == 64 ? std::string("FlashWg<64>") : str_cat("FlashStream<", d, ", 8, 8>")), std::string::npos);
    EXPECT_GT(b.compiled.cubin.size(), 1000u) << b.compiled.log;
    EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
    EXPECT_EQ(b.compiled.usage.spill_load_bytes, 0) << b.compiled.log;
  }
}

// Swin's shifted window as exported: a Pad, a roll (two Slices and a Concat) and the window
// partition's Transpose. The Pad and the Slices are read only by groups that load by index, so
// the Concat's group computes them where it reads them (Group::at_read): two stages instead of
// four, nothing of theirs in the arena. A movement a GEMM reads stays a stage of its own; so
// does one that is a graph output.
TEST(Codegen, MovementsReadOnlyByPointwiseGroupsAreComputedWhereRead) {
  auto g = ir_graph(R"(graph g (opset 17) {
  input %x: f32[1,8,8,16]
  const %pads: i64[8] = [0, 1, 1, 0, 0, 1, 1, 0]
  const %s0: i64[1] = [3]
  const %e0: i64[1] = [10]
  const %z: i64[1] = [0]
  const %one: i64[1] = [1]
  %a = Relu(%x)
  %p = Pad(%a, %pads)
  %t1 = Slice(%p, %s0, %e0, %one)
  %t2 = Slice(%p, %z, %s0, %one)
  %r = Concat(%t1, %t2) {axis=1}
  %y = Transpose(%r) {perm=[0, 2, 1, 3]}
  output %y
})");
  for (const Precision precision : {Precision::kF32, Precision::kF16}) {
    SCOPED_TRACE(precision == Precision::kF16 ? "fp16" : "fp32");
    PlanOptions po;
    po.settings.precision = precision;
    const KernelPlan plan = plan_kernel(*g, po);
    std::map<std::string, const Group*> by_anchor;
    for (const Group& grp : plan.groups) by_anchor[grp.anchor->outputs[0]->name] = &grp;
    for (const char* m : {"p", "t1", "t2"}) {
      EXPECT_TRUE(by_anchor.at(m)->at_read) << m;
      EXPECT_EQ(plan.placement.at(plan.root(by_anchor.at(m)->output)).space, Placement::kComputed) << m;
      EXPECT_EQ(by_anchor.at(m)->stage, by_anchor.at("r")->stage) << m << ": its inputs live until its reader's stage";
    }
    EXPECT_FALSE(by_anchor.at("r")->at_read) << "Concat + Transpose: its own group, the reader";
    EXPECT_EQ(plan.stages.size(), 2u) << "Relu; Concat";
    for (const Stage& st : plan.stages)
      for (int id : st.groups) EXPECT_FALSE(plan.groups[id].at_read);
    BuiltKernel b = build_kernel(*g, po, "roll", NvrtcOptions{}, /*compile=*/true);
    for (const char* lambda : {"at_read0", "at_read1", "at_read2"})
      EXPECT_NE(b.source.find(str_cat("auto ", lambda, " = [&](long long i) -> float {")), std::string::npos) << b.source;
    EXPECT_EQ(b.source.find("auto at_read3"), std::string::npos) << "p once, though both Slices read it";
    EXPECT_GT(b.compiled.cubin.size(), 1000u) << b.compiled.log;
  }
  // Read by a GEMM, or a graph output: stored.
  auto h = ir_graph(R"(graph h (opset 17) {
  input %x: f32[1,8,8,16]
  const %s0: i64[1] = [3]
  const %z: i64[1] = [0]
  const %one: i64[1] = [1]
  const %w: f32[16,16] = <256 elements>
  %a = Relu(%x)
  %q = Slice(%a, %z, %s0, %one)
  %m = MatMul(%q, %w)
  %o = Slice(%a, %z, %s0, %one)
  %e = Exp(%o)
  output %m
  output %o
  output %e
})");
  const KernelPlan plan = plan_kernel(*h, fp16_options());
  for (const Group& grp : plan.groups) EXPECT_FALSE(grp.at_read) << grp.nodes();
  EXPECT_EQ(plan.stages.size(), 3u);
}

// A rotary embedding's rotate_half as exported (Llama): Concat(Neg(x2), x1) of two Slices of x.
// The Neg joins x2's Slice as its epilogue, so that group runs in x1's Slice's stage anyway:
// computed at read, x1 would save no barrier and cost the Concat's threads its index arithmetic
// (the zoo's llama 187.2 -> 188.6 us, H200, run231). It stays stored.
TEST(Codegen, MovementsThatSaveNoStageAreStored) {
  auto g = ir_graph(R"(graph g (opset 17) {
  input %x: f32[1,4,16,16]
  const %z: i64[1] = [0]
  const %h: i64[1] = [8]
  const %f: i64[1] = [16]
  const %ax: i64[1] = [3]
  %a = Relu(%x)
  %x1 = Slice(%a, %z, %h, %ax)
  %x2 = Slice(%a, %h, %f, %ax)
  %n = Neg(%x2)
  %r = Concat(%n, %x1) {axis=-1}
  output %r
})");
  const KernelPlan plan = plan_kernel(*g, fp16_options());
  for (const Group& grp : plan.groups) EXPECT_FALSE(grp.at_read) << grp.nodes();
  EXPECT_EQ(plan.stages.size(), 3u);
  EXPECT_TRUE(plan.computed.empty());
}

// A causal mask added to the scores as a constant (GPT-2's form) over more than 256 keys: the
// streamed head applies it by index too (FlashStream's CAUSAL mode, the mask no longer packed),
// with the diagonal offset keys - rows.
TEST(Codegen, StreamedHeadsApplyACausalMaskByIndex) {
  const int rows = 300, keys = 320;
  auto g = ir_graph(str_cat("graph g (opset 20) {\n"
                            "  input %x: f32[", rows, ",64]\n"
                            "  input %m: f32[", keys, ",64]\n"
                            "  const %w: f32[64,64] = <4096 elements>\n"
                            "  const %mask: f32[", rows, ",", keys, "] = <", rows * keys, " elements>\n"
                            "  %q = MatMul(%x, %w)\n"
                            "  %k = MatMul(%m, %w)\n"
                            "  %kt = Transpose(%k) {perm=[1, 0]}\n"
                            "  %v = MatMul(%m, %w)\n"
                            "  %s = MatMul(%q, %kt)\n"
                            "  %sm = Add(%s, %mask)\n"
                            "  %p = Softmax(%sm) {axis=-1}\n"
                            "  %o = MatMul(%p, %v)\n"
                            "  output %o\n}\n"));
  Value* mask = nullptr;
  for (const auto& v : g->values())
    if (v->name == "mask") mask = v.get();
  ASSERT_NE(mask, nullptr);
  std::vector<float> causal(static_cast<size_t>(rows) * keys);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < keys; ++k) causal[static_cast<size_t>(r) * keys + k] = k <= r + (keys - rows) ? 0.0f : -3.4028235e38f;
  mask->constant = std::make_shared<Tensor>(Tensor::from_floats(mask->type.shape, causal));
  const KernelPlan p = plan_f16(*g);
  const Group* head = attention_head(p);
  ASSERT_NE(head, nullptr);
  EXPECT_TRUE(head->flash);
  EXPECT_EQ(head->flash_chunk, 256);
  EXPECT_NE(head->causal_mask, nullptr);
  for (const auto& c : p.constants) EXPECT_NE(c.value, mask) << "the causal mask is still packed";
  const std::string src = emit_cuda(*g, p, "test");
  EXPECT_NE(src.find(", 16, true>"), std::string::npos) << "FlashStream<64, RB, 16, true>";
  EXPECT_NE(src.find("smem, 20);"), std::string::npos) << "the diagonal offset keys - rows";
}

// PyTorch's nn.MultiheadAttention (torchvision's ViT): one Q/K/V product viewed as
// [rows][3][E], the 3 moved first, each part selected by a Gather, Q and K scaled (ViT's
// scaled_dot_product_attention). After simplification the parts are three GEMMs (split_gemm
// select_parts), no Gather is left, K (transposed, then viewed with a leading axis of size 1, then
// scaled) is stored with its last two axes swapped, and the attention runs flash; before, K came
// from a Gather and the attention ran three phases through the arena.
TEST(Codegen, SelectedProjectionPartsRunAsGemmsIntoFlashAttention) {
  auto g = ir_graph(R"(graph g (opset 20) {
  input %x: f32[50,128]
  const %w: f32[128,384] = <49152 elements>
  const %view: i64[4] = [50, 1, 3, 128]
  const %ax0: i64[1] = [0]
  const %ax3: i64[1] = [3]
  const %i0: i64[] = [0]
  const %i1: i64[] = [1]
  const %i2: i64[] = [2]
  const %heads: i64[3] = [50, 2, 64]
  const %q4: i64[4] = [1, 2, 50, 64]
  const %k4: i64[4] = [1, 2, 64, 50]
  const %sc: f32[] = <1 elements>
  %y = MatMul(%x, %w)
  %v = Reshape(%y, %view)
  %u = Unsqueeze(%v, %ax0)
  %t = Transpose(%u) {perm=[3, 1, 2, 0, 4]}
  %s = Squeeze(%t, %ax3)
  %q = Gather(%s, %i0) {axis=0}
  %k = Gather(%s, %i1) {axis=0}
  %vv = Gather(%s, %i2) {axis=0}
  %qh = Reshape(%q, %heads)
  %kh = Reshape(%k, %heads)
  %vh = Reshape(%vv, %heads)
  %qt = Transpose(%qh) {perm=[1, 0, 2]}
  %kt = Transpose(%kh) {perm=[1, 2, 0]}
  %vt = Transpose(%vh) {perm=[1, 0, 2]}
  %q5 = Reshape(%qt, %q4)
  %k5 = Reshape(%kt, %k4)
  %qs = Mul(%q5, %sc)
  %ks = Mul(%k5, %sc)
  %sco = MatMul(%qs, %ks)
  %p = Softmax(%sco) {axis=-1}
  %o = MatMul(%p, %vt)
  output %o
})");
  simplify(*g);
  for (const auto& n : g->nodes()) EXPECT_NE(n->op, OpKind::kGather) << n->name;
  PlanOptions po = fp16_options();
  const KernelPlan p = plan_kernel(*g, po);
  int gemms = 0, flash = 0;
  for (const Group& grp : p.groups) {
    gemms += grp.kind == GroupKind::kGemm && grp.fused.empty() && grp.fused_into < 0;
    flash += grp.flash;
  }
  EXPECT_EQ(gemms, 3) << "one GEMM a part";
  EXPECT_EQ(flash, 1);
  EXPECT_EQ(p.swapped_last2.size(), 1u) << "K";
}

// How many epilogue structs of a source declare 8-wide stores.
int vec8_epilogues(const std::string& src) {
  const std::regex head(R"(struct G[0-9]+Epilogue \{)");
  std::vector<size_t> starts;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), head); it != std::sregex_iterator(); ++it)
    starts.push_back(static_cast<size_t>(it->position()));
  int vec8 = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t next = i + 1 < starts.size() ? starts[i + 1] : std::string::npos;
    vec8 += src.substr(starts[i], next == std::string::npos ? next : next - starts[i]).find("vec8_stores = true") !=
            std::string::npos;
  }
  return vec8;
}

// fp16 GEMM epilogues whose stores run along n in whole chunks of 8 store 8 elements at once
// (epilogue.cuh vec8_stores); never one whose stores run along m (a transposed output that no
// GEMM reads as B, so it is not stored swapped), none in fp32 (GemmF32 has no chunked epilogue).
TEST(Codegen, VecEpilogueOnlyWhereStoresRunAlongN) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  auto source = [&](const Graph& g, bool f16) {
    PlanOptions po;
    po.settings.precision = f16 ? Precision::kF16 : Precision::kF32;
    return emit_cuda(g, plan_kernel(g, po), "test");
  };
  const std::string bert = source(*loaded.graph, true);
  EXPECT_GE(vec8_epilogues(bert), 3) << "Q, K and V at least";
  EXPECT_NE(bert.find("store8("), std::string::npos);
  EXPECT_EQ(vec8_epilogues(source(*loaded.graph, false)), 0);
  // y = (x W)^T as the graph's output: stored along m, one element at a time.
  auto transposed = ir_graph(R"(graph g (opset 17) {
  input %x: f32[64,128]
  const %w: f32[128,96] = <12288 elements>
  %y = MatMul(%x, %w)
  %t = Transpose(%y) {perm=[1,0]}
  output %t
})");
  const std::string t = source(*transposed, true);
  EXPECT_NE(t.find("stored transposed"), std::string::npos);
  EXPECT_EQ(vec8_epilogues(t), 0);
}

// An epilogue step after a Transpose reads its other operands at the step's own (permuted)
// index: ConvNeXt's residual Add after the Transpose back to NCHW read x at the NHWC index and
// gave a wrong answer (issue 18). Here y = x + T(MatMul(T(x), W) * s) with T the NCHW <-> NHWC
// transposes: x [1,32,8,8] must be read at c * 64 + h * 8 + w, where the anchor's output is
// [n, h, w, c] = [e0_0, e0_1, e0_2, e0_3].
TEST(Codegen, EpilogueOperandAfterTransposeReadsThePermutedIndex) {
  auto g = ir_graph(R"(graph g (opset 17) {
  input %x: f32[1,32,8,8]
  const %w: f32[32,32] = <1024 elements>
  const %s: f32[32] = <32 elements>
  %t = Transpose(%x) {perm=[0,2,3,1]}
  %y = MatMul(%t, %w)
  %z = Mul(%y, %s)
  %tb = Transpose(%z) {perm=[0,3,1,2]}
  %r = Add(%x, %tb)
  output %r
})");
  const std::string src = emit_cuda(*g, plan_kernel(*g, PlanOptions{}), "test");
  EXPECT_NE(src.find("add3_in0[e0_3 * 64LL + e0_1 * 8LL + e0_2]"), std::string::npos) << src;
  EXPECT_EQ(src.find("add3_in0[e0_1 * 64LL + e0_2 * 8LL + e0_3]"), std::string::npos);
}

// GPT-2 adds its causal mask to the scores as a constant tensor (0 on and below the diagonal,
// -FLT_MAX above): the flash heads apply it by index instead (Group::causal_mask, FlashAttention
// CAUSAL) and the constant is no longer packed; BERT has no mask; a mask that is not causal, or
// whose masked entries are not far below any score (-1e4), stays a tensor the scores add.
TEST(Codegen, CausalMasksAreAppliedByIndex) {
  LoadResult gpt2 = load_tiny("tiny-gpt2-opset20");
  PlanOptions po = fp16_options();
  const KernelPlan plan = plan_kernel(*gpt2.graph, po);
  int heads = 0;
  const Value* mask = nullptr;
  for (const Group& g : plan.groups)
    if (g.flash) {
      ++heads;
      ASSERT_NE(g.causal_mask, nullptr) << g.nodes();
      for (const Value* in : g.causal_mask->inputs)
        if (plan.root(in)->is_constant()) mask = plan.root(in);
    }
  EXPECT_EQ(heads, 2);
  ASSERT_NE(mask, nullptr);
  for (const auto& c : plan.constants) EXPECT_NE(c.value, mask) << "the causal mask is still packed";
  const std::string src = emit_cuda(*gpt2.graph, plan, "tiny-gpt2");
  EXPECT_NE(src.find("FlashAttention<16, 1, 1, true>"), std::string::npos);
  EXPECT_NE(src.find("smem, 0);"), std::string::npos) << "the items' diagonal offset: keys - rows = 0";

  LoadResult bert = load_tiny("tiny-bert-opset20");
  for (const Group& g : plan_kernel(*bert.graph, po).groups) EXPECT_EQ(g.causal_mask, nullptr) << g.nodes();

  // The same model with one entry of the mask changed: not causal, or not far enough below.
  std::vector<float> v = mask->constant->to_float_vector();
  const int64_t keys = mask->type.shape.back();
  for (const auto& [at, x] : std::vector<std::pair<int64_t, float>>{{1, 0.0f}, {keys, -1.0f}, {2, -1e4f}}) {
    std::vector<float> w = v;
    w[at] = x;
    const_cast<Value*>(mask)->constant = std::make_shared<Tensor>(Tensor::from_floats(mask->type.shape, w));
    for (const Group& g : plan_kernel(*gpt2.graph, po).groups) EXPECT_EQ(g.causal_mask, nullptr) << at << " " << x;
  }
  const_cast<Value*>(mask)->constant = std::make_shared<Tensor>(Tensor::from_floats(mask->type.shape, v));
  for (const Group& g : plan_kernel(*gpt2.graph, po).groups) EXPECT_EQ(g.causal_mask != nullptr, g.flash) << g.nodes();

  // The NaN guard reversed, Where(IsNaN(p), p, c): a masked probability would become c, so the
  // mask stays a tensor.
  for (const auto& n : gpt2.graph->nodes())
    if (n->op == OpKind::kWhere) std::swap(n->inputs[1], n->inputs[2]);
  int flash_heads = 0;
  for (const Group& g : plan_kernel(*gpt2.graph, po).groups) {
    flash_heads += g.flash;
    EXPECT_EQ(g.causal_mask, nullptr) << g.nodes();
  }
  EXPECT_EQ(flash_heads, 2);  // still flash heads: only their mask stays a tensor
}

// fp16 MatMul/Gemm activations are read through tensor maps (loaders.cuh TensorK): one map per
// distinct (operand, tile) pair, each describing the GEMM's A exactly as the plan places it
// (arena offset, M x K, row stride, the tile's rows as the box), every call passing an entry of
// a table of the listed size; none in fp32, or for convolutions (their A is the weights).
TEST(Codegen, ActivationsThroughTensorMaps) {
  for (const char* model : {"tiny-bert-opset17", "tiny-gpt2-opset20", "tiny-vit-opset20", "tiny-resnet-opset20"}) {
    SCOPED_TRACE(model);
    LoadResult loaded = load_tiny(model);
    PlanOptions po = fp16_options();
    const KernelPlan plan = plan_kernel(*loaded.graph, po);
    std::vector<TensorMapSpec> maps;
    const std::string src = emit_cuda(*loaded.graph, plan, model, &maps);
    // What the plan implies, independently of the emitter: every fp16 MatMul/Gemm group of one
    // matrix whose A sits in the arena and whose k tile is whole swizzle rows.
    std::set<std::tuple<uint64_t, int64_t, int64_t, int>> expected;
    for (const Group& g : plan.groups) {
      if (g.kind != GroupKind::kGemm || !g.f16 || g.runs_fused() || g.gemm.bk % 64 != 0) continue;
      const Node& n = *g.anchor;
      const AttrValue* ta = n.attr("transA");
      if (n.op == OpKind::kGemm && ta && std::get<int64_t>(*ta) != 0) continue;
      const GemmProblem pr = gemm_problem(g);
      if (pr.batch != 1) continue;
      const Value* a = n.inputs[0];
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
    if (std::string(model).find("resnet") == std::string::npos) {
      EXPECT_FALSE(maps.empty());
    }
    // The table and its uses.
    if (!maps.empty()) {
      EXPECT_NE(src.find(str_cat("__constant__ TensorMap mono_tmaps[", maps.size(), "];")), std::string::npos);
    }
    const std::regex use("&mono_tmaps\\[([0-9]+)\\]");
    std::set<size_t> used;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), use); it != std::sregex_iterator(); ++it)
      used.insert(std::stoul((*it)[1].str()));
    // In a layer loop, a map's index comes from a column of the loop's table.
    const std::regex looped("&mono_tmaps\\[(mono_layers[0-9]+)\\[layer\\]\\[([0-9]+)\\]\\]");
    const auto tables = layer_tables(src);
    for (auto it = std::sregex_iterator(src.begin(), src.end(), looped); it != std::sregex_iterator(); ++it)
      for (const std::vector<std::string>& row : tables.at((*it)[1].str())) used.insert(std::stoul(row.at(std::stoul((*it)[2].str()))));
    EXPECT_EQ(used.size(), maps.size()) << "every map used, no index beyond the table";
    if (!used.empty()) {
      EXPECT_LT(*used.rbegin(), maps.size());
    }
    // fp32: the cp.async loaders, no table.
    std::vector<TensorMapSpec> none;
    po = PlanOptions{};
    EXPECT_EQ(emit_cuda(*loaded.graph, plan_kernel(*loaded.graph, po), model, &none).find("mono_tmaps"), std::string::npos);
    EXPECT_TRUE(none.empty());
  }
}

// pack_weights packs the constants on all cores into disjoint ranges: every constant that is
// neither tiled nor transposed holds exactly its bytes in the plan's dtype, every byte outside
// the constants' ranges is zero, and packing twice gives the same blob.
TEST(Codegen, PackedWeightsHoldEachConstantInItsRange) {
  for (const char* model : {"tiny-resnet-opset20", "tiny-bert-opset17"}) {
    for (Precision precision : {Precision::kF32, Precision::kF16}) {
      SCOPED_TRACE(std::string(model) + (precision == Precision::kF16 ? " fp16" : " fp32"));
      LoadResult r = load_tiny(model);
      PlanOptions po;
      po.settings.precision = precision;
      const KernelPlan p = plan_kernel(*r.graph, po);
      const std::vector<unsigned char> blob = pack_weights(p);
      ASSERT_EQ(blob.size(), p.weights_bytes);
      EXPECT_EQ(pack_weights(p), blob);
      std::vector<bool> covered(blob.size(), false);
      int plain = 0;
      for (const KernelPlan::PackedConstant& c : p.constants) {
        ASSERT_LE(c.offset + c.bytes, blob.size());
        for (size_t i = c.offset; i < c.offset + c.bytes; ++i) covered[i] = true;
        if (c.packing.tiled() || c.packing.transposed) continue;
        const Tensor t = c.value->constant->cast(p.dtype_of(c.value));
        ASSERT_LE(t.nbytes(), c.bytes);
        EXPECT_EQ(std::memcmp(blob.data() + c.offset, t.raw(), t.nbytes()), 0) << c.value->name;
        ++plain;
      }
      EXPECT_GT(plain, 0);
      for (size_t i = 0; i < blob.size(); ++i)
        if (!covered[i]) ASSERT_EQ(blob[i], 0) << "byte " << i << " lies in no constant's range";
    }
  }
}

// The default k tile of 128 is taken only where a tile fits the context; with too little shared
// memory for it the menu's k tile is used, and every GEMM's schedule is valid.
TEST(Codegen, AutoKTileFallsBackWhereItDoesNotFit) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  PlanOptions po = fp16_options();
  auto check = [&](const KernelPlan& p, bool expect_128) {
    bool any_128 = false;
    for (const Group& g : p.groups) {
      if (g.kind != GroupKind::kGemm || g.runs_fused()) continue;
      EXPECT_EQ(gemm_schedule_problem(g.f16, g.gemm, p.ctx, nullptr), "") << g.anchor->name;
      any_128 = any_128 || g.gemm.bk == 128;
    }
    EXPECT_EQ(any_128, expect_128);
  };
  check(plan_kernel(*loaded.graph, po), true);  // FFN2's K = 128
  po.settings.smem_limit = 60 * 1024;           // BK 128 needs >= 68 KB at 4 stages (32x32)
  check(plan_kernel(*loaded.graph, po), false);
}

// Attention's K^T (the key GEMM's epilogue transposes so that its stores run along m) is
// stored [.., S, D] and read by QK^T as [N][K]; Q and V are not (their stores run along n).
TEST(Codegen, KeyTransposeIsStoredSwapped) {
  LoadResult loaded = load_tiny("tiny-bert-opset17");
  const KernelPlan p = plan_kernel(*loaded.graph, PlanOptions{});
  ASSERT_EQ(p.swapped_last2.size(), 2u);  // one per layer
  for (const Value* v : p.swapped_last2) EXPECT_NE(v->producer->name.find("Mul_1"), std::string::npos) << v->name;
}

// A split-K GEMM whose stage's work items all fit the grid at once lets the splits of a tile
// finish it together (split_k.cuh: the epilogue declares the stage's items, and the kernel takes
// that form only on a grid at least that large); planned for fewer multiprocessors than its
// items, it declares nothing and keeps the single reducer.
TEST(Codegen, SplitsFinishTogetherOnlyWhereTheStageFitsTheGrid) {
  auto g = ir_graph(R"(graph g (opset 20) {
  input %x: f32[128,3072]
  const %w: f32[3072,768] = <2359296 elements>
  %h = Relu(%x)
  %z = MatMul(%h, %w)
  %a = Relu(%z)
  %b = Sigmoid(%z)
  output %a
  output %b
})");  // z in the arena (read twice), where the epilogue stores 8 wide
  PlanOptions po = fp16_options();
  const KernelPlan plan = plan_kernel(*g, po);
  const Group* gemm = nullptr;
  for (const Group& grp : plan.groups)
    if (grp.kind == GroupKind::kGemm) gemm = &grp;
  ASSERT_NE(gemm, nullptr);
  ASSERT_GT(gemm->gemm.splits, 1) << gemm->gemm.str();
  ASSERT_LE(gemm->items, plan.ctx.grid());
  EXPECT_NE(emit_cuda(*g, plan, "m").find(str_cat("split_together_items = ", gemm->items, ";")), std::string::npos);
  // The same schedule planned for a grid smaller than its items.
  po.settings.sms = static_cast<int>(gemm->items) - 1;
  KernelPlan small = plan_kernel(*g, po);
  for (Group& grp : small.groups)
    if (grp.kind == GroupKind::kGemm) grp.gemm = gemm->gemm, grp.items = gemm->items;
  EXPECT_EQ(emit_cuda(*g, small, "m").find("split_together_items"), std::string::npos);
}


// A LayerNorm over fp16 rows a multiple of 256 long in Mono's own buffers loads and stores 16
// bytes at a time (rows.cuh layer_norm_row_v8); rows of another length, or a LayerNorm writing
// the caller's buffer (not promised 16-byte aligned), keep the element loop (layer_norm_row_f).
// The kernel compiles without spills.
TEST(Codegen, LayerNormRowsOf256sLoadSixteenBytesAtATime) {
  for (int len : {768, 100}) {
    for (bool graph_output : {false, true}) {
      SCOPED_TRACE(str_cat("len ", len, graph_output ? ", written to the graph output" : ""));
      auto g = ir_graph(str_cat("graph g (opset 20) {\n"
                                "  input %x: f32[128,", len, "]\n"
                                "  const %w: f32[", len, ",", len, "] = <", len * len, " elements>\n"
                                "  const %gamma: f32[", len, "] = <", len, " elements>\n"
                                "  const %beta: f32[", len, "] = <", len, " elements>\n"
                                "  %h = MatMul(%x, %w)\n"
                                "  %n = LayerNormalization(%h, %gamma, %beta) {axis=-1, epsilon=1e-05}\n",
                                graph_output ? "  output %n\n}\n" : "  %y = MatMul(%n, %w)\n  output %y\n}\n"));
      PlanOptions po = fp16_options();
      BuiltKernel b = build_kernel(*g, po, "ln", NvrtcOptions{}, /*compile=*/true);
      const bool v8 = len % 256 == 0 && !graph_output;
      EXPECT_EQ(b.source.find("layer_norm_row_v8(") != std::string::npos, v8);
      EXPECT_EQ(b.source.find("layer_norm_row_f(") != std::string::npos, !v8);
      EXPECT_EQ(b.compiled.usage.spill_store_bytes, 0) << b.compiled.log;
    }
  }
}

}  // namespace
}  // namespace mono
