// Convolutions in channels-last layout. A standard Conv reads NCHW activations, so its implicit
// GEMM gathers the receptive field one 2-byte element at a time (channel planes apart); in NHWC
// the channels of a pixel are contiguous and a gather moves 16 bytes. This pass moves whole
// regions of a convolutional network to NHWC:
//
//   y = Conv(x, w, b)   ->   y = Transpose(Conv'(Transpose(x, to NHWC), w as [F][KH][KW][C], b), to NCHW)
//   where Conv' is a 1x1 stride-1 convolution:  Reshape(Gemm(Reshape(x', [N*H*W, C]), w as [F][C], b) {transB})
//         otherwise:                              the Conv with mono.channels_last = 1 (ops/conv.cc),
//                                                 one group or depthwise (MobileNet's)
//
// and rewrites the MaxPools, channel Concats (DenseNet's) and elementwise nodes between them
// (activations, residual Adds, folded BatchNorm arithmetic) on the NHWC values, constants permuted to match, so that the
// transposes are left only where a region meets a node that stays NCHW (a grouped
// convolution, a global pooling, the model's edges). A model input whose channels are not a
// multiple of 8 (an image's 3) is padded with zero channels on entry, and its Conv's weights
// with zeros.
//
// A region (the convertible convolutions, pools and elementwise nodes connected through their
// 4-D activations) is converted only if it has at least twice as many convolutions as boundary
// transposes: each transpose costs a pass over its tensor, and a region of one or two
// convolutions between nodes that stay NCHW (EfficientNet's squeeze-and-excitation gates) would
// gain less than that.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/transpose.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {
namespace {


// Elementwise ops whose result at an index depends only on their inputs at that index
// (after broadcasting), so that they commute with a permutation of the axes.
bool is_elementwise(OpKind op) {
  switch (op) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv: case OpKind::kMax:
    case OpKind::kMin: case OpKind::kPow: case OpKind::kRelu: case OpKind::kClip: case OpKind::kLeakyRelu:
    case OpKind::kSigmoid: case OpKind::kHardSigmoid: case OpKind::kHardSwish: case OpKind::kSwish: case OpKind::kTanh:
    case OpKind::kElu: case OpKind::kSelu: case OpKind::kGelu: case OpKind::kErf: case OpKind::kExp:
    case OpKind::kNeg: case OpKind::kAbs: case OpKind::kSqrt: case OpKind::kMish: case OpKind::kSoftplus:
      return true;
    default:
      return false;
  }
}

// A depthwise 2-D Conv: one input channel a group and one output channel per input channel.
bool depthwise(const Node& n) {
  const Shape& xs = n.inputs[0]->type.shape;
  const Shape& ws = n.inputs[1]->type.shape;
  const int64_t group = node_attrs(n).attr_int("group");
  return group > 1 && xs.size() == 4 && ws.size() == 4 && group == xs[1] && ws[0] == group && ws[1] == 1;
}

bool convertible_conv(const Graph& g, const Node& n);
bool convertible_elementwise(const Node& n);

// Whether a depthwise Conv's result, through elementwise nodes this pass converts that are each
// the sole reader of the one before (its activation), reaches a Conv it converts: MobileNetV2's
// projection. One that feeds a squeeze-and-excitation block (a global pooling and the gate Mul,
// which stay NCHW) stays NCHW too: its region would end in a transpose back, which the
// eight-channel path does not store. With every depthwise Conv converted, the one-output-a-thread
// fallback and the extra transposes made mobilenet-v3-large 6 % slower (225.3 -> 238.8 us); with
// this rule it is within noise (224.2 -> 226.3) and mobilenet-v2 is 5 % faster (202.9 -> 192.2;
// H100, bench/RESULTS.md session 13).
bool depthwise_feeds_conv(const Graph& g, const Node& n) {
  const Node* at = &n;
  for (;;) {
    const std::vector<Node*> users = g.users(at->outputs[0]);
    if (users.size() != 1 || g.is_graph_output(at->outputs[0])) return false;
    at = users[0];
    if (at->op == OpKind::kConv) return convertible_conv(g, *at);
    if (!convertible_elementwise(*at)) return false;
  }
}

