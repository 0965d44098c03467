// A convolution whose kernel (larger than 1x1) tiles its input exactly (strides = kernel, no
// padding, dilation 1, one group) is a patch embedding (ViT's first layer): every input element feeds one output
// pixel. Its im2col gather did index arithmetic per element (vit-base's took 31 us on the H100);
// as a matrix product over whole patches it is a copy and a GEMM.
//
//   y = Conv(x [N][C][H][W], w [F][C][KH][KW], b [F])        strides = (KH, KW), H % KH = W % KW = 0
// ->
//   p = Reshape(Transpose(Reshape(x, [N, C, OH, KH, OW, KW]), [0, 2, 4, 1, 3, 5]), [N*OH*OW, C*KH*KW])
//   z = Gemm(p, w as [F][C*KH*KW], b) {transB = 1}          [N*OH*OW][F]
//   y = Reshape(Transpose(Reshape(z, [N, OH*OW, F]), [0, 2, 1]), [N, F, OH, OW])
// The Reshape/Transpose chains then fold with their neighbours (ViT flattens y and transposes
// it back to [N, OH*OW, F]).
#include <algorithm>
#include <string>

#include "compiler/ops/pool.h"
#include "compiler/ops/transpose.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {

std::vector<int64_t> ints_attr(const Node* n, const char* name) {
  const AttrValue* a = n->attr(name);
  return a ? std::get<std::vector<int64_t>>(*a) : std::vector<int64_t>{};
}

// A Conv these rewrites take: input and weights of rank `rank`, constant weights (and bias), one
// group, padding given explicitly (auto_pad NOTSET or VALID).
bool plain_conv(const Node& conv, int64_t rank) {
  const Value* w = conv.input(1);
  const Value* b = conv.input(2);
  if (!w || !w->is_constant() || (b && !b->is_constant()) || conv.inputs[0]->type.rank() != rank || w->type.rank() != rank)
    return false;
  if (const AttrValue* a = conv.attr("group"); a && std::get<int64_t>(*a) != 1) return false;
  if (const AttrValue* a = conv.attr("auto_pad")) {
    const std::string& p = std::get<std::string>(*a);
    if (p != "NOTSET" && p != "VALID") return false;
  }
  return true;
}

bool rewrite_one(Graph& g, Node* conv) {
  if (!plain_conv(*conv, 4) || channels_last_layout(*conv)) return false;
  Value* x = conv->inputs[0];
  Value* w = conv->input(1);
  Value* b = conv->input(2);
  const Shape& xs = x->type.shape;
  const Shape& ws = w->type.shape;
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], F = ws[0], KH = ws[2], KW = ws[3];
  // A 1x1 kernel is a GEMM over the input as it is already (a dense operand, no im2col).
  if (ws[1] != C || KH * KW == 1 || H % KH != 0 || W % KW != 0) return false;
  const std::vector<int64_t> strides = ints_attr(conv, "strides"), dil = ints_attr(conv, "dilations"),
                             pads = ints_attr(conv, "pads"), kernel = ints_attr(conv, "kernel_shape");
  if (strides != std::vector<int64_t>{KH, KW}) return false;
  if (!kernel.empty() && kernel != std::vector<int64_t>{KH, KW}) return false;
  for (int64_t d : dil)
    if (d != 1) return false;
  for (int64_t p : pads)
    if (p != 0) return false;
  const int64_t OH = H / KH, OW = W / KW, K = C * KH * KW;
  Value* y = conv->outputs[0];
  if (y->type.shape != Shape{N, F, OH, OW}) return false;
  const DType dt = x->type.dtype;
  const std::string base = conv->name + ".patches";
  const int opset = conv->opset;
  auto reshape = [&](const std::string& name, Value* v, const Shape& s) {
    return insert_reshape(g, conv, base + name, v, s, base + name, base + name + ".y");
  };
  auto add = [&](OpKind op, const std::string& name, std::vector<Value*> ins, const Shape& out) {
    Node* n = g.insert_node_before(conv, op, base + name, std::move(ins), {base + name + ".y"}, opset);
    n->outputs[0]->type = TensorType{dt, out};
    return n;
  };
  Node* t1 = add(OpKind::kTranspose, ".gather", {reshape(".split", x, {N, C, OH, KH, OW, KW})}, {N, OH, OW, C, KH, KW});
  t1->attrs["perm"] = std::vector<int64_t>{0, 2, 4, 1, 3, 5};
  std::vector<Value*> gemm_in = {reshape(".rows", t1->outputs[0], {N * OH * OW, K}),
                                 g.add_constant(base + ".weight", w->constant->reshaped({F, K}))};
  if (b) gemm_in.push_back(b);
  Node* mm = add(OpKind::kGemm, ".gemm", gemm_in, {N * OH * OW, F});
  mm->attrs["transB"] = int64_t{1};
  Node* t2 = add(OpKind::kTranspose, ".channels", {reshape(".pixels", mm->outputs[0], {N, OH * OW, F})}, {N, F, OH * OW});
  t2->attrs["perm"] = std::vector<int64_t>{0, 2, 1};
  g.replace_all_uses(y, reshape(".image", t2->outputs[0], {N, F, OH, OW}));
  return true;
}

