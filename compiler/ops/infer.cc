#include "compiler/ops/infer.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ops/op.h"

namespace mono {

void check_node_signature(const Node& node) {
  const OpDef& def = op_def(node.op);
  const int n_in = node.num_inputs();
  if (n_in < def.min_inputs || (def.max_inputs >= 0 && n_in > def.max_inputs)) {
    user_error(node.describe(), ": has ", n_in, " inputs; ", def.name, " takes ",
               def.min_inputs, def.max_inputs == def.min_inputs ? "" :
               def.max_inputs < 0 ? " or more" : str_cat(" to ", def.max_inputs));
  }
  for (int i = 0; i < def.min_inputs && i < n_in; ++i) {
    if (!node.inputs[i]) user_error(node.describe(), ": required input ", i, " is missing");
  }
  const int n_out = static_cast<int>(node.outputs.size());
  if (n_out < def.min_outputs || n_out > def.max_outputs) {
    user_error(node.describe(), ": has ", n_out, " outputs; ", def.name, " produces ",
               def.min_outputs, def.max_outputs == def.min_outputs ? "" : str_cat(" to ", def.max_outputs));
  }
  for (const auto& [key, value] : node.attrs) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attrs)
      if (key == s.name) spec = &s;
    if (!spec) user_error(node.describe(), ": unsupported attribute '", key, "'");
    if (attr_type_of(value) != spec->type) {
      user_error(node.describe(), ": attribute '", key, "' must be ", attr_type_name(spec->type),
                 ", got ", attr_type_name(attr_type_of(value)));
    }
  }
  for (const AttrSpec& s : def.attrs) {
    if (s.required && !node.attr(s.name))
      user_error(node.describe(), ": required attribute '", s.name, "' is missing");
  }
}

void infer_node(Node& node, const std::vector<const Tensor*>& known) {
  const OpDef& def = op_def(node.op);
  InferContext ctx(node, def, known);
  def.infer(ctx);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* out = node.outputs[i];
    if (out && out->type.numel() < 0)
      user_error(node.describe(), ": output ", i, " has an invalid shape ", out->type.str());
  }
}

std::vector<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs) {
  const OpDef& def = op_def(node.op);
  std::vector<Tensor> outputs(node.outputs.size());
  std::vector<Tensor*> out_ptrs(node.outputs.size(), nullptr);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i]) continue;
    outputs[i] = Tensor(node.outputs[i]->type);
    out_ptrs[i] = &outputs[i];
  }
  ComputeContext ctx(node, def, inputs, out_ptrs);
  def.compute(ctx);
  for (size_t i = 0; i < outputs.size(); ++i) {
    MONO_CHECK(!node.outputs[i] || outputs[i].type() == node.outputs[i]->type,
               node.describe(), " computed output ", i, " of type ", outputs[i].type().str(),
               " but inferred ", node.outputs[i]->type.str());
  }
  return outputs;
}

Tensor shape_node_value(const Node& n) {
  MONO_CHECK(n.op == OpKind::kShape, "shape_node_value on ", n.describe());
  const Shape& shape = n.inputs[0]->type.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp = [&](int64_t v) {
    if (v < 0) v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  int64_t start = 0, end = rank;
  if (const AttrValue* a = n.attr("start")) start = clamp(std::get<int64_t>(*a));
  if (const AttrValue* a = n.attr("end")) end = clamp(std::get<int64_t>(*a));
  if (end < start) end = start;
  std::vector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  return Tensor::from_ints({end - start}, dims);
}

void infer_shapes(Graph& graph, const InferOptions& options) {
  // Values known at compile time: constants and small outputs of fully known nodes.
  std::unordered_map<const Value*, std::shared_ptr<const Tensor>> known;
  for (Value* c : graph.constants()) known[c] = c->constant;
  for (const auto& node : graph.nodes()) {
    check_node_signature(*node);
    std::vector<const Tensor*> in(node->inputs.size(), nullptr);
    bool all_known = true;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value* v = node->inputs[i];
      if (!v) continue;
      auto it = known.find(v);
      if (it != known.end()) in[i] = it->second.get();
      else all_known = false;
    }
    infer_node(*node, in);
    if (node->op == OpKind::kShape && node->outputs[0]) {
      known[node->outputs[0]] = std::make_shared<const Tensor>(shape_node_value(*node));
      continue;
    }
    if (!all_known) continue;
    bool small = true;
    for (Value* out : node->outputs)
      if (out && out->type.numel() > options.max_known_elements) small = false;
    if (!small) continue;
    std::vector<Tensor> outs = evaluate_node(*node, in);
    for (size_t i = 0; i < outs.size(); ++i)
      if (node->outputs[i]) known[node->outputs[i]] = std::make_shared<const Tensor>(std::move(outs[i]));
  }
}

void verify_graph(const Graph& graph, bool internal) {
  auto fail = [&](const std::string& msg) {
    if (internal) throw InternalError("IR verifier: " + msg);
    throw UserError(msg);
  };
  std::unordered_set<const Value*> defined;
  for (const Value* in : graph.inputs) {
    if (!defined.insert(in).second) fail(str_cat("graph input '", in->name, "' listed twice"));
    if (in->producer || in->is_constant()) fail(str_cat("graph input '", in->name, "' is also defined elsewhere"));
  }
  for (const auto& v : graph.values()) {
    if (!v->is_constant()) continue;
    if (v->constant->type() != v->type)
      fail(str_cat("constant '", v->name, "' holds ", v->constant->type().str(), " but is typed ", v->type.str()));
    defined.insert(v.get());
  }
  for (const auto& node : graph.nodes()) {
    try {
      check_node_signature(*node);
    } catch (const UserError& e) {
      fail(e.what());
    }
    std::vector<const Tensor*> known;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value* v = node->inputs[i];
      known.push_back(v && v->is_constant() ? v->constant.get() : nullptr);
      if (v && !defined.count(v))
        fail(str_cat(node->describe(), ": input '", v->name, "' is used before it is defined"));
    }
    for (const Value* out : node->outputs) {
      if (!out) continue;
      if (out->producer != node.get()) fail(str_cat(node->describe(), ": output '", out->name, "' has another producer"));
      if (!defined.insert(out).second) fail(str_cat("value '", out->name, "' is defined twice"));
    }
    // Re-infer on a copy and compare: a pass must leave types consistent.
    Node copy = *node;
    std::vector<Value> fresh(node->outputs.size());
    for (size_t i = 0; i < copy.outputs.size(); ++i)
      if (copy.outputs[i]) copy.outputs[i] = &fresh[i];
    try {
      infer_node(copy, known);
    } catch (const NotKnownError&) {
      continue;  // its shape came from values folded while loading; nothing to re-check
    } catch (const UserError& e) {
      fail(e.what());
    }
    for (size_t i = 0; i < copy.outputs.size(); ++i) {
      if (!copy.outputs[i]) continue;
      if (fresh[i].type != node->outputs[i]->type)
        fail(str_cat(node->describe(), ": output '", node->outputs[i]->name, "' is typed ",
                     node->outputs[i]->type.str(), " but its inputs give ", fresh[i].type.str()));
    }
  }
  for (const Value* out : graph.outputs)
    if (!defined.count(out)) fail(str_cat("graph output '", out->name, "' is never defined"));
}

}  // namespace mono
