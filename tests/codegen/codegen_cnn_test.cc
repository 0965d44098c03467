// The code generator on convolutional networks, without a GPU: channels-last geometry, one-row
// products as GEMVs, squeeze-and-excitation gates, grouped and depthwise convolutions in strips,
// the convolution cost model's defaults, tiles fitted to output channels, pointwise groups eight channels a thread. (codegen_test.cc: every tiny model and the GEMM,
// attention and epilogue paths.)
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "compiler/backend/build.h"
#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/support.h"
#include "compiler/passes/passes.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "tests/codegen/tiny_model.h"

namespace mono {
namespace {

// The kernel of g built with NVRTC for sm_90: its cubin (the build log on failure).
BuiltKernel compiled_kernel(const Graph& g, const PlanOptions& po, const char* name) {
  NvrtcOptions nvrtc;
  nvrtc.sm_arch = 90;
  BuiltKernel b = build_kernel(g, po, name, nvrtc, /*compile=*/true);
  EXPECT_GT(b.compiled.cubin.size(), 1000u) << b.compiled.log;
  return b;
}

// Two channels-last convolutions that differ only in their end padding (9x9 input, 3x3 stride 2:
// pads 1,1,1,1 give 5x5, pads 1,1,0,0 give 4x4) get geometry structs of their own: the struct
// was once named without its output extents, and the second convolution used the first's
// (found in review). Each chain is a region of its own: four convolutions, two transposes.
TEST(Codegen, ChannelsLastGeometryStructsAreNamedByEveryConstant) {
  const std::string text =
      "graph g (opset 20) {\n"
      "  input %x: f32[1,16,9,9]\n"
      "  const %w1: f32[16,16,3,3] = <2304 elements>\n"
      "  const %w2: f32[16,16,3,3] = <2304 elements>\n"
      "  const %p: f32[16,16,1,1] = <256 elements>\n"
      "  %a = Conv(%x, %w1) {pads=[1, 1, 1, 1], strides=[2, 2]}\n"
      "  %b = Conv(%x, %w2) {pads=[1, 1, 0, 0], strides=[2, 2]}\n"
      "  %c = Conv(%a, %p)\n  %c2 = Conv(%c, %p)\n  %c3 = Conv(%c2, %p)\n"
      "  %d = Conv(%b, %p)\n  %d2 = Conv(%d, %p)\n  %d3 = Conv(%d2, %p)\n"
      "  output %c3\n  output %d3\n}\n";
  auto g = ir_graph(text);
  simplify(*g);
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  const BuiltKernel k = build_kernel(*g, po, "m", NvrtcOptions{}, /*compile=*/false);
  EXPECT_NE(k.source.find("struct ConvNhwc_1x9x9x16_k3x3_s2x2_p1x1_d1x1_o5x5 "), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("struct ConvNhwc_1x9x9x16_k3x3_s2x2_p1x1_d1x1_o4x4 "), std::string::npos);
}

// A product of one row with constant weights is a GEMV (support.h gemv_form): a pointwise group
// with lanes of a warp per output. Gemm (either transB, transA with a [K,1] A), MatMul and a
// 1x1 Conv on one pixel qualify; more rows, padding, a second image or a non-constant B do not.
TEST(Codegen, OneRowProductsWithConstantWeightsAreGemvs) {
  struct Case { const char* body; bool gemv; };
  const Case cases[] = {
      {"  input %x: f32[1,64]\n  const %w: f32[10,64] = <640 elements>\n  const %c: f32[10] = <10 elements>\n"
       "  %y = Gemm(%x, %w, %c) {transB=1}\n  output %y\n", true},
      {"  input %x: f32[1,64]\n  const %w: f32[64,10] = <640 elements>\n"
       "  %y = Gemm(%x, %w) {alpha=0.5}\n  output %y\n", true},
      {"  input %x: f32[64,1]\n  const %w: f32[64,10] = <640 elements>\n"
       "  %y = Gemm(%x, %w) {transA=1}\n  output %y\n", true},
      {"  input %x: f32[1,1,64]\n  const %w: f32[64,10] = <640 elements>\n  %y = MatMul(%x, %w)\n  output %y\n", true},
      {"  input %x: f32[1,64,1,1]\n  const %w: f32[10,64,1,1] = <640 elements>\n  const %b: f32[10] = <10 elements>\n"
       "  %y = Conv(%x, %w, %b)\n  output %y\n", true},
      {"  input %x: f32[2,64]\n  const %w: f32[10,64] = <640 elements>\n  %y = Gemm(%x, %w) {transB=1}\n  output %y\n", false},
      {"  input %x: f32[1,64]\n  input %w: f32[64,10]\n  %y = MatMul(%x, %w)\n  output %y\n", false},
      {"  input %x: f32[2,64,1,1]\n  const %w: f32[10,64,1,1] = <640 elements>\n  %y = Conv(%x, %w)\n  output %y\n", false},
      {"  input %x: f32[1,64,2,2]\n  const %w: f32[10,64,1,1] = <640 elements>\n  %y = Conv(%x, %w)\n  output %y\n", false},
      {"  input %x: f32[1,64,1,1]\n  const %w: f32[10,64,1,1] = <640 elements>\n"
       "  %y = Conv(%x, %w) {pads=[1, 1, 1, 1], strides=[3, 3]}\n  output %y\n", false},
  };
  for (const Case& c : cases) {
    auto g = ir_graph(std::string("graph g (opset 20) {\n") + c.body + "}\n");
    for (Precision precision : {Precision::kF32, Precision::kF16}) {
      PlanOptions po;
      po.settings.precision = precision;
      const KernelPlan plan = plan_kernel(*g, po);
      ASSERT_EQ(plan.groups.size(), 1u) << c.body;
      EXPECT_EQ(plan.groups[0].kind == GroupKind::kPointwise, c.gemv) << c.body;
      const std::string src = emit_cuda(*g, plan, "test");
      EXPECT_EQ(src.find("lane(s) each") != std::string::npos, c.gemv) << src;
      if (!c.gemv) continue;
      compiled_kernel(*g, po, "gemv");  // each form compiles (scalar loads of a graph input, 16-byte ones of the arena)
    }
  }
}

// A Concat along the last axis of whole 8-element vectors (DenseNet's, channels-last) runs
// eight channels a thread (support.h channel_vectors): 16-byte loads of Mono's own fp16 buffers
// and a 16-byte store, the steps per element, a unit of work per eight elements. Integers (held
// as float they would round above 2^24), widths that are not whole vectors and other axes keep
// one element a thread.
TEST(Codegen, ConcatsOfWholeVectorsRunEightChannelsAThread) {
  struct Case { const char* body; bool vectors; };
  const Case cases[] = {
      {"  input %x: f32[2,3,16]\n  input %y: f32[2,3,8]\n  const %k: f32[24] = <24 elements>\n"
       "  %a = Relu(%x)\n  %b = Sigmoid(%y)\n  %c = Concat(%a, %b) {axis=2}\n  %d = Add(%c, %k)\n  %e = Relu(%d)\n"
       "  %f = Sigmoid(%e)\n  %h = Tanh(%e)\n  output %f\n  output %h\n", true},
      {"  input %x: i64[2,16]\n  input %y: i64[2,8]\n  %c = Concat(%x, %y) {axis=1}\n  %d = Mul(%c, %c)\n  output %d\n", false},
      {"  input %x: f32[2,3,12]\n  input %y: f32[2,3,8]\n  %a = Relu(%x)\n  %b = Relu(%y)\n"
       "  %c = Concat(%a, %b) {axis=2}\n  %e = Relu(%c)\n  output %e\n", false},
      {"  input %x: f32[2,16,8]\n  input %y: f32[2,8,8]\n  %a = Relu(%x)\n  %b = Relu(%y)\n"
       "  %c = Concat(%a, %b) {axis=1}\n  %e = Relu(%c)\n  output %e\n", false},
  };
  for (const Case& c : cases) {
    auto g = ir_graph(std::string("graph g (opset 20) {\n") + c.body + "}\n");
    PlanOptions po;
    po.settings.precision = Precision::kF16;
    const KernelPlan plan = plan_kernel(*g, po);
    const Group* concat = nullptr;
    for (const Group& grp : plan.groups)
      if (grp.anchor->op == OpKind::kConcat) concat = &grp;
    ASSERT_NE(concat, nullptr) << c.body;
    EXPECT_EQ(channel_vectors(plan, *concat), c.vectors) << c.body;
    const int64_t elements = concat->anchor->outputs[0]->type.numel() / (c.vectors ? 8 : 1);
    EXPECT_EQ(concat->items, ceil_div(elements, int64_t{plan.ctx.threads} * concat->pointwise.ilp)) << c.body;
    const std::string src = emit_cuda(*g, plan, "test");
    EXPECT_EQ(src.find("// eight channels") != std::string::npos, c.vectors) << src;
    if (!c.vectors) continue;
    EXPECT_NE(src.find("const u32x4 q = *reinterpret_cast<const u32x4*>(in0 + "), std::string::npos) << src;
    EXPECT_NE(src.find("*reinterpret_cast<u32x4*>(out + i8) = rq;"), std::string::npos) << src;
    compiled_kernel(*g, po, "concat");
  }
}

// MobileNetV2's inverted residual block goes channels-last whole: its depthwise convolution is
// a pointwise group eight channels a thread (one 16-byte load per window position, of x and of
// the weights packed [KH*KW][C], in fp16), the 1x1 convolutions plain GEMMs; the packed weights
// are the model's, transposed.
TEST(Codegen, DepthwiseConvsRunChannelsLastEightChannelsAThread) {
  const std::string text =
      "graph g (opset 20) {\n"
      "  input %x: f32[1,16,9,9]\n"
      "  const %w1: f32[32,16,1,1] = <512 elements>\n  const %b1: f32[32] = <32 elements>\n"
      "  const %w2: f32[32,1,3,3] = <288 elements>\n  const %b2: f32[32] = <32 elements>\n"
      "  const %w3: f32[16,32,1,1] = <512 elements>\n  const %w4: f32[16,16,1,1] = <256 elements>\n"
      "  const %lo: f32[] = [0.0]\n  const %hi: f32[] = [6.0]\n"
      "  %e = Conv(%x, %w1, %b1)\n  %ea = Clip(%e, %lo, %hi)\n"
      "  %d = Conv(%ea, %w2, %b2) {group=32, pads=[1, 1, 1, 1], strides=[2, 2]}\n  %da = Clip(%d, %lo, %hi)\n"
      "  %p = Conv(%da, %w3)\n  %q = Conv(%p, %w4)\n  output %q\n}\n";
  for (Precision precision : {Precision::kF32, Precision::kF16}) {
    auto g = ir_graph(text);
    simplify(*g);
    PlanOptions po;
    po.settings.precision = precision;
    const KernelPlan plan = plan_kernel(*g, po);
    const Group* dw = nullptr;
    int gemms = 0;
    for (const Group& grp : plan.groups) {
      if (channels_last_depthwise(*grp.anchor)) dw = &grp;
      gemms += grp.kind == GroupKind::kGemm;
    }
    ASSERT_NE(dw, nullptr) << "the depthwise convolution stayed channels-first";
    EXPECT_EQ(gemms, 3) << "the 1x1 convolutions are plain GEMMs over the pixels";
    EXPECT_EQ(dw->kind, GroupKind::kPointwise);
    EXPECT_TRUE(channel_vectors(plan, *dw));
    EXPECT_EQ(dw->pointwise.strip, 0);
    const Shape& ys = dw->anchor->outputs[0]->type.shape;
    ASSERT_EQ(ys, (Shape{1, 5, 5, 32}));
    EXPECT_EQ(dw->items, ceil_div(shape_numel(ys) / 8, int64_t{plan.ctx.threads} * dw->pointwise.ilp));
    // W [32][3][3][1] packed [9][32].
    const Value* w = plan.root(dw->anchor->inputs[1]);
    const Packing packing = plan.packing(*dw->anchor, 1);
    ASSERT_TRUE(packing.transposed && !packing.tiled()) << packing.str();
    const std::vector<unsigned char> blob = pack_weights(plan);
    const Tensor want = w->constant->cast(plan.dtype_of(w));
    const size_t es = dtype_size(want.dtype());
    const unsigned char* packed = blob.data() + plan.constant_offset(w, packing);
    const unsigned char* model = static_cast<const unsigned char*>(want.raw());
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t k = 0; k < 9; ++k)
        ASSERT_EQ(std::memcmp(packed + (k * 32 + c) * es, model + (c * 9 + k) * es, es), 0) << "channel " << c << " position " << k;
    const std::string src = emit_cuda(*g, plan, "test");
    EXPECT_NE(src.find("// eight channels"), std::string::npos) << src;
    const bool f16 = precision == Precision::kF16;
    EXPECT_EQ(src.find("const u32x4 wq = *reinterpret_cast<const u32x4*>(weight + w * 32LL + o3);") != std::string::npos, f16) << src;
    EXPECT_EQ(src.find("*reinterpret_cast<u32x4*>(out + i8) = rq;") != std::string::npos, f16) << src;
    compiled_kernel(*g, po, "depthwise");
  }
}

// A GlobalAveragePool of a large plane takes several warps an output (PointwiseSchedule::warps,
// support.h default_pool_warps), in one block, their sums added through shared memory; a small plane (a
// classifier's 7x7) keeps one warp.
TEST(Codegen, GlobalPoolsOfLargePlanesTakeSeveralWarpsAnOutput) {
  const std::string text =
      "graph g (opset 20) {\n"
      "  input %a: f32[1,6,48,48]\n  input %b: f32[2,3,45,45]\n  input %c: f32[1,64,7,7]\n"
      "  %ra = Relu(%a)\n  %pa = GlobalAveragePool(%ra)\n  %rb = Relu(%b)\n  %pb = GlobalAveragePool(%rb)\n"
      "  %rc = Relu(%c)\n  %pc = GlobalAveragePool(%rc)\n  output %pa\n  output %pb\n  output %pc\n}\n";
  for (Precision precision : {Precision::kF32, Precision::kF16}) {
    auto g = ir_graph(text);
    PlanOptions po;
    po.settings.precision = precision;
    const KernelPlan plan = plan_kernel(*g, po);
    std::map<int64_t, int> warps;  // by plane
    for (const Group& grp : plan.groups) {
      if (grp.anchor->op != OpKind::kGlobalAveragePool) continue;
      const Shape& xs = grp.anchor->inputs[0]->type.shape;
      const int w = grp.pointwise.warps;
      EXPECT_EQ(w, default_pool_warps(*grp.anchor, plan.ctx));
      warps[xs[2] * xs[3]] = w;
      EXPECT_EQ(grp.items, ceil_div(xs[0] * xs[1] * 32 * w, int64_t{plan.ctx.threads} * grp.pointwise.ilp));
    }
    EXPECT_EQ(warps, (std::map<int64_t, int>{{49, 1}, {2025, 2}, {2304, 4}}));
    EXPECT_GE(plan.ctx.smem_bytes, plan.ctx.threads / 32 * 4) << "the warps' sums live in shared memory";
    const std::string src = emit_cuda(*g, plan, "test");
    EXPECT_NE(src.find("// 4 warps per output"), std::string::npos) << src;
    EXPECT_NE(src.find("// 2 warps per output"), std::string::npos) << src;
    EXPECT_NE(src.find("// a warp per output"), std::string::npos) << src;
    compiled_kernel(*g, po, "pools");
  }
}

// A squeeze-and-excitation's squeeze runs inside the excite GEMV that reads it (Group::squeeze,
// planner/squeeze_fusion.cc): no stage of its own, every excite item computing it again into
// shared memory before its dot products.
TEST(Codegen, SqueezesRunInsideTheirExciteItems) {
  for (const char* model : {"tiny-efficientnet-opset20", "tiny-mobilenet-v3-opset20", "tiny-regnet-opset20"}) {
    LoadResult loaded = load_tiny(model);
    for (Precision precision : {Precision::kF32, Precision::kF16}) {
      SCOPED_TRACE(std::string(model) + (precision == Precision::kF16 ? " fp16" : " fp32"));
      PlanOptions po;
      po.settings.precision = precision;
      const KernelPlan plan = plan_kernel(*loaded.graph, po);
      int fused = 0;
      for (const Group& e : plan.groups) {
        if (!e.gate) continue;  // the excite GEMVs
        GemvForm fe, f;
        ASSERT_TRUE(gemv_form(*e.anchor, &fe));
        int producer = -1;
        for (const Group& o : plan.groups)
          if (plan.root(o.output) == plan.root(fe.x)) producer = o.id;
        ASSERT_GE(producer, 0);
        const Group& sq = plan.groups[producer];
        ASSERT_TRUE(gemv_form(*sq.anchor, &f));
        if (!squeeze_fits_inside(f)) {  // too many weights to read again in every item
          EXPECT_EQ(e.squeeze, -1) << e.nodes();
          EXPECT_EQ(sq.fused_into, -1);
          EXPECT_LT(sq.stage, e.stage);
          continue;
        }
        EXPECT_EQ(e.squeeze, sq.id) << e.nodes();
        EXPECT_EQ(sq.fused_into, e.id);
        EXPECT_EQ(sq.stage, e.stage) << "the squeeze has no stage of its own";
        EXPECT_EQ(sq.items, 0);
        EXPECT_GE(e.smem_bytes, squeeze_smem_bytes(f.n));
        for (int gid : plan.stages[e.stage].groups)
          EXPECT_TRUE(gid == sq.id || plan.groups[gid].fused_into < 0) << "only its squeeze runs inside it";
        ++fused;
      }
      EXPECT_GT(fused, 0);
      const std::string src = emit_cuda(*loaded.graph, plan, "test");
      EXPECT_NE(src.find("computed by every item"), std::string::npos) << src;
      compiled_kernel(*loaded.graph, po, "squeeze");
    }
  }
}

// An image's 3 channels padded to 8 and transposed to NHWC on entry to a channels-last region
// (tiny-resnet's stem) run a pixel a thread: its 8 channels one 16-byte store in fp16, a unit
// of work per pixel.
TEST(Codegen, APaddedImageIsStoredAPixelAThread) {
  LoadResult loaded = load_tiny("tiny-resnet-opset20");
  for (Precision precision : {Precision::kF32, Precision::kF16}) {
    PlanOptions po;
    po.settings.precision = precision;
    const KernelPlan plan = plan_kernel(*loaded.graph, po);
    const Group& pad = plan.groups[0];
    ASSERT_EQ(pad.anchor->op, OpKind::kPad);
    EXPECT_TRUE(padded_to_channels_last(pad));
    EXPECT_TRUE(channel_vectors(plan, pad));
    const Shape& stored = pad.output->type.shape;  // [1, 32, 32, 8]
    ASSERT_EQ(stored.back(), 8);
    EXPECT_EQ(pad.items, ceil_div(stored[0] * stored[1] * stored[2], int64_t{plan.ctx.threads} * pad.pointwise.ilp));
    const std::string src = emit_cuda(*loaded.graph, plan, "test");
    const size_t at = src.find("void g0_pad(");
    ASSERT_NE(at, std::string::npos);
    const std::string fn = src.substr(at, src.find("\n}\n", at) - at);
    EXPECT_NE(fn.find("const int o0 = s0, o1 = j, o2 = s1, o3 = s2;"), std::string::npos) << fn;
    EXPECT_EQ(fn.find("*reinterpret_cast<u32x4*>(out + i8) = rq;") != std::string::npos, precision == Precision::kF16) << fn;
  }
}

// Squeeze-and-excitation: the excite GEMV takes the gate Mul as its last step (Group::gate) and
// writes the gated image itself, so the block is GAP, squeeze, excite-and-gate: three stages.
// Exporters' SiLU (Mul(x, Sigmoid(x))) is one Swish step of the squeeze.
TEST(Codegen, SqueezeExcitationGatesInTheExciteGemv) {
  const std::string text =
      "graph g (opset 20) {\n"
      "  input %x: f32[1,16,6,6]\n"
      "  const %w1: f32[4,16,1,1] = <64 elements>\n  const %b1: f32[4] = <4 elements>\n"
      "  const %w2: f32[16,4,1,1] = <64 elements>\n  const %b2: f32[16] = <16 elements>\n"
      "  %m = GlobalAveragePool(%x)\n  %s = Conv(%m, %w1, %b1)\n"
      "  %sg = Sigmoid(%s)\n  %a = Mul(%s, %sg)\n"
      "  %e = Conv(%a, %w2, %b2)\n  %g = Sigmoid(%e)\n  %y = Mul(%x, %g)\n  output %y\n}\n";
  auto g = ir_graph(text);
  simplify(*g);
  for (Precision precision : {Precision::kF32, Precision::kF16}) {
    PlanOptions po;
    po.settings.precision = precision;
    const KernelPlan plan = plan_kernel(*g, po);
    EXPECT_EQ(plan.stages.size(), 2u);  // the pool, then the excite with its squeeze inside
    ASSERT_EQ(plan.groups.size(), 3u);
    const Group& excite = plan.groups[2];
    ASSERT_NE(excite.gate, nullptr);
    EXPECT_EQ(excite.output->type.shape, (Shape{1, 16, 6, 6}));
    EXPECT_EQ(plan.groups[1].epilogue.size(), 1u);  // the Swish
    EXPECT_EQ(plan.groups[1].epilogue[0]->op, OpKind::kSwish);
    const BuiltKernel b = compiled_kernel(*g, po, "se");
    EXPECT_NE(b.source.find("times v"), std::string::npos);
  }
}

// Grouped and depthwise convolutions run a strip of outputs down a column per thread
// (PointwiseSchedule::strip): a depthwise one as tall as the rows allow (at most 8, cut evenly),
// a grouped one no taller than leaves every thread of the grid a strip; the height is a knob the
// tuner varies, checked when a tuned schedule brings one.
TEST(Codegen, GroupedConvolutionsRunStripsDownAColumn) {
  auto plan_of = [](const std::string& conv, const PlanOptions& po = PlanOptions{}) {
    auto g = ir_graph("graph g (opset 20) {\n  input %x: f32[1,64,56,56]\n" + conv + "  output %y\n}\n");
    simplify(*g);
    return std::make_pair(std::move(g), plan_kernel(*g, po));
  };
  {  // depthwise, stride 2: 28 rows -> strips of 7
    auto [g, plan] = plan_of("  const %w: f32[64,1,3,3] = <576 elements>\n"
                             "  %y = Conv(%x, %w) {group = 64, pads = [1, 1, 1, 1], strides = [2, 2]}\n");
    ASSERT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(plan.groups[0].pointwise.strip, 7);
    EXPECT_EQ(plan.groups[0].items, ceil_div(64 * 4 * 28, 256 * plan.groups[0].pointwise.ilp));
  }
  {  // 8 channels a group, 56 rows: 64 x 56 columns need 10 strips a column (6 rows) to fill 132 x 256 threads
    auto [g, plan] = plan_of("  const %w: f32[64,8,3,3] = <4608 elements>\n"
                             "  %y = Conv(%x, %w) {group = 8, pads = [1, 1, 1, 1]}\n");
    EXPECT_EQ(plan.groups[0].pointwise.strip, 6);
  }
  for (const char* odd : {"0.25", "inf"}) {  // an infinite weight: 0 x inf at a padding position is NaN
    std::string values = "0.5";
    for (int i = 1; i < 128; ++i) values += i == 5 ? std::string(", ") + odd : std::string(", 0.5");
    auto [g, plan] = plan_of("  const %w: f32[64,1,1,2] = [" + values + "]\n" +
                             "  %y = Conv(%x, %w) {group = 64, pads = [0, 1, 0, 1]}\n");
    EXPECT_EQ(plan.groups[0].pointwise.strip > 0, std::string(odd) != "inf") << odd;  // then one output a thread
  }
  {  // a dense convolution is a GEMM: no strip
    auto [g, plan] = plan_of("  const %w: f32[16,64,1,1] = <1024 elements>\n  %y = Conv(%x, %w)\n");
    EXPECT_EQ(plan.groups[0].pointwise.strip, 0);
  }
}

// The fp16 convolution cost model (cost_model.cc kConv*, fitted to the tuner's measurements of
// resnet50 on the H200, bench/runs/run58): the default of a 3x3 convolution is a 64-row tile
// with split-K (measured best 64x64x32 split 2: 21.1 us against 27.5 for the old default
// 32x64x64 unsplit, which gathers the activations twice), while a 1x1 convolution with a short K
// keeps the unsplit 32x64x64 the measurements found best (12.0 us).
TEST(Codegen, ConvolutionDefaultsFollowTheMeasuredBest) {
  struct Case { const char* text; int bm; bool split; };
  const Case cases[] = {
      {"graph g (opset 20) {\n"
       "  input %x: f32[1,64,56,56]\n"
       "  const %w: f32[64,64,3,3] = <36864 elements>\n"
       "  %y: f32[1,64,56,56] = Conv(%x, %w) {kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]} @conv\n"
       "  %r: f32[1,64,56,56] = Relu(%y) @relu\n"
       "  output %r\n}\n",
       64, true},
      {"graph g (opset 20) {\n"
       "  input %x: f32[1,256,14,14]\n"
       "  const %w: f32[1024,256,1,1] = <262144 elements>\n"
       "  %y: f32[1,1024,14,14] = Conv(%x, %w) {kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1]} @conv\n"
       "  output %y\n}\n",
       32, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto g = ir_graph(c.text);
    PlanOptions po;
    po.settings.precision = Precision::kF16;
    const KernelPlan p = plan_kernel(*g, po);
    int convs = 0;
    for (const Group& grp : p.groups) {
      if (grp.kind != GroupKind::kConvGemm) continue;
      ++convs;
      EXPECT_EQ(grp.gemm.bm, c.bm) << grp.gemm.str();
      EXPECT_EQ(grp.gemm.splits > 1, c.split) << grp.gemm.str();
      EXPECT_EQ(gemm_schedule_problem(true, grp.gemm, p.ctx, nullptr), "");
    }
    EXPECT_EQ(convs, 1);
  }
}


// A GEMM whose output channels no menu width divides gets a tile fitted to them
// (cost_model.cc fitted_gemm_tiles): mobilenet-v2's 112x112 expansion to 96 channels took 64x128
// tiles (a quarter of each tile's columns empty, 196 items in two rounds of the grid) and now
// takes 96-wide ones, and a 1x1 convolution to 16 channels (its weights the A operand) a 16-row
// tile. Channels the menu divides, and fp32, get no fitted tiles. The kernel compiles.
TEST(Codegen, GemmTilesFitOutputChannelsTheMenuDoesNotDivide) {
  auto g = ir_graph(
      "graph g (opset 20) {\n"
      "  input %x: f32[1,12544,16]\n"
      "  const %w: f32[16,96] = <1536 elements>\n"
      "  %y: f32[1,12544,96] = MatMul(%x, %w) @expand\n"
      "  %r: f32[1,12544,96] = Relu(%y) @relu\n"
      "  output %r\n"
      "  input %c: f32[1,24,112,112]\n"
      "  const %k: f32[16,24,1,1] = <384 elements>\n"
      "  %z: f32[1,16,112,112] = Conv(%c, %k) {kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1]} @project\n"
      "  output %z\n}\n");
  PlanOptions po;
  po.settings.precision = Precision::kF16;
  const KernelPlan p = plan_kernel(*g, po);
  int dense = 0, convs = 0;
  for (const Group& grp : p.groups) {
    if (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm) continue;
    SCOPED_TRACE(grp.gemm.str());
    EXPECT_EQ(gemm_schedule_problem(true, grp.gemm, p.ctx, nullptr), "");
    const GemmProblem prob = gemm_problem(grp);
    if (grp.kind == GroupKind::kGemm) {
      ++dense;
      EXPECT_EQ(grp.gemm.bn, 96);
      EXPECT_LE(gemm_items(prob, grp.gemm), p.ctx.grid());  // one round of the grid
    } else {
      ++convs;
      EXPECT_EQ(grp.gemm.bm, 16);
    }
    for (const GemmSchedule& t : fitted_gemm_tiles(prob, true, p.ctx)) {
      EXPECT_EQ(gemm_schedule_problem(true, t, p.ctx, nullptr), "") << t.str();
      const int64_t channels = prob.conv ? prob.m : prob.n, width = prob.conv ? t.bm : t.bn;
      const int64_t tiles = ceil_div(channels, width);
      EXPECT_LT(tiles * width - channels, 16 * tiles) << t.str();  // rounded up to 16 a tile, no more
    }
  }
  EXPECT_EQ(dense, 1);
  EXPECT_EQ(convs, 1);
  GemmProblem bert{1, 128, 768, 768};
  EXPECT_TRUE(fitted_gemm_tiles(bert, true, p.ctx).empty());
  GemmProblem narrow{1, 12544, 96, 16};
  EXPECT_TRUE(fitted_gemm_tiles(narrow, false, p.ctx).empty());
  EXPECT_FALSE(fitted_gemm_tiles(narrow, true, p.ctx).empty());
  compiled_kernel(*g, po, "fitted_tiles");
}

}  // namespace
}  // namespace mono