// A Conv this pass converts: 2-D, one group or depthwise (depthwise_feeds_conv), constant
// weights (and bias), channels in and out in whole 16-byte vectors of fp16 (the gather's unit; a
// depthwise convolution's thread takes eight channels of a pixel, emit/pointwise.cc
// emit_channel_vectors). A model's input may have other channel counts (an image's 3): it is
// transposed on entry anyway, and padded with zero channels then.
bool convertible_conv(const Graph& g, const Node& n) {
  if (n.op != OpKind::kConv || channels_last_layout(n)) return false;
  const Value* x = n.inputs[0];
  const Value* w = n.input(1);
  const Value* b = n.input(2);
  if (!w || !w->is_constant() || (b && !b->is_constant())) return false;
  if (x->type.rank() != 4 || w->type.rank() != 4) return false;
  if (depthwise(n)) return x->type.shape[1] % 8 == 0 && depthwise_feeds_conv(g, n);
  if (node_attrs(n).attr_int("group") != 1) return false;
  return (x->type.shape[1] % 8 == 0 || g.is_graph_input(x)) && w->type.shape[0] % 8 == 0;
}

// A 2-D MaxPool without Indices.
bool convertible_pool(const Node& n) {
  return n.op == OpKind::kMaxPool && !channels_last_layout(n) && n.inputs[0]->type.rank() == 4 &&
         !(n.outputs.size() > 1 && n.outputs[1]);
}

// An elementwise node on 4-D activations: every input is the output's shape, or a constant
// that broadcasts to it (permuted along with the activations).
bool convertible_elementwise(const Node& n) {
  if (!is_elementwise(n.op) || n.outputs.size() != 1 || !n.outputs[0]) return false;
  const Shape& ys = n.outputs[0]->type.shape;
  if (ys.size() != 4) return false;
  bool activation = false;
  for (const Value* in : n.inputs) {
    if (!in) continue;
    if (in->is_constant()) {
      if (in->type.rank() > 4) return false;
      continue;
    }
    if (in->type.shape != ys) return false;
    activation = true;
  }
  return activation;
}

// A Concat of 4-D activations along the channels (DenseNet's): along the last axis in NHWC.
bool convertible_concat(const Node& n) {
  if (n.op != OpKind::kConcat || n.outputs.size() != 1 || !n.outputs[0] || n.outputs[0]->type.rank() != 4) return false;
  const int64_t axis = node_attrs(n).attr_int("axis");
  if (axis != 1 && axis != -3) return false;
  for (const Value* in : n.inputs)
    if (!in || in->is_constant() || in->type.rank() != 4) return false;
  return true;
}

bool convertible(const Graph& g, const Node& n) {
  return convertible_conv(g, n) || convertible_pool(n) || convertible_concat(n) || convertible_elementwise(n);
}

// A constant operand of an elementwise node, as its NHWC counterpart reads it.
Value* nhwc_constant(Graph& g, Value* c, const std::string& base) {
  if (c->type.numel() == 1) return c;  // a scalar broadcasts the same in either layout
  Shape s = c->type.shape;
  while (s.size() < 4) s.insert(s.begin(), 1);
  return g.add_constant(base + ".nhwc", permute(c->constant->reshaped(s), kNchwToNhwc));
}

class Converter {
 public:
  explicit Converter(Graph& g) : g_(g) {}

  // The regions of convertible nodes (connected through their non-constant values), each in
  // the graph's order.
  std::vector<std::vector<Node*>> regions() {
    std::map<const Node*, int> index;
    std::vector<Node*> nodes;
    for (const auto& n : g_.nodes())
      if (convertible(g_, *n)) {
        index[n.get()] = static_cast<int>(nodes.size());
        nodes.push_back(n.get());
      }
    std::vector<int> parent(nodes.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int i) {
      while (parent[i] != i) i = parent[i] = parent[parent[i]];
      return i;
    };
    for (Node* n : nodes)
      for (const Value* in : n->inputs)
        if (in && !in->is_constant() && in->producer && index.count(in->producer))
          parent[find(index[n])] = find(index[in->producer]);
    users_.clear();  // one pass over the graph for boundaries(), not one per value
    for (const auto& n : g_.nodes())
      for (const Value* in : n->inputs)
        if (in) users_[in].push_back(n.get());
    std::map<int, std::vector<Node*>> by_root;
    for (size_t i = 0; i < nodes.size(); ++i) by_root[find(static_cast<int>(i))].push_back(nodes[i]);
    std::vector<std::vector<Node*>> out;
    for (auto& [root, list] : by_root) out.push_back(std::move(list));
    return out;
  }

