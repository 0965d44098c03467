#include "compiler/codegen/support.h"

#include <algorithm>
#include <cmath>

#include "compiler/ops/layer_normalization.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/softmax.h"
#include "compiler/ops/transpose.h"

namespace mono {

bool is_epilogue_op(OpKind op) {
  switch (op) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow:
    case OpKind::kMax: case OpKind::kMin: case OpKind::kRelu: case OpKind::kClip: case OpKind::kGelu:
    case OpKind::kSigmoid: case OpKind::kTanh: case OpKind::kErf: case OpKind::kExp: case OpKind::kLog:
    case OpKind::kSqrt: case OpKind::kNeg: case OpKind::kAbs: case OpKind::kReciprocal:
    case OpKind::kSum: case OpKind::kMean: case OpKind::kMod: case OpKind::kPRelu: case OpKind::kSign:
    case OpKind::kSin: case OpKind::kCos: case OpKind::kTan: case OpKind::kAsin: case OpKind::kAcos:
    case OpKind::kAtan: case OpKind::kSinh: case OpKind::kCosh: case OpKind::kAsinh: case OpKind::kAcosh:
    case OpKind::kAtanh: case OpKind::kFloor: case OpKind::kCeil: case OpKind::kRound: case OpKind::kSoftplus:
    case OpKind::kSoftsign: case OpKind::kMish: case OpKind::kHardSwish: case OpKind::kSwish: case OpKind::kHardSigmoid:
    case OpKind::kLeakyRelu: case OpKind::kElu: case OpKind::kSelu: case OpKind::kCelu:
    case OpKind::kThresholdedRelu: case OpKind::kShrink:
      return true;
    default:
      return false;
  }
}

bool codegen_supports(const Node& n) {
  switch (n.op) {
    // Folded away by simplification when their inputs are constants; not compiled.
    case OpKind::kConstant: case OpKind::kConstantOfShape: case OpKind::kRange: case OpKind::kShape: case OpKind::kSize:
      return false;
    case OpKind::kBatchNormalization:
      return n.outputs.size() == 1;
    default:
      return true;
  }
}

const Value* running_value(const Group& g, const Node* e) {
  const Value* prev = g.anchor->outputs[0];
  for (const Node* x : g.epilogue) {
    if (x == e) return prev;
    if (x->op != OpKind::kIsNaN) prev = x->outputs[0];
  }
  return prev;
}

int64_t row_length(const Node& n) {
  return n.op == OpKind::kSoftmax ? softmax_layout(n).n : layer_norm_row_length(n);
}

bool block_per_row(const Node& n) { return row_length(n) > kWarpRowValues; }

Packing constant_packing(const Node& n, int i) {
  Packing p;
  if (i != 1) return p;
  if (n.op == OpKind::kMatMul) p.transposed = n.inputs[1]->type.rank() == 2;
  if (n.op == OpKind::kGemm) p.transposed = node_attrs(n).attr_int("transB") == 0;
  if (channels_last_depthwise(n)) p.transposed = true;
  return p;
}

int default_pool_warps(const Node& n, const KernelContext& ctx) {
  if (n.op != OpKind::kGlobalAveragePool) return 0;
  const Shape& xs = n.inputs[0]->type.shape;
  if (xs.size() < 3) return 1;
  const int64_t outputs = xs[0] * xs[1], plane = shape_numel(xs) / std::max<int64_t>(outputs, 1);
  const int block_warps = ctx.threads / 32;
  int warps = 1;
  while (warps < 8 && block_warps % (warps * 2) == 0 && plane >= int64_t{2} * 256 * warps * 2 &&
         outputs * warps * 2 <= int64_t{block_warps} * ctx.grid())
    warps *= 2;
  return warps;
}

std::string pool_warps_problem(const Node& n, int warps, const KernelContext& ctx) {
  if (n.op != OpKind::kGlobalAveragePool)
    return warps == 0 ? "" : str_cat(warps, " warps an output for a group that is not a GlobalAveragePool");
  if (warps != 1 && warps != 2 && warps != 4 && warps != 8) return str_cat("warps an output ", warps, " is not 1, 2, 4 or 8");
  if ((ctx.threads / 32) % warps != 0) return str_cat(warps, " warps an output do not divide a block of ", ctx.threads / 32, " warps");
  return "";
}

bool channels_last_depthwise(const Node& n) {
  return n.op == OpKind::kConv && channels_last_layout(n) && node_attrs(n).attr_int("group") != 1;
}

bool gemv_form(const Node& n, GemvForm* out) {
  GemvForm f;
  if (n.num_inputs() < 2 || !n.inputs[0] || !n.inputs[1] || n.outputs.size() != 1 || !n.outputs[0]) return false;
  const Value* y = n.outputs[0];
  const Shape& ws = n.inputs[1]->type.shape;
  if (!n.inputs[1]->is_constant()) return false;
  f.x = n.inputs[0];
  f.w = n.inputs[1];
  f.bias = n.input(2) ? n.inputs[2] : nullptr;
  switch (n.op) {
    case OpKind::kGemm: {  // A [1,K] (or [K,1] with transA: the same K values in order)
      const AttrReader a = node_attrs(n);
      const bool trans_b = a.attr_int("transB") != 0;
      f.k = trans_b ? ws[1] : ws[0];
      f.n = trans_b ? ws[0] : ws[1];
      f.alpha = a.attr_float("alpha");
      f.beta = a.attr_float("beta");
      if (f.bias && f.beta == 0.0f) f.bias = nullptr;
      break;
    }
    case OpKind::kMatMul:  // A [.., 1, K] with one row in all, B [K, N]
      if (ws.size() != 2) return false;
      f.k = ws[0];
      f.n = ws[1];
      break;
    case OpKind::kConv: {
      if (channels_last_layout(n) || node_attrs(n).attr_int("group") != 1 || !pointwise_conv(n)) return false;
      const Shape& xs = n.inputs[0]->type.shape;
      if (xs.size() < 3 || xs[0] != 1 || shape_numel(xs) != xs[1]) return false;  // one image of one pixel
      f.k = ws[1];
      f.n = ws[0];
      break;
    }
    default:
      return false;
  }
  if (f.x->type.numel() != f.k || y->type.numel() != f.n || f.k <= 0 || f.n <= 0) return false;
  if (!is_float(f.x->type.dtype) || !is_float(y->type.dtype)) return false;
  if (out) *out = f;
  return true;
}

