#include "compiler/tuning/fragment.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <set>

#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/reference/inputs.h"
#include "compiler/support/error.h"
#include "compiler/tuning/signature.h"

namespace mono::tuning {

using nlohmann::json;

namespace {

// The fields of a payload; load_fragment refuses any other.
const char* const kFields[] = {"ir",      "precision",     "ranges",     "keep_fp32",     "nonnegative",
                               "sms",     "threads",       "blocks_per_sm", "smem_limit", "inline_groups",
                               "arena_inputs"};

// `nodes` and the view nodes they read through (transitively), in graph order. The plan's
// alias map says which values are views: exactly what the planner treats as one.
std::vector<const Node*> with_views(const Graph& graph, const KernelPlan& plan, const std::vector<const Node*>& nodes) {
  std::set<const Node*> members(nodes.begin(), nodes.end());
  std::vector<const Node*> work(nodes.begin(), nodes.end());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Value* v : n->inputs) {
      if (!v || !v->producer || !plan.alias.count(v)) continue;
      if (members.insert(v->producer).second) work.push_back(v->producer);
    }
  }
  std::vector<const Node*> ordered;
  for (const auto& n : graph.nodes())
    if (members.count(n.get())) ordered.push_back(n.get());
  MONO_CHECK(ordered.size() == members.size(), "make_fragment was given a node that is not in the graph");
  return ordered;
}

// Whether the planner would store float value `v` in fp16 by its range alone (the test of
// its dtype assignment).
bool range_fits_fp16(const PlanOptions& options, const Value* v) {
  auto r = options.ranges.find(v);
  return r == options.ranges.end() || r->second == 0.0f ||
         (r->second >= kMinFp16Range && r->second <= kMaxFp16Range);
}

// ---- reading a payload

const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) user_error("fragment: missing \"", key, "\"");
  return *it;
}

int int_field(const json& j, const char* key, int min, int max) {
  const json& v = field(j, key);
  if (!v.is_number_integer()) user_error("fragment: \"", key, "\" must be an integer, got ", v.dump());
  const int64_t x = v.get<int64_t>();
  if (x < min || x > max) user_error("fragment: \"", key, "\" is ", x, ", not in ", min, "..", max);
  return static_cast<int>(x);
}

// The fragment's float value named `name` (for "ranges" and "keep_fp32").
const Value* float_value(const std::map<std::string, const Value*>& by_name, const std::string& key,
                         const std::string& name) {
  auto it = by_name.find(name);
  if (it == by_name.end()) user_error("fragment: \"", key, "\" names %", name, ", which is not a value of the fragment");
  if (!is_float(it->second->type.dtype))
    user_error("fragment: \"", key, "\" names %", name, ", which is not a float value (", it->second->type.str(), ")");
  return it->second;
}

// Calls take(name) for each value name of the optional array field `key`.
template <class Take>
void each_name(const json& j, const char* key, const Take& take) {
  if (!j.contains(key)) return;
  const json& names = j.at(key);
  if (!names.is_array()) user_error("fragment: \"", key, "\" must be an array, got ", names.type_name());
  for (const json& name : names) {
    if (!name.is_string()) user_error("fragment: \"", key, "\" must hold value names, got ", name.type_name());
    take(name.get<std::string>());
  }
}

}  // namespace

