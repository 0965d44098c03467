// Pointwise groups: each thread computes `ilp` output elements of the anchor (an elementwise op,
// a data movement, a window or a reduction, pointwise_ops.h), applies the epilogue steps and
// stores. Split loops over its input instead, each element to the output its position falls in.
#include <algorithm>
#include <set>

#include "compiler/codegen/emit/epilogue.h"
#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/emit/pointwise_ops.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/reduce.h"
#include "compiler/ops/transpose.h"
#include "compiler/support/error.h"

namespace mono::emit {

std::string anchor_code(Expressions& ex, const KernelPlan& plan, const Node& n) {
  const Value* out = n.outputs[0];
  const int64_t rank = out->type.rank();
  const DType out_dtype = plan.dtype_of(out);
  const std::string ct = compute_type(out_dtype);
  if (is_elementwise_anchor(n.op)) {
    const std::vector<std::string> a = ex.operands(n, -1, index_vars("o", n.outputs[0]->type.rank()), "");
    DType in_dtype = n.inputs[0] ? plan.dtype_of(n.inputs[0]) : out_dtype;
    if (n.op == OpKind::kWhere) in_dtype = plan.dtype_of(n.inputs[1]);
    const std::string e =
        n.op == OpKind::kCast ? ex.cast(a[0], plan.dtype_of(n.inputs[0]), out_dtype) : ex.elementwise(n, a, in_dtype);
    return str_cat("    ", ct, " v = ", e, ";\n");
  }
  const Value* x = n.inputs[0];
  const Shape& xs = x->type.shape;
  if (is_reduce_op(n.op)) return reduce_code(ex, n, ct);
  switch (n.op) {
    case OpKind::kTranspose: {
      const std::vector<int64_t> perm = transpose_perm(n);
      std::vector<std::string> idx(rank);  // input axis perm[d] takes output index o{d}
      for (int64_t d = 0; d < rank; ++d) idx[perm[d]] = str_cat("o", d);
      return str_cat("    ", ct, " v = ", ex.load(x, linear(idx, xs), "x"), ";\n");
    }
    case OpKind::kExpand: return str_cat("    ", ct, " v = ", ex.load(x, broadcast_offset(xs, index_vars("o", rank)), "x"), ";\n");
    case OpKind::kSlice: return slice_code(ex, n, ct);
    case OpKind::kConcat: return concat_code(ex, n, ct);
    case OpKind::kGather: return gather_code(ex, n, ct);
    case OpKind::kGatherElements: return gather_elements_code(ex, n, ct);
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: return pool_code(ex, n);
    case OpKind::kConv: return direct_conv_code(ex, n);
    case OpKind::kSoftmax: return softmax_axis_code(ex, n);
    case OpKind::kBatchNormalization: return batch_norm_code(ex, n);
    case OpKind::kCumSum: return cum_sum_code(ex, n, ct);
    case OpKind::kTrilu: return trilu_code(ex, n, ct);
    case OpKind::kTile: return tile_code(ex, n, ct);
    case OpKind::kPad: return pad_code(ex, n, ct);
    case OpKind::kArgMax:
    case OpKind::kArgMin: return arg_extremum_code(ex, n);
    case OpKind::kScatterND: return scatter_nd_code(ex, n, ct);
    default: user_error(n.describe(), ": ", op_name(n.op), " cannot be compiled to CUDA yet");
  }
}

namespace {

// The loop head of a pointwise function: element i of the thread's `ilp` in its work item.
std::string element_loop(int ilp, int64_t total) {
  return str_cat("  for (int e = 0; e < ", ilp, "; ++e) {\n",
                 "    const long long i = ((long long)item * ", ilp, " + e) * MONO_THREADS + threadIdx.x;\n",
                 "    if (i >= ", total, "LL) return;\n");
}

GroupWork group_work(const Group& g, const std::string& function, const ParamList& params) {
  const Call call{function, params.arguments()};
  return {g.items, [call](const std::string& item) { return call.str(item); }};
}

GroupWork emit_split(Module& m, const Group& g) {
  const Node& n = *g.anchor;
  ParamList params(m);
  const Shape& xs = n.inputs[0]->type.shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  int64_t axis = node_attrs(n).attr_int("axis");
  if (axis < 0) axis += r;
  std::string body = element_loop(g.pointwise.ilp, shape_numel(xs));  // items cover the input
  body += decompose("i", xs, "o");
  body += str_cat("    const ", ctype(m.plan.dtype_of(n.inputs[0])), " x = ", params.ref(n.inputs[0], {}, "src"), "[i];\n");
  std::set<const Value*> written;
  int64_t base = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.outputs[k];
    const int64_t len = out ? out->type.shape[axis] : 0;
    if (out) {
      std::vector<std::string> idx(r);
      for (int64_t d = 0; d < r; ++d) idx[d] = d == axis ? str_cat("(o", d, " - ", base, "LL)") : str_cat("o", d);
      body += str_cat("    ", k ? "else " : "", "if (o", axis, " < ", base + len, "LL) ", params.ref(out, {}, str_cat("out", k)), "[",
                      linear(idx, out->type.shape), "] = x;\n");
      written.insert(m.plan.root(out));
    }
    base += len;
  }
  body += "  }\n";
  return group_work(g, m.function(g, "int item" + params.declarations(written), body), params);
}

// Statements adding to `v` this thread's share of the plane of x at `base`: the lanes `lane`
// numbers (lane, or part * 32 + lane with several warps an output) stride through it, 16 bytes
// a load where x is fp16 in Mono's own buffers and the plane a whole number of 8-element chunks.
std::string plane_sum(Expressions& ex, ParamList& params, const Value* x, int64_t plane, const std::string& lane, int warps,
                      const std::string& ind) {
  const KernelPlan& plan = ex.plan();
  if (plan.dtype_of(x) == DType::kF16 && plane % 8 == 0 && plan.own_buffer(x))
    return str_cat(ind, "const half_t* xp = ", params.ref(x, {}, "x"), " + base;\n",
                   "#pragma unroll 4\n", ind, "for (long long k = ", warps > 1 ? str_cat("(", lane, ") * 8") : lane + " * 8", "; k < ", plane,
                   "LL; k += ", 256 * warps, ") {\n",
                   ind, "  const u32x4 q = *reinterpret_cast<const u32x4*>(xp + k);\n",
                   ind, "  const half_t* h = reinterpret_cast<const half_t*>(&q);\n",
                   "#pragma unroll\n", ind, "  for (int j = 0; j < 8; ++j) v += to_float(h[j]);\n", ind, "}\n");
  return str_cat("#pragma unroll 4\n", ind, "for (long long k = ", lane, "; k < ", plane, "LL; k += ", 32 * warps, ") v += ",
                 ex.load(x, "base + k", "x"), ";\n");
}

// GlobalAveragePool with `warps` warps per output (PointwiseSchedule::warps), the warps of an
// output consecutive in one block: each sums its share of the plane as emit_global_pool's warp
// does, lane 0 puts the sum in shared memory, and the first warp of the output adds the others'
// (every thread reaches both __syncthreads: no thread returns early).
GroupWork emit_global_pool_warps(Module& m, const Group& g, int warps) {
  const Node& n = *g.anchor;
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  const Value* x = n.inputs[0];
  const Shape& xs = x->type.shape;
  const int64_t outputs = n.outputs[0]->type.numel(), plane = shape_numel(xs) / outputs;
  const Value* out = g.output;
  const int ilp = g.pointwise.ilp;
  std::string body = str_cat("  extern __shared__ __align__(1024) unsigned char smem[];\n",
                             "  float* sums = reinterpret_cast<float*>(smem);  // one per warp\n",
                             "  for (int e = 0; e < ", ilp, "; ++e) {\n",
                             "    const long long i = (((long long)item * ", ilp, " + e) * MONO_THREADS + threadIdx.x) / ", 32 * warps,
                             ";  // ", warps, " warps per output\n",
                             "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, part = warp % ", warps, ";\n",
                             "    const bool live = i < ", outputs, "LL;\n",
                             "    const long long base = i * ", plane, "LL;  // the plane of output i\n    float v = 0.0f;\n",
                             "    if (live) {\n");
  body += plane_sum(ex, params, x, plane, "part * 32 + lane", warps, "      ");
  body += str_cat("    }\n    v = warp_sum(v);\n    if (lane == 0) sums[warp] = v;\n    __syncthreads();\n",
                  "    if (live && part == 0) {\n",
                  "      v = 0.0f;\n#pragma unroll\n      for (int w = 0; w < ", warps, "; ++w) v += sums[warp + w];\n",
                  "      v *= ", literal(1.0 / static_cast<double>(plane)), ";\n");
  body += decompose("i", n.outputs[0]->type.shape, "o");
  std::set<const Value*> written = {plan.root(out)};
  const EpilogueSteps steps = epilogue_steps(ex, plan, g, "i");
  body += steps.code;
  body += str_cat("      if (lane == 0) ", params.ref(out, {}, "out"), "[", steps.store_index, "] = ", ex.store(plan.dtype_of(out), "v"),
                  ";\n    }\n    __syncthreads();  // sums[] is read before the next element's warps write it\n  }\n");
  return group_work(g, m.function(g, "int item" + params.declarations(written), body), params);
}

// GlobalAveragePool: a warp per output (the planner counts 32 elements per output,
// cost_model.cc pointwise_problem). Its lanes stride through the plane, 16 bytes a load where
// the input is fp16 in Mono's own buffers and the plane a whole number of 8-element chunks, and
// warp_sum combines them. With a thread per output, efficientnet-b0's first squeeze (32 planes
// of 112 x 112) took 335 us (H100, bench/RESULTS.md session 9).
GroupWork emit_global_pool(Module& m, const Group& g) {
  const Node& n = *g.anchor;
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  const Value* x = n.inputs[0];
  const Shape& xs = x->type.shape;
  int64_t plane = 1;
  for (size_t d = 2; d < xs.size(); ++d) plane *= xs[d];
  const Value* out = g.output;
  const int ilp = g.pointwise.ilp;
  if (g.pointwise.warps > 1) return emit_global_pool_warps(m, g, g.pointwise.warps);
  std::string body = str_cat("  for (int e = 0; e < ", ilp, "; ++e) {\n",
                             "    const long long i = (((long long)item * ", ilp, " + e) * MONO_THREADS + threadIdx.x) >> 5;  // a warp per output\n",
                             "    const int lane = threadIdx.x & 31;\n",
                             "    if (i >= ", n.outputs[0]->type.numel(), "LL) return;\n");
  body += decompose("i", n.outputs[0]->type.shape, "o");
  body += str_cat("    const long long base = i * ", plane, "LL;  // the plane of output i\n    float v = 0.0f;\n");
  body += plane_sum(ex, params, x, plane, "lane", 1, "    ");
  body += str_cat("    v = warp_sum(v) * ", literal(1.0 / static_cast<double>(plane)), ";\n");
  std::set<const Value*> written = {plan.root(out)};
  const EpilogueSteps steps = epilogue_steps(ex, plan, g, "i");
  body += steps.code;
  body += str_cat("    if (lane == 0) ", params.ref(out, {}, "out"), "[", steps.store_index, "] = ", ex.store(plan.dtype_of(out), "v"),
                  ";\n  }\n");
  return group_work(g, m.function(g, "int item" + params.declarations(written), body), params);
}

// A gated GEMV's store (Group::gate): the unit's part of channel i's plane of x times v,
// kGateLaneElements a lane: one 16-byte vector (fp16) where x and the output are Mono's own
// buffers of one dtype, else element by element.
std::string gate_code(Module& m, const Group& g, ParamList& params, int64_t plane, int64_t parts, int lanes) {
  const KernelPlan& plan = m.plan;
  const Node& mul = *g.gate;
  const Value* x = plan.root(mul.inputs[0]) == plan.root(running_value(g, &mul)) ? mul.inputs[1] : mul.inputs[0];
  const Value* out = g.output;
  MONO_CHECK(!plan.swapped_last2.count(plan.root(out)), "a gated GEMV's output stored swapped");
  const DType xd = plan.dtype_of(x), od = plan.dtype_of(out);
  const int per_chunk = 16 / static_cast<int>(dtype_size(xd));
  const bool vector = xd == od && (xd == DType::kF16 || xd == DType::kF32) && plane % per_chunk == 0 && plan.own_buffer(x) &&
                      plan.own_buffer(out);
  const int64_t span = int64_t{kGateLaneElements} * lanes;  // elements per part
  const std::string xp = params.ref(x, {}, "gate_x"), op = params.ref(out, {}, "out"), ct = ctype(xd);
  std::string s = str_cat("    // ", comment_text(mul.name), ": channel i's plane of ", comment_text(x->name), " times v\n",
                          "    const long long base = i * ", plane, "LL", parts > 1 ? str_cat(" + part * ", span, "LL") : "", ";\n",
                          "    const int len = ", parts > 1 ? str_cat("(int)min(", span, "LL, ", plane, "LL - part * ", span, "LL)") : str_cat(plane), ";\n");
  if (vector) {  // kGateLaneElements / per_chunk vectors a lane (one in fp16, two in fp32)
    s += str_cat("#pragma unroll\n    for (int q = lane * ", per_chunk, "; q < ", span, "; q += ", lanes * per_chunk, ") {\n",
                 "      if (q >= len) break;\n",
                 "      u32x4 c = *reinterpret_cast<const u32x4*>(", xp, " + base + q);\n",
                 "      ", ct, "* h = reinterpret_cast<", ct, "*>(&c);\n",
                 "#pragma unroll\n      for (int j = 0; j < ", per_chunk, "; ++j) h[j] = from_float<", ct, ">(to_float(h[j]) * v);\n",
                 "      *reinterpret_cast<u32x4*>(", op, " + base + q) = c;\n    }\n");
  } else {
    s += str_cat("#pragma unroll\n    for (int q = lane; q < ", span, "; q += ", lanes, ") {\n",
                 "      if (q >= len) break;\n",
                 "      ", op, "[base + q] = from_float<", ctype(od), ">(to_float(", xp, "[base + q]) * v);\n    }\n");
  }
  return s;
}

// The lane's part of output i's dot product (`gemv_form`) added to `v`: its 16-byte chunks of W's
// row i and of x (where both are fp16 or fp32 and K a whole number of chunks; element by
// element otherwise), `lanes` lanes sharing the chunks. With `xs` x is that many floats in
// shared memory instead (Group::squeeze).
std::string gemv_dot(Expressions& ex, ParamList& params, const KernelPlan& plan, const Node& n, const GemvForm& f, int lanes,
                     const std::string& xs) {
  const DType xd = plan.dtype_of(f.x), wd = plan.dtype_of(f.w);
  const int per_chunk = 16 / static_cast<int>(dtype_size(wd));
  const bool vector = (wd == DType::kF16 || wd == DType::kF32) && f.k % per_chunk == 0 &&
                      (!xs.empty() || (xd == wd && plan.own_buffer(f.x)));
  const int64_t chunks = vector ? f.k / per_chunk : f.k;  // what the lanes share out
  const int64_t steps = ceil_div(chunks, lanes);
  const std::string xp = xs.empty() ? params.ref(f.x, {}, "x") : "", wp = params.ref(f.w, plan.packing(n, 1), "w");
  const std::string unroll = steps <= 16 ? "#pragma unroll\n" : "#pragma unroll 8\n";
  const std::string ct = ctype(wd);
  std::string dot;
  if (vector) dot += str_cat("      const ", ct, "* wr = ", wp, " + i * ", f.k, "LL;\n");
  dot += str_cat(unroll, "      for (int s = 0; s < ", steps, "; ++s) {\n", "        const long long c = (long long)s * ", lanes, " + lane;\n");
  if (steps * lanes != chunks) dot += str_cat("        if (c >= ", chunks, "LL) break;\n");
  if (!vector) {
    const std::string x = xs.empty() ? ex.load(f.x, "c", "x") : str_cat(xs, "[c]");
    return dot + str_cat("        v += to_float(", wp, "[i * ", f.k, "LL + c]) * ", x, ";\n      }\n");
  }
  dot += str_cat("        const u32x4 wq = *reinterpret_cast<const u32x4*>(wr + c * ", per_chunk, ");\n");
  if (!xs.empty())
    return dot + str_cat("        const ", ct, "* wv = reinterpret_cast<const ", ct, "*>(&wq);\n",
                         "#pragma unroll\n        for (int j = 0; j < ", per_chunk, "; ++j) v += to_float(wv[j]) * ", xs, "[c * ",
                         per_chunk, " + j];\n      }\n");
  return dot + str_cat("        const u32x4 xq = *reinterpret_cast<const u32x4*>(", xp, " + c * ", per_chunk, ");\n",
                       "        const ", ct, "* wv = reinterpret_cast<const ", ct, "*>(&wq);\n",
                       "        const ", ct, "* xv = reinterpret_cast<const ", ct, "*>(&xq);\n",
                       "#pragma unroll\n        for (int j = 0; j < ", per_chunk, "; ++j) v += to_float(wv[j]) * to_float(xv[j]);\n      }\n");
}

// Statements adding up `v` over each group of `lanes` lanes (a shuffle tree; every lane of the
// warp must reach them).
std::string lanes_sum(int lanes) {
  std::string s;
  for (int o = lanes / 2; o > 0; o /= 2) s += str_cat("    v += __shfl_xor_sync(0xffffffffu, v, ", o, ");\n");
  return s;
}

// Output i of a GEMV from its dot `v`: alpha, then Gemm's C or Conv's B.
std::string gemv_scale_bias(Expressions& ex, const Node& n, const GemvForm& f, const std::string& indent) {
  std::string s;
  if (f.alpha != 1.0f) s += str_cat(indent, "v *= ", literal(f.alpha), ";\n");
  if (f.bias) {
    std::string off = "i";  // Conv's B[N]; Gemm's C broadcast to [1, N]
    const Shape& cs = f.bias->type.shape;
    if (n.op == OpKind::kGemm && (cs.empty() || cs.back() == 1)) off = "0";
    const std::string c = ex.load(f.bias, off, "bias");
    s += f.beta == 1.0f ? str_cat(indent, "v += ", c, ";\n") : str_cat(indent, "v += ", literal(f.beta), " * ", c, ";\n");
  }
  return s;
}

// A squeeze computed inside its consumer's item (Group::squeeze): its outputs, with its epilogue,
// into `xs` in shared memory, `lanes` lanes an output as its own group would, the block's
// threads passing over the outputs together (every lane reaches the shuffles), then a
// __syncthreads before the consumer reads them.
std::string squeeze_code(Module& m, Expressions& ex, ParamList& params, const Group& sq, const std::string& xs) {
  const KernelPlan& plan = m.plan;
  const Node& n = *sq.anchor;
  GemvForm f;
  MONO_CHECK(gemv_form(n, &f), "a squeeze group that is not a GEMV");
  const int lanes = gemv_lanes(f.k);
  // The block's threads take MONO_THREADS / lanes outputs a pass; each block starts at a pass
  // of its own (the consumer's blocks read the same weights at once), and up to 16 chunks of a
  // lane's loads are in flight (passes unrolled).
  const int64_t per_pass = plan.ctx.threads / lanes, passes = ceil_div(f.n, per_pass);
  const int64_t chunk_steps = ceil_div(f.k, int64_t{8} * lanes);
  const int64_t unroll = std::max<int64_t>(1, std::min(passes, 16 / chunk_steps));
  std::string s = str_cat("  // ", comment_text(sq.nodes()), ", computed by every item: its ", f.n, " outputs into ", xs, "\n",
                          unroll > 1 ? str_cat("#pragma unroll ", unroll, "\n") : "",
                          "  for (int pass = 0; pass < ", passes, "; ++pass) {\n",
                          passes > 1 ? str_cat("    const long long i = (long long)((pass + blockIdx.x) % ", passes, ") * ", per_pass,
                                               " + threadIdx.x / ", lanes, ";\n")
                                     : str_cat("    const long long i = threadIdx.x / ", lanes, ";\n"),
                          "    const int lane = threadIdx.x % ", lanes, ";\n",
                          "    const bool live = i < ", f.n, "LL;\n",
                          "    float v = 0.0f;\n    if (live) {\n", gemv_dot(ex, params, plan, n, f, lanes, ""), "    }\n");
  s += lanes_sum(lanes);
  s += "    if (live && lane == 0) {\n";
  s += decompose("i", n.outputs[0]->type.shape, "o");
  s += gemv_scale_bias(ex, n, f, "      ");
  const EpilogueSteps steps = epilogue_steps(ex, plan, sq, "i");
  s += steps.code;
  s += str_cat("      ", xs, "[i] = v;\n    }\n  }\n  __syncthreads();\n");
  return s;
}

// One row times a constant weight matrix (`gemv_form`): `lanes` lanes of a warp per output (the
// fewest powers of two that cover K in 16-byte chunks, at most 32; the planner counts that many
// elements per output, cost_model.cc pointwise_problem). Each lane loads its chunks of the
// output's weight row and of x, all of them before the first product where they fit in 16 loads;
// a shuffle tree over the lanes sums them. As a tiled GEMM the row took one row of a 64-row tile:
// resnet50's classifier 9 us, efficientnet-b0's squeeze-and-excitation layers ~5 us each (H100,
// bench/RESULTS.md session 9). With Group::squeeze the item first computes x itself.
GroupWork emit_gemv(Module& m, const Group& g, const GemvForm& f) {
  const Node& n = *g.anchor;
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  const Value* out = g.output;
  const int lanes = gemv_lanes(f.k);
  const int64_t plane = gate_plane(g), parts = gate_parts(plane, lanes);
  std::string body, xs;
  if (g.squeeze >= 0) {
    xs = "xs";
    body = str_cat("  extern __shared__ __align__(1024) unsigned char smem[];\n",
                   "  float* xs = reinterpret_cast<float*>(smem);  // x, ", f.k, " floats\n",
                   squeeze_code(m, ex, params, plan.groups[g.squeeze], xs));
  }
  body += str_cat("  for (int e = 0; e < ", g.pointwise.ilp, "; ++e) {\n",
                  "    const long long t = ((long long)item * ", g.pointwise.ilp, " + e) * MONO_THREADS + threadIdx.x;\n",
                  "    const long long u = t / ", lanes, ";  // the unit; ", lanes, " lane(s) each\n",
                  "    const int lane = (int)(t % ", lanes, ");\n",
                  "    const bool live = u < ", f.n * parts, "LL;  // every lane reaches the shuffles\n");
  body += parts > 1 ? str_cat("    const long long i = u / ", parts, ", part = u % ", parts, ";  // the output; its part of the plane\n")
                    : "    const long long i = u;  // the output\n";
  body += "    float v = 0.0f;\n    if (live) {\n" + gemv_dot(ex, params, plan, n, f, lanes, xs) + "    }\n";
  body += lanes_sum(lanes);
  // `continue`, not `return`: a warp can hold live and dead units, and its dead lanes must
  // still reach the next element's shuffles.
  body += "    if (!live) continue;\n";
  body += decompose("i", n.outputs[0]->type.shape, "o");
  body += gemv_scale_bias(ex, n, f, "    ");
  std::set<const Value*> written = {plan.root(out)};
  const EpilogueSteps steps_code = epilogue_steps(ex, plan, g, "i");
  body += steps_code.code;
  if (g.gate) body += gate_code(m, g, params, plane, parts, lanes);
  else body += str_cat("    if (lane == 0) ", params.ref(out, {}, "out"), "[", steps_code.store_index, "] = ", ex.store(plan.dtype_of(out), "v"), ";\n");
  body += "  }\n";
  return group_work(g, m.function(g, "int item" + params.declarations(written), body), params);
}

// A grouped or depthwise 2-D Conv a strip at a time (support.h strip_conv): each thread
// computes PointwiseSchedule::strip outputs of one column of one output channel, the lanes of a
// warp on consecutive columns, so that each load and store of a warp is one contiguous run. For each
// input channel of its group the thread loads the kernel's columns of every input row its
// outputs read, each row once for all of them, unconditionally (a position in the padding reads
// element 0 and counts 0) and all before the first product. With one output a thread
// (direct_conv_code) each output loaded its whole window and a thread's outputs ran one after
// another; with strips along a row, a warp's loads were 4 to 8 rows apart (efficientnet-b0's
// depthwise stages 2-10 us, about ten times their traffic at the bandwidth; H100,
// bench/RESULTS.md session 11).
GroupWork emit_conv_strips(Module& m, const Group& g) {
  const Node& n = *g.anchor;
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& ws = n.inputs[1]->type.shape;
  const Shape& ys = n.outputs[0]->type.shape;
  const WindowGeometry geo = conv_geometry(n);
  const int height = g.pointwise.strip;
  const int64_t cin_g = ws[1], cout_g = ws[0] / node_attrs(n).attr_int("group");
  const int64_t per_col = ceil_div(ys[2], height), strips = conv_strips(n, height);
  const int64_t sh = geo.strides[0], sw = geo.strides[1], dh = geo.dilations[0], dw = geo.dilations[1];
  const int64_t kh = ws[2], kw = ws[3];
  const int64_t rows = (height - 1) * sh + (kh - 1) * dh + 1;  // input rows a strip reads
  const int ilp = g.pointwise.ilp;
  std::string body = str_cat(
      "  for (int e = 0; e < ", ilp, "; ++e) {\n",
      "    const long long t = ((long long)item * ", ilp, " + e) * MONO_THREADS + threadIdx.x;  // the strip\n",
      "    if (t >= ", strips, "LL) return;\n",
      "    const int ow = (int)(t % ", ys[3], "LL);\n",
      "    long long r = t / ", ys[3], "LL;\n",
      "    const int oh0 = (int)(r % ", per_col, "LL) * ", height, ";\n    r /= ", per_col, "LL;\n",
      "    const int oc = (int)(r % ", ys[1], "LL);\n",
      "    const long long b = r / ", ys[1], "LL;\n",
      "    const long long xc = b * ", xs[1], "LL + (long long)(oc / ", cout_g, ") * ", cin_g, "LL;  // the group's first input channel\n",
      "    const int iw0 = ow * ", sw, " - ", geo.pad_begin[1], ", ih0 = oh0 * ", sh, " - ", geo.pad_begin[0], ";\n",
      "    float acc[", height, "];\n#pragma unroll\n    for (int q = 0; q < ", height, "; ++q) acc[q] = 0.0f;\n",
      "    for (int c = 0; c < ", cin_g, "; ++c) {\n",
      "      float xr[", rows, "][", kw, "];\n",
      "#pragma unroll\n      for (int j = 0; j < ", rows, "; ++j) {\n",
      "        const int ih = ih0 + j;\n",
      "        const bool row_in = ih >= 0 && ih < ", xs[2], ";\n",
      "        const long long row = ((xc + c) * ", xs[2], "LL + ih) * ", xs[3], "LL;\n",
      "#pragma unroll\n        for (int u = 0; u < ", kw, "; ++u) {\n",
      "          const int iw = iw0 + u * ", dw, ";\n",
      "          const bool in = row_in && iw >= 0 && iw < ", xs[3], ";\n",
      "          const float xv = ", ex.load(n.inputs[0], "in ? row + iw : 0LL", "x"), ";\n",
      "          xr[j][u] = in ? xv : 0.0f;\n        }\n      }\n",
      "#pragma unroll\n      for (int a = 0; a < ", kh, "; ++a)\n",
      "#pragma unroll\n        for (int u = 0; u < ", kw, "; ++u) {\n",
      "          const float wv = ", ex.load(n.inputs[1], str_cat("((oc * ", cin_g, "LL + c) * ", kh, "LL + a) * ", kw, "LL + u"), "w"), ";\n",
      "#pragma unroll\n          for (int q = 0; q < ", height, "; ++q) acc[q] += xr[q * ", sh, " + a * ", dh, "][u] * wv;\n",
      "        }\n    }\n",
      "#pragma unroll\n    for (int q = 0; q < ", height, "; ++q) {\n");
  if (per_col * height != ys[2]) body += str_cat("      if (oh0 + q >= ", ys[2], ") break;\n");
  body += str_cat("      const long long i = ((b * ", ys[1], "LL + oc) * ", ys[2], "LL + oh0 + q) * ", ys[3], "LL + ow;\n",
                  "      float v = acc[q];\n");
  if (n.input(2)) body += str_cat("      v += ", ex.load(n.inputs[2], "oc", "bias"), ";\n");
  std::set<const Value*> written = {plan.root(g.output)};
  const EpilogueSteps steps = epilogue_steps(ex, plan, g, "i");
  body += steps.code;
  body += str_cat("      ", params.ref(g.output, {}, "out"), "[", steps.store_index, "] = ", ex.store(plan.dtype_of(g.output), "v"),
                  ";\n    }\n  }\n");
  return group_work(g, m.function(g, "int item" + params.declarations(written), body), params);
}

// A pointwise group eight channels a thread (support.h channel_vectors): the thread's eight
// consecutive elements of the last axis are one 16-byte load per input (fp16 in Mono's own
// buffers; elsewhere eight loads) and one 16-byte store, and the anchor's index arithmetic (a
// Concat's choice of input, a pool's window) is done once for all eight. The steps run per
// element at flat index i, as in every pointwise group. A channels-last depthwise Conv takes its
// eight weights of a window position as one 16-byte load too. An image padded to 8 channels and
// stored channels-last (padded_to_channels_last) runs in the stored order instead: a pixel a
// thread, its eight channels read from eight planes (a stem's Pad stage took 4.86 us of
// resnet50's 349 with each thread storing 2 bytes 16 bytes apart; H100, bench/runs/run133).
GroupWork emit_channel_vectors(Module& m, const Group& g) {
  const Node& n = *g.anchor;
  const KernelPlan& plan = m.plan;
  ParamList params(m);
  Expressions ex(plan, params);
  ex.allow_computed();
  const Value* out = g.output;
  const bool padded = padded_to_channels_last(g);
  const Shape& ys = padded ? out->type.shape : n.outputs[0]->type.shape;  // the order the threads take
  const bool f16 = plan.dtype_of(n.outputs[0]) == DType::kF16;
  auto vector = [&](const Value* v) { return f16 && plan.dtype_of(v) == DType::kF16 && plan.own_buffer(v); };
  // Statements setting av[0..7] from x's eight elements at `off`.
  auto load8 = [&](const Value* x, const std::string& off, const std::string& role, const std::string& ind) {
    if (vector(x))
      return str_cat(ind, "const u32x4 q = *reinterpret_cast<const u32x4*>(", params.ref(x, {}, role), " + (", off, "));\n", ind,
                     "const half_t* h = reinterpret_cast<const half_t*>(&q);\n", ind, "#pragma unroll\n", ind,
                     "for (int j = 0; j < 8; ++j) av[j] = to_float(h[j]);\n");
    return str_cat(ind, "#pragma unroll\n", ind, "for (int j = 0; j < 8; ++j) av[j] = ",
                   ex.load(x, str_cat("(", off, ") + j"), role), ";\n");
  };
  const int ilp = g.pointwise.ilp;
  std::string body = str_cat("  for (int e = 0; e < ", ilp, "; ++e) {\n",
                             "    const long long t = ((long long)item * ", ilp, " + e) * MONO_THREADS + threadIdx.x;  // eight channels\n",
                             "    if (t >= ", shape_numel(ys) / 8, "LL) return;\n", "    const long long i8 = t * 8;\n");
  body += decompose("i8", ys, padded ? "s" : "o");
  body += "    float av[8];\n";
  if (padded) {  // stored [N][H][W][8] = the Pad's [N][8][H][W]: anchor index (s0, j, s1, s2)
    body += str_cat("#pragma unroll\n    for (int j = 0; j < 8; ++j) {\n",
                    "      const int o0 = s0, o1 = j, o2 = s1, o3 = s2;\n      (void)s3;\n", anchor_code(ex, plan, n),
                    "      av[j] = v;\n    }\n");
  } else if (n.op == OpKind::kConcat) {  // every input's last axis is whole vectors: the eight are in one input
    body += concat_choice(n, [&](int k, const std::string& off) {
      return str_cat("{\n", load8(n.inputs[k], off, str_cat("in", k), "      "), "    }\n");
    });
  } else {  // a channels-last MaxPool or depthwise Conv: every load of the window first, unconditionally (a padding position reads element 0)
    const Value* x = n.inputs[0];
    const Shape& xs = x->type.shape;  // [N][H][W][C]
    const bool conv = n.op == OpKind::kConv;
    const WindowGeometry geo = conv ? conv_geometry(n) : pool_geometry(n);
    const int64_t window = geo.kernel[0] * geo.kernel[1];
    body += str_cat("#pragma unroll\n    for (int j = 0; j < 8; ++j) av[j] = ", conv ? "0.0f" : "-__int_as_float(0x7f800000)", ";\n");
    body += str_cat("    bool in[", window, "];\n");
    // Up to 16 positions are all loaded before the first use; a larger window (its vectors
    // would fill registers) uses each vector as it arrives.
    const bool prefetch = vector(x) && window <= 16;
    body += prefetch ? str_cat("    u32x4 q[", window, "];\n") : "";
    // Statements folding position w's eight inputs xv(j) into av[] where the position is inside
    // the image: the maximum, or the products with the position's eight weights (W packed
    // [KH*KW][C]: one 16-byte vector in fp16).
    auto use = [&](const std::string& xv, const std::string& ind) {
      if (!conv) return str_cat("#pragma unroll\n", ind, "for (int j = 0; j < 8; ++j) if (in[w]) av[j] = fmax_nan(av[j], ", xv, ");\n");
      if (plan.dtype_of(n.inputs[1]) == DType::kF16)
        return str_cat(ind, "const u32x4 wq = *reinterpret_cast<const u32x4*>(", params.ref(n.inputs[1], plan.packing(n, 1), "weight"), " + w * ",
                       xs[3], "LL + o3);\n", ind, "const half_t* wh = reinterpret_cast<const half_t*>(&wq);\n",
                       "#pragma unroll\n", ind, "for (int j = 0; j < 8; ++j) if (in[w]) av[j] += ", xv, " * to_float(wh[j]);\n");
      return str_cat("#pragma unroll\n", ind, "for (int j = 0; j < 8; ++j) if (in[w]) av[j] += ", xv, " * ", depthwise_weight(ex, n, "w", "o3 + j"),
                     ";\n");
    };
    const std::string loop = nhwc_window_loops(geo, xs, "w");
    const std::string off = nhwc_window_offset(xs, "w");
    if (prefetch) {
      body += loop + str_cat("    q[w] = *reinterpret_cast<const u32x4*>(", params.ref(x, {}, "x"), " + (", off, "));\n    }\n    }\n");
      body += str_cat("#pragma unroll\n    for (int w = 0; w < ", window, "; ++w) {\n      const half_t* h = reinterpret_cast<const half_t*>(&q[w]);\n",
                      use("to_float(h[j])", "      "), "    }\n");
    } else if (vector(x)) {
      body += loop + str_cat("    const u32x4 q = *reinterpret_cast<const u32x4*>(", params.ref(x, {}, "x"), " + (", off, "));\n",
                             "    const half_t* h = reinterpret_cast<const half_t*>(&q);\n", use("to_float(h[j])", "    "), "    }\n    }\n");
    } else {
      body += loop + use(ex.load(x, str_cat("(", off, ") + j"), "x"), "    ") + "    }\n    }\n";
    }
    if (conv && n.input(2))
      body += str_cat("#pragma unroll\n    for (int j = 0; j < 8; ++j) av[j] += ", ex.load(n.inputs[2], "o3 + j", "bias"), ";\n");
  }
  std::string steps_code;  // the padded image's one step is the layout its threads already take
  if (!padded) {
    const EpilogueSteps steps = epilogue_steps(ex, plan, g, "i");
    MONO_CHECK(steps.store_index == "i", n.describe(), ": a channel-vector group must store at its flat index");
    steps_code = steps.code;
  }
  std::set<const Value*> written = {plan.root(out)};
  const bool vector_out = vector(out);
  const std::string out_ref = params.ref(out, {}, "out");
  if (vector_out) body += "    u32x4 rq;\n    half_t* r = reinterpret_cast<half_t*>(&rq);\n";
  body += str_cat("#pragma unroll\n    for (int j = 0; j < 8; ++j) {\n      const long long i = i8 + j;\n",
                  "      float v = av[j];\n", steps_code);
  body += vector_out ? str_cat("      r[j] = ", ex.store(DType::kF16, "v"), ";\n    }\n",
                               "    *reinterpret_cast<u32x4*>(", out_ref, " + i8) = rq;\n  }\n")
                     : str_cat("      ", out_ref, "[i] = ", ex.store(plan.dtype_of(out), "v"), ";\n    }\n  }\n");
  return group_work(g, m.function(g, "int item" + params.declarations(written), ex.prelude() + body), params);
}

}  // namespace