bool strip_conv(const Node& n) {
  if (n.op != OpKind::kConv || channels_last_layout(n) || node_attrs(n).attr_int("group") == 1) return false;
  if (n.inputs[0]->type.rank() != 4 || !n.outputs[0] || n.outputs[0]->type.numel() == 0) return false;
  // Constant, finite weights: a strip adds 0 x w for a padding position, which is NaN for an
  // infinite or NaN w, where the reference skips the position (direct_conv_code does too).
  const Value* w = n.inputs[1];
  if (!w->is_constant()) return false;
  for (int64_t i = 0; i < w->constant->numel(); ++i)
    if (!std::isfinite(w->constant->as_double(i))) return false;
  return true;
}

bool padded_to_channels_last(const Group& g) {
  const Node& n = *g.anchor;
  if (n.op != OpKind::kPad || g.epilogue.size() != 1 || g.epilogue[0]->op != OpKind::kTranspose) return false;
  const Value* y = g.epilogue[0]->outputs[0];
  return n.outputs[0]->type.rank() == 4 && transpose_perm(*g.epilogue[0]) == kNchwToNhwc && y->type.shape.back() == 8 &&
         y->type.numel() > 0;
}

bool channel_vectors(const KernelPlan& plan, const Group& g) {
  const Node& n = *g.anchor;
  if (g.kind != GroupKind::kPointwise || g.gate || n.outputs.size() != 1 || !n.outputs[0]) return false;
  if (plan.swapped_last2.count(plan.root(g.output))) return false;
  if (!is_float(plan.dtype_of(n.outputs[0]))) return false;  // av[] and the steps run in float
  if (padded_to_channels_last(g)) return true;
  const Shape& ys = n.outputs[0]->type.shape;
  const int64_t rank = static_cast<int64_t>(ys.size());
  if (rank < 2 || ys.back() % 8 != 0 || shape_numel(ys) == 0) return false;
  if (n.op == OpKind::kConcat) {
    int64_t axis = node_attrs(n).attr_int("axis");
    if (axis < 0) axis += rank;
    if (axis != rank - 1) return false;
    for (const Value* in : n.inputs)
      if (!in || in->type.shape.size() != ys.size() || in->type.shape.back() % 8 != 0) return false;
  } else if (!(n.op == OpKind::kMaxPool && channels_last_layout(n)) && !channels_last_depthwise(n)) {
    return false;
  }
  for (const Node* e : g.epilogue)
    if (e->op == OpKind::kTranspose) return false;
  return true;
}

int even_strip_height(int64_t rows, int most) { return static_cast<int>(ceil_div(rows, ceil_div(rows, most))); }

int default_strip_height(const Node& n, const KernelContext& ctx) {
  if (!strip_conv(n)) return 0;
  const Shape& ys = n.outputs[0]->type.shape;
  const bool depthwise = n.inputs[1]->type.shape[1] == 1;
  const int64_t columns = ys[0] * ys[1] * ys[3], threads = int64_t{ctx.threads} * ctx.grid();
  for (int most = 8; most > 1; --most) {
    const int h = even_strip_height(ys[2], most);
    if (depthwise || columns * ceil_div(ys[2], h) >= threads) return h;
  }
  return 1;
}

std::string strip_problem(const Node& n, int strip) {
  if (!strip_conv(n)) return strip == 0 ? "" : str_cat("strip ", strip, " for a group that is not a strip convolution");
  if (strip < 1 || strip > 8) return str_cat("strip height ", strip, " is not in 1..8");
  return "";
}

int64_t conv_strips(const Node& n, int height) {
  const Shape& ys = n.outputs[0]->type.shape;
  return ys[0] * ys[1] * ceil_div(ys[2], height) * ys[3];
}

int gemv_lanes(int64_t k) {
  int lanes = 1;
  while (lanes < 32 && lanes * int64_t{8} < k) lanes *= 2;
  return lanes;
}

bool squeeze_fits_inside(const GemvForm& f) { return f.n * f.k <= kSqueezeInsideWeights && f.n <= 1024; }

int64_t gate_plane(const Group& g) {
  if (!g.gate) return 0;
  const Shape& ys = g.gate->outputs[0]->type.shape;
  return shape_numel(ys) / ys[1];
}

int64_t gate_parts(int64_t plane, int lanes) { return plane > 0 ? ceil_div(plane, int64_t{kGateLaneElements} * lanes) : 1; }

int gemm_smem_bytes(bool f16, int bm, int bn, int bk, int stages) {
  if (f16) return stages * (bm + bn) * (bk + 8) * 2 + 64;  // + the bulk loaders' mbarriers (gemm_f16.cuh)
  return 2 * (bm + bn) * (bk + 4) * 4;
}

}  // namespace mono
