#include "compiler/ir/graph.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/support/error.h"

namespace mono {

void internal_error_at(const char* file, int line, const std::string& msg) {
  throw InternalError(str_cat("internal error at ", file, ":", line, ": ", msg));
}

const char* op_name(OpKind op) {
  switch (op) {
#define MONO_OP_NAME(name) \
  case OpKind::k##name:    \
    return #name;
    MONO_OPS(MONO_OP_NAME)
#undef MONO_OP_NAME
  }
  return "?";
}

bool op_from_name(const char* name, OpKind* out) {
  static const std::unordered_map<std::string, OpKind> table = {
#define MONO_OP_ENTRY(name) {#name, OpKind::k##name},
      MONO_OPS(MONO_OP_ENTRY)
#undef MONO_OP_ENTRY
  };
  auto it = table.find(name);
  if (it == table.end()) return false;
  *out = it->second;
  return true;
}

AttrType attr_type_of(const AttrValue& v) { return static_cast<AttrType>(v.index()); }

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kTensor: return "tensor";
  }
  return "?";
}

const AttrValue* Node::attr(const std::string& key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

std::string Node::describe() const {
  return str_cat("node '", name, "' (", op_name(op), ", opset ", opset, ")");
}

std::string Graph::unique_name(const std::string& base) {
  if (!used_names_.count(base)) {
    used_names_[base] = true;
    return base;
  }
  for (;;) {
    std::string candidate = str_cat(base, "_", ++name_counter_[base]);
    if (!used_names_.count(candidate)) {
      used_names_[candidate] = true;
      return candidate;
    }
  }
}

Value* Graph::add_value(const std::string& name, TensorType type) {
  auto v = std::make_unique<Value>();
  v->name = unique_name(name.empty() ? "v" : name);
  v->type = std::move(type);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_constant(const std::string& name, Tensor tensor) {
  Value* v = add_value(name, tensor.type());
  v->constant = std::make_shared<const Tensor>(std::move(tensor));
  return v;
}

static std::unique_ptr<Node> make_node(Graph* g, OpKind op, const std::string& name,
                                       std::vector<Value*> inputs,
                                       const std::vector<std::string>& output_names, int opset) {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->name = name;
  n->inputs = std::move(inputs);
  n->opset = opset;
  for (const std::string& out : output_names) {
    if (out.empty()) {
      n->outputs.push_back(nullptr);
    } else {
      Value* v = g->add_value(out, TensorType{});
      v->producer = n.get();
      n->outputs.push_back(v);
    }
  }
  return n;
}

Node* Graph::add_node(OpKind op, const std::string& name, std::vector<Value*> inputs,
                      const std::vector<std::string>& output_names, int opset) {
  nodes_.push_back(make_node(this, op, name, std::move(inputs), output_names, opset));
  return nodes_.back().get();
}

Node* Graph::insert_node_before(const Node* before, OpKind op, const std::string& name,
                                std::vector<Value*> inputs,
                                const std::vector<std::string>& output_names, int opset) {
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& n) { return n.get() == before; });
  MONO_CHECK(it != nodes_.end(), "insert_node_before: node not in graph");
  auto n = make_node(this, op, name, std::move(inputs), output_names, opset);
  Node* raw = n.get();
  nodes_.insert(it, std::move(n));
  return raw;
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->is_constant()) out.push_back(v.get());
  return out;
}

bool Graph::is_graph_output(const Value* v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

bool Graph::is_graph_input(const Value* v) const {
  return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  for (auto& n : nodes_)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
  bool was_output = false;
  for (Value*& out : outputs) {
    if (out == from) {
      out = to;
      was_output = true;
    }
  }
  if (was_output && to->producer && !to->is_constant() &&
      std::count(outputs.begin(), outputs.end(), to) == 1) {
    std::swap(to->name, from->name);  // the graph output keeps its name
  }
}

std::vector<Node*> Graph::users(const Value* v) const {
  std::vector<Node*> out;
  for (const auto& n : nodes_)
    for (Value* in : n->inputs)
      if (in == v) out.push_back(n.get());
  return out;
}

void Graph::erase_node(Node* n) {
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& p) { return p.get() == n; });
  MONO_CHECK(it != nodes_.end(), "erase_node: node not in graph");
  for (Value* out : n->outputs)
    if (out) out->producer = nullptr;
  nodes_.erase(it);
}

int Graph::remove_dead_code() {
  std::unordered_set<const Value*> live(outputs.begin(), outputs.end());
  std::vector<bool> keep(nodes_.size(), false);
  for (size_t i = nodes_.size(); i-- > 0;) {
    const Node& n = *nodes_[i];
    bool used = false;
    for (Value* out : n.outputs)
      if (out && live.count(out)) used = true;
    if (!used) continue;
    keep[i] = true;
    for (Value* in : n.inputs)
      if (in) live.insert(in);
  }
  int removed = 0;
  std::vector<std::unique_ptr<Node>> kept;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(nodes_[i]));
    } else {
      ++removed;
    }
  }
  nodes_ = std::move(kept);
  // Drop values nothing refers to any more (graph inputs always stay).
  std::unordered_set<const Value*> referenced(inputs.begin(), inputs.end());
  for (const auto& n : nodes_) {
    for (Value* in : n->inputs) referenced.insert(in);
    for (Value* out : n->outputs) referenced.insert(out);
  }
  for (Value* out : outputs) referenced.insert(out);
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](const std::unique_ptr<Value>& v) {
                                 if (referenced.count(v.get())) return false;
                                 used_names_.erase(v->name);
                                 return true;
                               }),
                values_.end());
  return removed;
}

void Graph::sort_topologically() {
  // Kahn's algorithm, stable: among ready nodes the earliest in the current order goes first.
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::set<size_t> producers;
    for (Value* in : nodes_[i]->inputs) {
      if (!in || !in->producer) continue;
      auto it = index.find(in->producer);
      MONO_CHECK(it != index.end(), "input produced by a node outside the graph");
      producers.insert(it->second);
    }
    pending[i] = static_cast<int>(producers.size());
    for (size_t p : producers) consumers[p].push_back(i);
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (pending[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(c);
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (pending[i] > 0) user_error("the graph has a cycle through ", nodes_[i]->describe());
  }
  std::vector<std::unique_ptr<Node>> sorted;
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
}

}  // namespace mono