GroupWork emit_pointwise(Module& m, const Group& g) {
  const Node& n = *g.anchor;
  if (n.op == OpKind::kSplit) return emit_split(m, g);
  if (n.op == OpKind::kGlobalAveragePool) return emit_global_pool(m, g);
  GemvForm gemv;
  if (gemv_form(n, &gemv)) return emit_gemv(m, g, gemv);
  if (g.pointwise.strip > 0) return emit_conv_strips(m, g);
  if (channel_vectors(m.plan, g)) return emit_channel_vectors(m, g);
  ParamList params(m);
  Expressions ex(m.plan, params);
  ex.allow_computed();
  const Value* out = g.output;
  std::string body = element_loop(g.pointwise.ilp, out->type.numel());
  body += decompose("i", n.outputs[0]->type.shape, "o");
  body += anchor_code(ex, m.plan, n);
  std::set<const Value*> written = {m.plan.root(out)};
  if (n.op == OpKind::kMaxPool && n.outputs.size() > 1 && n.outputs[1]) {  // Indices, at the same index as Y
    body += str_cat("    ", params.ref(n.outputs[1], {}, "indices_out"), "[i] = am;\n");
    written.insert(m.plan.root(n.outputs[1]));
  }
  const EpilogueSteps steps = epilogue_steps(ex, m.plan, g, "i");
  body += steps.code;
  body += str_cat("    ", params.ref(out, {}, "out"), "[", steps.store_index, "] = ", ex.store(m.plan.dtype_of(out), "v"), ";\n  }\n");
  return group_work(g, m.function(g, "int item" + params.declarations(written), ex.prelude() + body), params);
}

}  // namespace mono::emit