json make_fragment(const Graph& graph, const KernelPlan& plan, const std::vector<const Node*>& nodes,
                   const PlanOptions& options) {
  const std::vector<const Node*> members = with_views(graph, plan, nodes);
  const std::set<const Node*> member_set(members.begin(), members.end());
  auto produced_inside = [&](const Value* v) { return v->producer && member_set.count(v->producer); };

  // Values read from outside: graph inputs first (in the model's order), then the others in
  // order of first use. Constants stay constants.
  std::vector<const Value*> used;
  std::set<const Value*> seen;
  for (const Node* n : members)
    for (const Value* v : n->inputs)
      if (v && !produced_inside(v) && seen.insert(v).second) used.push_back(v);
  std::vector<const Value*> outside;
  for (const Value* v : graph.inputs)
    if (seen.count(v) && std::find(outside.begin(), outside.end(), v) == outside.end()) outside.push_back(v);
  for (const Value* v : used)
    if (!graph.is_graph_input(v)) outside.push_back(v);

  // The sub-graph, over the same names.
  Graph sub;
  sub.name = graph.name.empty() ? "fragment" : graph.name;
  sub.opset = graph.opset;
  std::map<const Value*, Value*> copy;  // original value -> the sub-graph's
  std::vector<const Value*> originals;  // every value of the sub-graph, original side
  for (const Value* v : outside) {
    if (v->is_constant()) {
      copy[v] = sub.add_constant(v->name, *v->constant);
    } else {
      copy[v] = sub.add_value(v->name, v->type);
      sub.inputs.push_back(copy[v]);
    }
    originals.push_back(v);
  }
  for (const Node* n : members) {
    std::vector<Value*> inputs;
    for (const Value* v : n->inputs) inputs.push_back(v ? copy.at(v) : nullptr);
    std::vector<std::string> output_names;
    for (const Value* v : n->outputs) output_names.push_back(v ? v->name : "");
    Node* m = sub.add_node(n->op, n->name, inputs, output_names, n->opset);
    m->attrs = n->attrs;
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      if (!n->outputs[i]) continue;
      m->outputs[i]->type = n->outputs[i]->type;
      copy[n->outputs[i]] = m->outputs[i];
      originals.push_back(n->outputs[i]);
    }
  }
  for (const auto& [from, to] : copy)
    MONO_CHECK(from->name == to->name, "fragment value %", to->name, " was renamed from %", from->name);

  // Outputs: values computed here (not views of values from outside) that the model's
  // outputs or nodes outside read; model outputs first, in the model's order.
  std::set<const Value*> read_outside;
  for (const auto& n : graph.nodes())
    if (!member_set.count(n.get()))
      for (const Value* v : n->inputs)
        if (v) read_outside.insert(v);
  std::vector<const Value*> outputs;
  auto add_output = [&](const Value* v) {
    if (!produced_inside(v) || !produced_inside(plan.root(v))) return;
    if (std::find(outputs.begin(), outputs.end(), v) == outputs.end()) outputs.push_back(v);
  };
  for (const Value* v : graph.outputs) add_output(v);
  for (const Node* n : members)
    for (const Value* v : n->outputs)
      if (v && read_outside.count(v)) add_output(v);
  for (const Value* v : outputs) sub.outputs.push_back(copy.at(v));

  PrintOptions print;
  print.elide_floats_only = true;
  // A causal mask the model's plan applies by index: in full, so that the fragment's plan finds it.
  for (const Group& g : plan.groups)
    if (g.causal_mask)
      for (const Value* in : g.causal_mask->inputs)
        for (const Value* v : {in, in ? plan.root(in) : nullptr})
          if (v && v->is_constant() && copy.count(v)) print.in_full.insert(copy.at(v));
  json ranges = json::object();
  json keep_fp32 = json::array();
  for (const Value* v : originals) {
    if (!is_float(v->type.dtype)) continue;
    if (auto r = options.ranges.find(v); r != options.ranges.end())
      ranges[v->name] = std::isfinite(r->second) ? r->second : FLT_MAX;  // JSON has no inf: the same decision
    // fp16: stored in fp32 although its range fits fp16 (an operand of an fp32 GEMM, maybe
    // outside the fragment): the fragment's planner must do the same.
    auto d = plan.device_dtype.find(v);
    if (options.settings.precision == Precision::kF16 && v->type.dtype == DType::kF32 && d != plan.device_dtype.end() &&
        d->second == DType::kF32 && range_fits_fp16(options, v))
      keep_fp32.push_back(v->name);
  }
  json nonnegative = json::array();  // inputs of the fragment (its non-constant outside values) never negative
  json arena_inputs = json::array();  // inputs that are activations in the arena in the model
  for (const Value* v : outside) {
    if (v->is_constant()) continue;
    if (options.nonnegative.count(v)) nonnegative.push_back(v->name);
    auto pl = plan.placement.find(plan.root(v));
    if (pl != plan.placement.end() && pl->second.space == Placement::kArena) arena_inputs.push_back(v->name);
  }
  return json{{"ir", graph_to_string(sub, print)},
              {"precision", options.settings.precision == Precision::kF16 ? "fp16" : "fp32"},
              {"ranges", ranges},
              {"keep_fp32", keep_fp32},
              {"nonnegative", nonnegative},
              {"arena_inputs", arena_inputs},
              {"sms", options.settings.sms},
              {"threads", options.settings.threads},
              {"blocks_per_sm", options.settings.blocks_per_sm},
              {"smem_limit", options.settings.smem_limit},
              // As the model's kernel has them (a lone group would be inlined by default).
              {"inline_groups", plan.inline_groups ? 1 : 0}};
}