  // The transposes a region of the last regions() would need: one per activation entering it
  // from outside, one per value it produces that something outside reads (or the graph returns).
  int boundaries(const std::vector<Node*>& region) const {
    const std::set<const Node*> in_region(region.begin(), region.end());
    std::set<const Value*> entering, leaving;
    for (const Node* n : region) {
      for (const Value* in : n->inputs)
        if (in && !in->is_constant() && !(in->producer && in_region.count(in->producer))) entering.insert(in);
      const Value* y = n->outputs[0];
      if (g_.is_graph_output(y)) leaving.insert(y);
      if (auto it = users_.find(y); it != users_.end())
        for (const Node* user : it->second)
          if (!in_region.count(user)) leaving.insert(y);
    }
    return static_cast<int>(entering.size() + leaving.size());
  }

  // Rewrites the nodes (in graph order) on NHWC values.
  void convert(const std::vector<Node*>& nodes) {
    for (Node* n : nodes) {
      Value* y_nhwc = n->op == OpKind::kConv      ? convert_conv(n)
                      : n->op == OpKind::kMaxPool ? convert_pool(n)
                      : n->op == OpKind::kConcat  ? convert_concat(n)
                                                  : convert_elementwise(n);
      Node* back = g_.insert_node_before(n, OpKind::kTranspose, n->name + ".nchw", {y_nhwc},
                                         {n->outputs[0]->name + ".nchw"}, n->opset);
      back->attrs["perm"] = kNhwcToNchw;
      back->outputs[0]->type = n->outputs[0]->type;
      g_.replace_all_uses(n->outputs[0], back->outputs[0]);
      nhwc_[back->outputs[0]] = y_nhwc;  // the region's readers take the NHWC value directly
    }
  }

 private:
  // The NHWC form of an activation: the region's own, or a transpose of one from outside.
  Value* nhwc(Value* v, const Node* at) {
    if (auto it = nhwc_.find(v); it != nhwc_.end()) return it->second;
    Node* t = g_.insert_node_before(at, OpKind::kTranspose, v->name + ".nhwc_t", {v}, {v->name + ".nhwc"}, at->opset);
    t->attrs["perm"] = kNchwToNhwc;
    t->outputs[0]->type = TensorType{v->type.dtype, permute_shape(v->type.shape, kNchwToNhwc)};
    return nhwc_[v] = t->outputs[0];
  }

  Node* add(const Node* at, OpKind op, const std::string& name, std::vector<Value*> ins, const TensorType& type) {
    Node* n = g_.insert_node_before(at, op, name, std::move(ins), {name + ".y"}, at->opset);
    n->outputs[0]->type = type;
    return n;
  }

  Value* convert_conv(Node* conv) {
    const std::string base = conv->name + ".nhwc";
    Value* in = conv->inputs[0];
    const Shape& is = in->type.shape;  // [N][C][H][W]
    const int64_t c = is[1], c8 = (c + 7) / 8 * 8;
    if (c8 != c) {  // zero channels up to a whole vector, padded before the transpose (which then fuses into the Pad's store)
      Node* pad = add(conv, OpKind::kPad, base + ".pad",
                      {in, g_.add_constant(base + ".pads", Tensor::from_ints({8}, {0, 0, 0, 0, 0, c8 - c, 0, 0}))},
                      TensorType{in->type.dtype, {is[0], c8, is[2], is[3]}});
      pad->opset = std::max(pad->opset, 11);  // pads as an input (before opset 11 they were an attribute)
      in = pad->outputs[0];
    }
    Value* x = nhwc(in, conv);
    const Shape& xs = x->type.shape;  // [N][H][W][C]
    const Shape& ws = conv->inputs[1]->type.shape;
    const Shape ys = permute_shape(conv->outputs[0]->type.shape, kNchwToNhwc);
    const DType dt = x->type.dtype;
    if (c8 == c && pointwise_conv(*conv) && !depthwise(*conv)) {  // a plain GEMM over the pixels
      const int64_t P = xs[0] * xs[1] * xs[2], C = xs[3], F = ws[0];
      Value* rows = insert_reshape(g_, conv, base + ".rows", x, {P, C}, base + ".rows", base + ".rows.y");
      std::vector<Value*> ins = {rows, g_.add_constant(base + ".weight", conv->inputs[1]->constant->reshaped({F, C}))};
      if (conv->input(2)) ins.push_back(conv->inputs[2]);
      Node* gemm = add(conv, OpKind::kGemm, base + ".gemm", ins, TensorType{dt, {P, F}});
      gemm->attrs["transB"] = int64_t{1};
      return insert_reshape(g_, conv, base + ".image", gemm->outputs[0], ys, base + ".image", base + ".image.y");
    }
    Tensor w = permute(*conv->inputs[1]->constant, kNchwToNhwc);
    if (c8 != c) {  // the padded channels' weights are zeros
      Tensor wp(w.dtype(), {ws[0], ws[2], ws[3], c8});  // zero-filled
      const size_t es = dtype_size(w.dtype());
      for (int64_t r = 0; r < ws[0] * ws[2] * ws[3]; ++r)
        std::memcpy(static_cast<char*>(wp.mutable_raw()) + r * c8 * es, static_cast<const char*>(w.raw()) + r * c * es, c * es);
      w = std::move(wp);
    }
    std::vector<Value*> ins = {x, g_.add_constant(base + ".weight", std::move(w))};
    if (conv->input(2)) ins.push_back(conv->inputs[2]);
    Node* last = add(conv, OpKind::kConv, base, ins, TensorType{dt, ys});
    last->attrs = conv->attrs;
    last->attrs.erase("kernel_shape");  // W's shape says it (in the channels-last layout)
    last->attrs[kChannelsLastAttr] = int64_t{1};
    return last->outputs[0];
  }