// A 1-D convolution (one group, constant weights, channels in and out in whole 8-element vectors)
// as a channels-last 2-D one of height 1 (ops/conv.cc, mono.channels_last):
//   y = Conv(x [N][C][L], w [F][C][K], b)
// ->
//   y' = Conv(Reshape(Transpose(x, [0, 2, 1]), [N, 1, L, C]), w as [F][1][K][C], b) {channels last}
//   y  = Transpose(Reshape(y', [N, OL, F]), [0, 2, 1])
// The NCHW convolution gathered its receptive field 2 bytes at a time (samples of a channel
// contiguous, channels L apart); channels last, a pixel's channels are one 16-byte gather.
// whisper-encoder's stem (80 -> 384 channels over 3000 frames, then 384 -> 384 at stride 2) took
// 41 and 63 us that way (H100, bench/RESULTS.md session 17). The transposes fold into the
// neighbouring groups' loads and stores (Whisper transposes the result back to [N][OL][F]).
bool rewrite_1d(Graph& g, Node* conv) {
  if (!plain_conv(*conv, 3)) return false;
  Value* x = conv->inputs[0];
  Value* w = conv->input(1);
  Value* b = conv->input(2);
  const Shape& xs = x->type.shape;
  const Shape& ws = w->type.shape;
  const int64_t N = xs[0], C = xs[1], L = xs[2], F = ws[0], K = ws[2];
  if (ws[1] != C || C % 8 != 0 || F % 8 != 0) return false;
  const std::vector<int64_t> st = ints_attr(conv, "strides"), dl = ints_attr(conv, "dilations"),
                             pads = ints_attr(conv, "pads"), kernel = ints_attr(conv, "kernel_shape");
  if (!kernel.empty() && kernel != std::vector<int64_t>{K}) return false;
  const int64_t s = st.empty() ? 1 : st[0], d = dl.empty() ? 1 : dl[0];
  const int64_t p0 = pads.empty() ? 0 : pads[0], p1 = pads.empty() ? 0 : pads[1];
  Value* y = conv->outputs[0];
  if (y->type.rank() != 3) return false;
  const int64_t OL = y->type.shape[2];
  if (y->type.shape != Shape{N, F, OL} || OL != (L + p0 + p1 - d * (K - 1) - 1) / s + 1) return false;
  const DType dt = x->type.dtype;
  const std::string base = conv->name + ".nwc";
  auto add = [&](OpKind op, const std::string& name, std::vector<Value*> ins, const Shape& out) {
    Node* n = g.insert_node_before(conv, op, base + name, std::move(ins), {base + name + ".y"}, conv->opset);
    n->outputs[0]->type = TensorType{dt, out};
    return n;
  };
  auto reshape = [&](const std::string& name, Value* v, const Shape& sh) {
    return insert_reshape(g, conv, base + name, v, sh, base + name, base + name + ".y");
  };
  Node* xt = add(OpKind::kTranspose, ".rows", {x}, {N, L, C});
  xt->attrs["perm"] = std::vector<int64_t>{0, 2, 1};
  std::vector<Value*> ins = {reshape(".image", xt->outputs[0], {N, 1, L, C}),
                             g.add_constant(base + ".weight", permute(*w->constant, {0, 2, 1}).reshaped({F, 1, K, C}))};
  if (b) ins.push_back(b);
  Node* last = add(OpKind::kConv, "", ins, {N, 1, OL, F});
  last->attrs = conv->attrs;
  last->attrs.erase("kernel_shape");  // W's shape says it (in the channels-last layout)
  last->attrs["strides"] = std::vector<int64_t>{1, s};
  last->attrs["dilations"] = std::vector<int64_t>{1, d};
  last->attrs["pads"] = std::vector<int64_t>{0, p0, 0, p1};
  last->attrs[kChannelsLastAttr] = int64_t{1};
  Node* back = add(OpKind::kTranspose, ".channels", {reshape(".frames", last->outputs[0], {N, OL, F})}, {N, F, OL});
  back->attrs["perm"] = std::vector<int64_t>{0, 2, 1};
  g.replace_all_uses(y, back->outputs[0]);
  return true;
}

}  // namespace

bool patch_conv(Graph& g) {
  std::vector<Node*> convs;
  for (const auto& n : g.nodes())
    if (n->op == OpKind::kConv) convs.push_back(n.get());
  bool changed = false;
  for (Node* c : convs) changed |= rewrite_one(g, c) || rewrite_1d(g, c);
  if (changed) g.remove_dead_code();
  return changed;
}

}  // namespace mono