json make_fragment(const Graph& graph, const KernelPlan& plan, const Group& group, const PlanOptions& options) {
  std::vector<const Node*> nodes;
  auto add = [&](const Group& g) {
    nodes.push_back(g.anchor);
    nodes.insert(nodes.end(), g.epilogue.begin(), g.epilogue.end());
  };
  add(group);
  if (group.squeeze >= 0) add(plan.groups[group.squeeze]);  // computed inside every item: part of its code and time
  for (int id : at_read_groups(plan, group)) add(plan.groups[id]);  // computed where read: the same
  return make_fragment(graph, plan, nodes, options);
}

json make_fragment(const Graph& graph, const KernelPlan& plan, const PlanOptions& options) {
  std::vector<const Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  return make_fragment(graph, plan, nodes, options);
}

LoadedFragment load_fragment(const json& j, uint64_t seed) {
  if (!j.is_object()) user_error("fragment: expected a JSON object, got ", j.type_name());
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(std::begin(kFields), std::end(kFields), it.key()) == std::end(kFields))
      user_error("fragment: unknown field \"", it.key(), "\"");

  LoadedFragment f;
  const json& ir = field(j, "ir");
  if (!ir.is_string()) user_error("fragment: \"ir\" must be a string, got ", ir.type_name());
  try {
    ParseOptions parse;
    parse.fill_elided = true;
    parse.seed = seed;
    f.graph = parse_graph(ir.get<std::string>(), parse);
    infer_shapes(*f.graph);
    verify_graph(*f.graph, /*internal=*/false);
  } catch (const UserError& e) {
    user_error("fragment: \"ir\": ", e.what());
  }

  PlanOptions& o = f.options;
  const json& precision = field(j, "precision");
  if (precision == "fp32") o.settings.precision = Precision::kF32;
  else if (precision == "fp16") o.settings.precision = Precision::kF16;
  else user_error("fragment: \"precision\" must be \"fp32\" or \"fp16\", got ", precision.dump());

  std::map<std::string, const Value*> by_name;
  for (const auto& v : f.graph->values()) by_name[v->name] = v.get();
  const json& ranges = field(j, "ranges");
  if (!ranges.is_object()) user_error("fragment: \"ranges\" must be an object, got ", ranges.type_name());
  for (auto it = ranges.begin(); it != ranges.end(); ++it) {
    if (!it->is_number() || it->get<double>() < 0)
      user_error("fragment: \"ranges\": %", it.key(), " must be a non-negative number, got ", it->dump());
    o.ranges[float_value(by_name, "ranges", it.key())] = it->get<float>();
  }
  each_name(j, "keep_fp32", [&](const std::string& name) { o.keep_fp32.insert(float_value(by_name, "keep_fp32", name)); });
  each_name(j, "nonnegative",
            [&](const std::string& name) { o.nonnegative.insert(float_value(by_name, "nonnegative", name)); });
  each_name(j, "arena_inputs", [&](const std::string& name) {
    auto it = by_name.find(name);
    if (it == by_name.end() || !f.graph->is_graph_input(it->second))
      user_error("fragment: \"arena_inputs\": %", name, " is not an input of the fragment");
    o.arena_inputs.insert(it->second);
  });

  // The planner checks the context itself (threads a multiple of 32, blocks that fit an SM).
  o.settings.sms = int_field(j, "sms", 1, 1024);
  o.settings.threads = int_field(j, "threads", 1, 1024);
  o.settings.blocks_per_sm = int_field(j, "blocks_per_sm", 1, 32);
  o.settings.smem_limit = int_field(j, "smem_limit", 0, KernelContext::kMaxSmemPerSm);
  if (j.contains("inline_groups")) o.settings.inline_groups = int_field(j, "inline_groups", 0, 1);
  enable_signatures(&o);
  return f;
}

std::vector<Tensor> fragment_inputs(const LoadedFragment& f) {
  std::vector<Tensor> inputs = synthetic_inputs(*f.graph);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!f.options.nonnegative.count(f.graph->inputs[i])) continue;
    std::vector<float> v = inputs[i].to_float_vector();
    for (float& x : v) x = std::fabs(x);
    inputs[i] = Tensor::from_floats(inputs[i].shape(), v, inputs[i].dtype());
  }
  return inputs;
}

const Group* find_group(const KernelPlan& plan, const std::string& signature) {
  for (const Group& g : plan.groups)
    if (g.signature == signature) return &g;
  return nullptr;
}

}  // namespace mono::tuning
