// GEMM groups (MatMul, Gemm, and Conv as an implicit GEMM): the operands' loaders, the epilogue
// functor (bias, the group's epilogue steps, the store), and the tile function that runs one
// output tile (and split-K slice) per work item on GemmF16 / GemmF32 (gemm_f16.cuh, gemm_f32.cuh).
#include <algorithm>
#include <set>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/emit/epilogue.h"
#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/support/error.h"

namespace mono::emit {
namespace {

// The GEMM a group computes, C[b][m][n] = sum_k A[b][m][k] B[b][n][k], and how its operands
// are read: loader declarations (`la`, `lb`) over the function's A and B pointers.
struct Operands {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  std::string a_loader, b_loader;
  std::string batch_code;  // statements: this item's batch offsets a_off, b_off (MatMul)
  std::string a, b;        // the kernel's buffers the call passes as A and B
  std::string bias_code;   // statements applied to v before the epilogue steps
  int a_map = -1;          // A's tensor map (mono_tmaps index), or -1
};

// ", true" when a Dense operand over `v` with row stride `stride` (elements; batch offsets are
// multiples of it) always takes the 16-byte path (KernelPlan::own_buffer: aligned).
std::string dense_aligned(const KernelPlan& plan, const Value* v, int64_t stride, bool f16) {
  return plan.own_buffer(v) && stride % (f16 ? 8 : 4) == 0 ? ", true" : "";
}

// The loader of a GEMM operand stored densely: [rows][K] (K contiguous) or, `transposed`,
// [K][rows]. A stride that is not a multiple of 16 bytes rules out 16-byte loads: such operands
// go through Gather with a strided functor (register-staged element loads).
std::string dense_loader(const KernelPlan& plan, const std::string& var, const std::string& ptr, bool transposed,
                         const Value* v, int64_t rows, int64_t K, bool f16) {
  const std::string T = f16 ? "half_t" : "float";
  const int64_t stride = transposed ? rows : K;
  if (stride % (f16 ? 8 : 4) != 0) {
    const std::string f = str_cat(transposed ? "StridedN<" : "StridedK<", T, ">");
    return str_cat("Gather<", T, ", ", f, "> ", var, "{", f, "{", ptr, ", ", rows, ", ", K, ", ", stride, "}};");
  }
  return str_cat(transposed ? "DenseN<" : "DenseK<", T, dense_aligned(plan, v, stride, f16), "> ", var, "{", ptr, ", ",
                 rows, ", ", K, ", ", stride, "};");
}

// The loader of fp16 weights packed tile by tile (one bulk copy per stage, BulkTileK).
std::string tiled_loader(const std::string& var, const std::string& ptr, const Packing& packing, int64_t K) {
  return str_cat("BulkTileK<half_t> ", var, "{", ptr, ", ", ceil_div(K, packing.tile_k), "};  // packed tile by tile");
}

// A channels-last Conv (the channels_last pass) as an implicit GEMM over all images' pixels:
// A = im2col of the input [N][H][W][C] read 16 bytes at a time (Im2colK), rows = output pixels,
// k = (kh, kw, c); B = the weights [F][KH*KW*C] (packed tile by tile where the planner did);
// C = [pixels][F], the output [N][OH][OW][F] as it is stored.
Operands channels_last_conv_operands(Module& m, Expressions& ex, const Group& g) {
  const KernelPlan& plan = m.plan;
  const Node& n = *g.anchor;
  const bool f16 = g.f16;
  const Shape& xs = n.inputs[0]->type.shape;  // [N][H][W][C]
  const Shape& ws = n.inputs[1]->type.shape;  // [F][KH][KW][C]
  const Shape& ys = n.outputs[0]->type.shape;  // [N][OH][OW][F]
  const WindowGeometry geo = conv_geometry(n);
  Operands o;
  o.M = ys[0] * ys[1] * ys[2];
  o.N = ws[0];
  o.K = ws[1] * ws[2] * ws[3];
  // Named after every constant it holds (OH and OW too: two convolutions that differ only in
  // their end padding must not share one struct).
  const std::string geo_name = str_cat("ConvNhwc_", xs[0], "x", xs[1], "x", xs[2], "x", xs[3], "_k", ws[1], "x", ws[2], "_s",
                                       geo.strides[0], "x", geo.strides[1], "_p", geo.pad_begin[0], "x", geo.pad_begin[1], "_d",
                                       geo.dilations[0], "x", geo.dilations[1], "_o", ys[1], "x", ys[2]);
  m.type(geo_name, str_cat("struct ", geo_name, " {  // Im2colK's geometry\n",
                           "  static constexpr int H = ", xs[1], ", W = ", xs[2], ", C = ", xs[3], ", KW = ", ws[2], ";\n",
                           "  static constexpr int SH = ", geo.strides[0], ", SW = ", geo.strides[1], ", PH = ", geo.pad_begin[0],
                           ", PW = ", geo.pad_begin[1], ", DH = ", geo.dilations[0], ", DW = ", geo.dilations[1], ";\n",
                           "  static constexpr int OH = ", ys[1], ", OW = ", ys[2], ", P = ", o.M, ", K = ", o.K, ";\n};\n"));
  const Packing w_pack = plan.packing(n, 1);
  o.a_loader = str_cat("Im2colK<", f16 ? "half_t" : "float", ", ", geo_name, "> la{A};  // channels-last im2col");
  o.b_loader = w_pack.tiled() ? tiled_loader("lb", "B", w_pack, o.K)
                              : dense_loader(plan, "lb", "B", false, n.inputs[1], o.N, o.K, f16);
  o.a = m.buffer(plan.root(n.inputs[0]));           // the input
  o.b = m.buffer(plan.root(n.inputs[1]), w_pack);  // the weights
  ex.params().ref(n.inputs[0], {}, "a");            // the epilogue's first fields (gemm_call)
  ex.params().ref(n.inputs[1], w_pack, "b");
  if (n.input(2)) o.bias_code = str_cat("    v += ", ex.load(n.inputs[2], "n", "bias"), ";  // bias\n");
  return o;
}

// Conv (group 1) as an implicit GEMM: A = the weights [Cout][Cin x KH x KW], B = im2col of
// the input (an output pixel's receptive field along k), one GEMM per image.
Operands conv_operands(Module& m, Expressions& ex, const Group& g) {
  const KernelPlan& plan = m.plan;
  const Node& n = *g.anchor;
  if (channels_last_layout(n)) return channels_last_conv_operands(m, ex, g);
  const bool f16 = g.f16;
  const std::string T = f16 ? "half_t" : "float";
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& ws = n.inputs[1]->type.shape;
  const Shape& ys = n.outputs[0]->type.shape;
  const int64_t k = static_cast<int64_t>(xs.size()) - 2;
  if (k < 1 || k > 2) user_error(n.describe(), ": Conv is compiled for 1-D and 2-D only");
  Operands o;
  o.batch = xs[0];
  o.M = ws[0];
  o.K = shape_numel(ws) / ws[0];
  o.N = shape_numel(ys) / (ys[0] * ys[1]);
  const WindowGeometry geo = conv_geometry(n);
  const int64_t H = k == 2 ? xs[2] : 1, W = xs[k + 1], KH = k == 2 ? ws[2] : 1, KW = ws[k + 1];
  const int64_t OW = ys[k + 1];
  const int64_t SH = k == 2 ? geo.strides[0] : 1, SW = geo.strides[k - 1];
  const int64_t DH = k == 2 ? geo.dilations[0] : 1, DW = geo.dilations[k - 1];
  const int64_t PH = k == 2 ? geo.pad_begin[0] : 0, PW = geo.pad_begin[k - 1];
  // A pointwise (1x1, stride 1, no padding) convolution's B is the input itself, [Cin][H*W]
  // per image: a dense [K][N] operand (16-byte loads where aligned) instead of im2col.
  const bool pointwise = pointwise_conv(n);
  // im2col on the fly: B(n = output pixel, k = (ci, kh, kw)).
  const std::string fname = str_cat("Im2col_", H, "x", W, "_k", KH, "x", KW, "_s", SH, "x", SW, "_p", PH, "x", PW, "_d",
                                    DH, "x", DW, "_c", xs[1], "_o", o.N / OW, "x", OW, "_", f16 ? "h" : "f");  // every constant it holds
  if (!pointwise)
    m.type(fname, str_cat("struct ", fname, " {\n  static constexpr bool rows_fastest = true;  // coalesced: neighbouring pixels\n  const ",
                          T, "* x;\n  __device__ ", T, " operator()(int r, int k) const {\n",
                          "    if (r >= ", o.N, " || k >= ", o.K, ") return from_float<", T, ">(0.0f);\n",
                          "    const int ci = k / ", KH * KW, ", kk = k % ", KH * KW, ", kh = kk / ", KW, ", kw = kk % ", KW, ";\n",
                          "    const int oh = r / ", OW, ", ow = r % ", OW, ";\n",
                          "    const int ih = oh * ", SH, " - ", PH, " + kh * ", DH, ", iw = ow * ", SW, " - ", PW, " + kw * ",
                          DW, ";\n", "    if (ih < 0 || ih >= ", H, " || iw < 0 || iw >= ", W, ") return from_float<", T,
                          ">(0.0f);\n", "    return x[((long long)ci * ", H, " + ih) * ", W, " + iw];\n  }\n};\n"));
  const Packing w_pack = plan.packing(n, 1);
  o.a_loader = w_pack.tiled() ? tiled_loader("la", "A", w_pack, o.K)
                              : dense_loader(plan, "la", "A", false, n.inputs[1], o.M, o.K, f16);
  const std::string image = str_cat("B + (long long)b * ", xs[1] * H * W);
  o.b_loader = pointwise ? dense_loader(plan, "lb", image, true, n.inputs[0], o.N, o.K, f16)
                         : str_cat("Gather<", T, ", ", fname, "> lb{", fname, "{", image, "}};");
  o.a = m.buffer(plan.root(n.inputs[1]), w_pack);  // the weights
  o.b = m.buffer(plan.root(n.inputs[0]));           // the input
  ex.params().ref(n.inputs[1], w_pack, "a");        // the epilogue's first fields (gemm_call)
  ex.params().ref(n.inputs[0], {}, "b");
  if (n.input(2)) o.bias_code = str_cat("    v += ", ex.load(n.inputs[2], "m", "bias"), ";  // bias\n");
  return o;
}

// MatMul (batched, broadcast batch dimensions) and Gemm (transA, transB, alpha, beta, C).
Operands matmul_operands(Module& m, Expressions& ex, const Group& g) {
  const KernelPlan& plan = m.plan;
  const Node& n = *g.anchor;
  const bool f16 = g.f16;
  const GemmSchedule& gs = g.gemm;
  const Shape& ys = n.outputs[0]->type.shape;
  const Value* a = n.inputs[0];
  const Value* bv = n.inputs[1];
  const Shape& as = a->type.shape;
  const Shape& bs = bv->type.shape;
  const AttrReader attrs = node_attrs(n);
  const bool trans_a = n.op == OpKind::kGemm && attrs.attr_int("transA");
  const bool trans_b = n.op == OpKind::kGemm && attrs.attr_int("transB");
  Operands o;
  if (n.op == OpKind::kGemm) {
    o.M = trans_a ? as[1] : as[0];
    o.K = trans_a ? as[0] : as[1];
    o.N = trans_b ? bs[0] : bs[1];
  } else {
    if (as.size() < 2 || bs.size() < 2) user_error(n.describe(), ": 1-D MatMul operands are not compiled to CUDA yet");
    o.M = as[as.size() - 2];
    o.K = as.back();
    o.N = bs.back();
    o.batch = shape_numel(ys) / (o.M * o.N);
  }
  // Batch offsets of A and B (broadcast batch dims read the same matrix).
  const int64_t out_rank = static_cast<int64_t>(ys.size());
  const Shape batch_shape(ys.begin(), ys.end() - 2);
  const std::vector<std::string> bidx = index_vars("bb", out_rank - 2);
  o.batch_code = (o.batch > 1 ? decompose("b", batch_shape, "bb") : "") +
                 str_cat("    const long long a_off = ", batch_matrix_offset(as, bidx, o.M * o.K), ";\n") +
                 str_cat("    const long long b_off = ", batch_matrix_offset(bs, bidx, o.K * o.N), ";\n");
  const bool b_constant = bv->is_constant() || plan.root(bv)->is_constant();
  const Packing b_pack = b_constant ? plan.packing(n, 1) : Packing{};
  o.a = m.buffer(plan.root(a));
  o.b = m.buffer(plan.root(bv), b_pack);
  ex.params().ref(a, {}, "a");  // the epilogue's first fields (gemm_call)
  ex.params().ref(bv, b_pack, "b");
  o.a_loader = dense_loader(plan, "la", "A + a_off", trans_a, a, o.M, o.K, f16);
  // A through a tensor map (TensorK) where its operand allows (cost_model.h
  // a_through_tensor_map), read by whole 64-k swizzle rows.
  const Placement& apl = plan.placement.at(plan.root(a));
  TensorMapSpec spec;
  spec.arena_offset = apl.offset, spec.rows = o.M, spec.cols = o.K, spec.row_stride = o.K * 2, spec.box_rows = gs.bm;
  if (a_through_tensor_map(plan, g, nullptr) && gs.bk % 64 == 0 && tensor_map_problem(spec).empty()) {
    o.a_map = m.tensor_map(spec, plan.root(a));
    o.a_loader = "TensorK<half_t> la{amap};  // through a tensor map (TMA unit)";
  }
  // B is read [N][K]: weights packed transposed, Gemm transB or a value stored swapped
  // (KernelPlan::swapped_last2); else [K][N] (DenseN).
  const bool b_nk = b_pack.transposed || trans_b || plan.swapped_last2.count(plan.root(bv)) > 0;
  o.b_loader = b_pack.tiled() ? tiled_loader("lb", "B + b_off", b_pack, o.K)
                              : dense_loader(plan, "lb", "B + b_off", !b_nk, bv, o.N, o.K, f16);
  if (n.op == OpKind::kGemm) {
    const float alpha = attrs.attr_float("alpha"), beta = attrs.attr_float("beta");
    if (alpha != 1.0f) o.bias_code += str_cat("    v *= ", literal(alpha), ";\n");
    if (n.input(2) && beta != 0.0f) {
      const Shape& cs = n.inputs[2]->type.shape;
      std::string off = "0";
      if (cs.size() == 2) off = linear({cs[0] == 1 ? "0" : "m", cs[1] == 1 ? "0" : "n"}, cs);
      else if (cs.size() == 1) off = cs[0] == 1 ? "0" : "n";
      const std::string c = ex.load(n.inputs[2], off, "gemm_c");
      o.bias_code += beta == 1.0f ? str_cat("    v += ", c, ";\n") : str_cat("    v += ", literal(beta), " * ", c, ";\n");
    }
  }
  return o;
}

// The body of the epilogue struct (the functor GemmF16/GemmF32 call per output element): its
// pointer fields, the bias and epilogue steps, the store; the two-phase form when it reads
// memory (`slots` > 0), 8-wide stores (epilogue.cuh vec8_stores) where `vec8`.
std::string epilogue_body(const std::string& fields, const std::string& steps, const std::string& store_stmt,
                          const std::string& vec8_store, size_t slots, bool vec8) {
  std::string text = str_cat(fields, "  long long base;\n");
  const std::string vec8_head = "  static constexpr bool vec8_stores = true;  // 8 consecutive n: one 16-byte store\n"
                                "  __device__ __forceinline__ void vec8(int m, int n0, const float (&acc)[8]) const {\n";
  if (slots == 0 && !vec8) {
    text += str_cat("  __device__ void operator()(int m, int n, float v) const {\n", steps, "    ", store_stmt, "\n  }\n");
  } else if (slots == 0) {  // run<false>: the value without its store, for vec8
    text += str_cat("  template <bool S = true>\n  __device__ __forceinline__ float run(int m, int n, float v) const {\n", steps,
                    "    if (S) ", store_stmt, "\n    return v;\n  }\n",
                    "  __device__ void operator()(int m, int n, float v) const { run(m, n, v); }\n", vec8_head,
                    "    float r[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) r[j] = run<false>(m, n0 + j, acc[j]);\n",
                    vec8_store);
  } else {
    // Two phases (epilogue.cuh): all reads of all the thread's elements before its first store.
    text += str_cat("  struct In { float x[", slots, "]; };\n",
                    "  template <bool L, bool S = true>\n  __device__ __forceinline__ float run(int m, int n, float v, In& in) const {\n",
                    steps, "    if (!L && S) ", store_stmt, "\n    return v;\n  }\n",
                    "  __device__ __forceinline__ void load(int m, int n, In& in) const { run<true>(m, n, 0.0f, in); }\n",
                    "  __device__ __forceinline__ void operator()(int m, int n, float v, const In& in) const {\n",
                    "    run<false>(m, n, v, const_cast<In&>(in));\n  }\n");
    if (vec8)
      text += str_cat(vec8_head, "    In in[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) run<true>(m, n0 + j, 0.0f, in[j]);\n",
                      "    float r[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) r[j] = run<false, false>(m, n0 + j, acc[j], in[j]);\n",
                      vec8_store);
  }
  return text;
}

// The tile function's body: which tile and split this item is, the loaders, the tile call.
std::string tile_body(const Group& g, const Operands& o, const std::string& gemm_t, bool m_fastest) {
  const GemmSchedule& gs = g.gemm;
  const int64_t tm = ceil_div(o.M, gs.bm), tn = ceil_div(o.N, gs.bn);
  const int64_t chunk = ceil_div(ceil_div(o.K, gs.splits), gs.bk) * gs.bk;
  // The tile's two indices, the faster-changing first.
  const char* fast = m_fastest ? "tm" : "tn";
  const char* slow = m_fastest ? "tn" : "tm";
  const int64_t fast_n = m_fastest ? tm : tn, slow_n = m_fastest ? tn : tm;
  // The kernel's shared memory, declared here rather than passed: a function that is not inlined
  // then still addresses it as shared memory, not through generic pointers (compiled on its own,
  // one did: bench/RESULTS.md, 2026-11-25).
  std::string body = str_cat("  extern __shared__ __align__(1024) unsigned char smem[];\n",
                             "  static_assert(", gemm_t, "::kSmemBytes <= MONO_SMEM_BYTES, \"tile does not fit the context\");\n",
                             // Split slowest: split-K reducers (the last split) come after every producer.
                             gs.splits > 1 ? str_cat("  const int split = item / ", o.batch * tm * tn, ";\n  int t = item % ", o.batch * tm * tn, ";\n")
                                           : std::string("  const int split = 0;\n  int t = item;\n"),
                             "  const int ", fast, " = t % ", fast_n, "; t /= ", fast_n, ";\n",
                             "  const int ", slow, " = t % ", slow_n, ";\n  const long long b = t / ", slow_n, ";\n");
  body += o.batch_code;
  body += str_cat("  const int k0 = split * ", chunk, ", k1 = min(", o.K, ", k0 + ", chunk, ");\n");
  body += "  " + o.a_loader + "\n  " + o.b_loader + "\n";
  body += str_cat("  epi.base = b * ", o.M * o.N, "LL;\n");
  if (gs.splits > 1) {
    // This tile's partial slots (splits of BM x BN floats) and counter.
    body += str_cat("  const long long tile_id = (b * ", tm, " + tm) * ", tn, " + tn;\n");
    body += str_cat("  ", gemm_t, "::tile(", o.M, ", ", o.N, ", tm * ", gs.bm, ", tn * ", gs.bn,
                    ", k0, k1, la, lb, epi, smem, ws + tile_id * ", gs.splits * gs.bm * gs.bn, "LL, cnt + tile_id, ",
                    gs.splits, ", split);\n");
  } else {
    body += str_cat("  ", gemm_t, "::tile(", o.M, ", ", o.N, ", tm * ", gs.bm, ", tn * ", gs.bn,
                    ", k0, k1, la, lb, epi, smem, (float*)nullptr, (unsigned int*)nullptr, 1, 0);\n");
  }
  return body;
}

}  // namespace

Call gemm_call(Module& m, const Group& g, bool m_fastest) {
  const KernelPlan& plan = m.plan;
  const Node& n = *g.anchor;
  const bool conv = n.op == OpKind::kConv;
  const bool f16 = g.f16;
  const std::string T = f16 ? "half_t" : "float";
  // The epilogue's pointers: A and B (which it does not read: without them as its first fields
  // ptxas scheduled the tiles differently, tiny-bert fp16 another SASS 384 B shorter; to be
  // A/B-timed before it goes), what it reads, and its output.
  ParamList params(m);
  size_t slots = 0;     // every float the epilogue reads (bias included) is a two-phase slot
  Expressions ex(plan, params, &slots);
  const GemmSchedule& gs = g.gemm;
  const Value* out = g.output;
  const DType out_dtype = plan.dtype_of(out);
  const Operands o = conv ? conv_operands(m, ex, g) : matmul_operands(m, ex, g);

  // The epilogue functor: bias, fused elementwise nodes, store.
  const std::string out_ptr = params.ref(out, {}, "out");
  std::string steps = str_cat("    const long long i = base + (long long)m * ", o.N, "LL + n;\n");
  steps += o.bias_code;
  const EpilogueSteps e = epilogue_steps(ex, plan, g, "i");
  steps += e.code;
  const std::string store_stmt = str_cat(out_ptr, "[", e.store_index, "] = ", ex.store(out_dtype, "v"), ";");
  const std::set<const Value*> written = {plan.root(out)};
  // 8-wide stores (vec8_stores): fp16 tiles, an arena output (16-byte aligned) whose rows are
  // whole chunks of 8 and whose store runs along n.
  const bool vec8 = f16 && e.vec8 && o.N % 8 == 0 &&
                    (out_dtype == DType::kF16 || out_dtype == DType::kF32) &&
                    plan.own_buffer(out);
  const std::string vec8_store = str_cat("    const long long i = base + (long long)m * ", o.N, "LL + n0;\n", e.index_code,
                                         "    store8(", out_ptr, " + (", e.store_index, "), r);\n  }\n");
  std::string body = epilogue_body(params.fields(written), steps, store_stmt, vec8_store, slots, vec8);
  // Split-K whose stage's items all fit the grid at once: the splits of a tile finish it together
  // (split_k.cuh), when the grid has at least that many blocks. fp16 GEMM tiles (GemmF16,
  // GemmWg: their views say where every thread's elements go), not Conv nodes' implicit GEMMs
  // (a 1x1 convolution that the channels-last pass made a Gemm is a GEMM here). Measured on
  // the H100 (bench/RESULTS.md session 21), same calls: against the single reducer, bert-base
  // 427.3 -> 416.0 us, gpt2 422.3 -> 414.5 (staged 8-wide tiles, run189); the element view too,
  // vit-base 645.6 -> 609.6 (its 64x128 FFN2), while resnet50's convolutions went 334.2 -> 337.9
  // (run190).
  if (gs.splits > 1 && f16 && !conv && plan.stage_items(g.stage) <= plan.ctx.grid())
    body += str_cat("  static constexpr int split_together_items = ", plan.stage_items(g.stage),
                    ";  // the stage's work items\n");
  const std::string epi_name = m.epilogue_struct(g, body);

  if (gs.wgmma)  // the planner (gemm_cores.cc) chose wgmma only where both operands allow it
    MONO_CHECK(o.a_map >= 0 && plan.packing(n, 1).swizzled, n.describe(), ": a wgmma tile without its operand layouts");
  const std::string gemm_t =
      gs.wgmma ? str_cat("GemmWg<", gs.bm, ", ", gs.bn, ", ", gs.bk, ", ", gs.warps_m, ", ", gs.warps_n, ", ", gs.stages,
                         wgmma_k_groups(gs, plan.ctx) > 1 ? str_cat(", ", wgmma_k_groups(gs, plan.ctx)) : "", ">") :
      f16 ? str_cat("GemmF16<", gs.bm, ", ", gs.bn, ", ", gs.bk, ", ", gs.warps_m, ", ", gs.warps_n, ", ", gs.stages, ">")
          : str_cat("GemmF32<", gs.bm, ", ", gs.bn, ", ", gs.bk, ", ", gs.warps_m, ", ", gs.warps_n, ">");
  const std::string sig = str_cat("int item, const ", T, "* __restrict__ A, const ", T,
                                  "* __restrict__ B, ", epi_name, " epi, float* ws, unsigned int* cnt",
                                  o.a_map >= 0 ? ", const TensorMap* amap" : "");
  const std::string name = m.function(g, sig, tile_body(g, o, gemm_t, m_fastest));
  // The call: A and B, the epilogue (its pointers, base 0), split-K workspace and counters.
  std::string epi_init = epi_name + "{";
  for (const std::string& p : params.arguments()) epi_init += p + ", ";
  epi_init += "0}";
  Call call{name, {o.a, o.b, epi_init}};
  call.args.push_back(gs.splits > 1 ? m.split_k_workspace(g) : "(float*)nullptr");
  call.args.push_back(gs.splits > 1 ? m.split_k_counters(g) : "(unsigned int*)nullptr");
  if (o.a_map >= 0) call.args.push_back(str_cat("&mono_tmaps[", o.a_map, "]"));
  return call;
}

GroupWork emit_gemm(Module& m, const Group& g) {
  const Call call = gemm_call(m, g, /*m_fastest=*/true);
  return {g.items, [call](const std::string& item) { return call.str(item); }};
}

}  // namespace mono::emit