  Value* convert_pool(Node* n) {
    Node* p = add(n, OpKind::kMaxPool, n->name + ".nhwc", {nhwc(n->inputs[0], n)},
                  TensorType{n->outputs[0]->type.dtype, permute_shape(n->outputs[0]->type.shape, kNchwToNhwc)});
    p->attrs = n->attrs;
    p->attrs[kChannelsLastAttr] = int64_t{1};
    return p->outputs[0];
  }

  Value* convert_concat(Node* n) {
    std::vector<Value*> ins;
    for (Value* in : n->inputs) ins.push_back(nhwc(in, n));
    Node* c = add(n, OpKind::kConcat, n->name + ".nhwc", ins,
                  TensorType{n->outputs[0]->type.dtype, permute_shape(n->outputs[0]->type.shape, kNchwToNhwc)});
    c->attrs["axis"] = int64_t{3};
    return c->outputs[0];
  }

  Value* convert_elementwise(Node* n) {
    std::vector<Value*> ins;
    for (Value* in : n->inputs) {
      if (!in) ins.push_back(nullptr);
      else if (in->is_constant()) ins.push_back(nhwc_constant(g_, in, n->name + ".operand"));
      else ins.push_back(nhwc(in, n));
    }
    Node* e = add(n, n->op, n->name + ".nhwc", ins,
                  TensorType{n->outputs[0]->type.dtype, permute_shape(n->outputs[0]->type.shape, kNchwToNhwc)});
    e->attrs = n->attrs;
    return e->outputs[0];
  }

  Graph& g_;
  std::map<const Value*, Value*> nhwc_;  // an NCHW activation -> the same values in NHWC
  std::map<const Value*, std::vector<const Node*>> users_;  // as regions() found the graph
};

}  // namespace

bool channels_last(Graph& g) {
  Converter conv(g);
  std::vector<std::vector<Node*>> chosen;  // decided on the graph as it is, then converted
  for (std::vector<Node*>& region : conv.regions()) {
    const auto convs = std::count_if(region.begin(), region.end(), [](const Node* n) { return n->op == OpKind::kConv; });
    if (convs > 0 && convs >= 2 * conv.boundaries(region)) chosen.push_back(std::move(region));
  }
  // All chosen regions' nodes at once, in graph order: an activation read by two regions gets
  // its entering transpose before the first of its readers in the graph, whichever region that is.
  std::map<const Node*, size_t> order;
  for (const auto& n : g.nodes()) order.emplace(n.get(), order.size());
  std::vector<Node*> nodes;
  for (const std::vector<Node*>& region : chosen) nodes.insert(nodes.end(), region.begin(), region.end());
  std::sort(nodes.begin(), nodes.end(), [&](const Node* a, const Node* b) { return order.at(a) < order.at(b); });
  conv.convert(nodes);
  if (!chosen.empty()) g.remove_dead_code();
  return !chosen.empty();
}

}  // namespace mono
