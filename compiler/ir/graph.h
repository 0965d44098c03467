// The IR: a graph of nodes over typed static values, kept in topological order.
// A Value is either a graph input, a constant (an initializer: it carries its tensor) or the
// output of exactly one node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "compiler/ir/op_list.h"
#include "compiler/ir/tensor.h"

namespace mono {

struct Node;

struct Value {
  std::string name;
  TensorType type;
  Node* producer = nullptr;               // null for inputs and constants
  std::shared_ptr<const Tensor> constant;  // set for constants

  bool is_constant() const { return constant != nullptr; }
};

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kTensor };

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::shared_ptr<const Tensor>>;

AttrType attr_type_of(const AttrValue& v);
const char* attr_type_name(AttrType t);

struct Node {
  OpKind op;
  std::string name;             // the ONNX node name, kept for messages and comments
  std::vector<Value*> inputs;   // null where an optional input is omitted
  std::vector<Value*> outputs;  // null where an optional output is not wanted
  std::map<std::string, AttrValue> attrs;
  int opset = 0;  // the ai.onnx opset version the node's semantics follow

  int num_inputs() const { return static_cast<int>(inputs.size()); }
  Value* input(int i) const { return i < num_inputs() ? inputs[i] : nullptr; }
  const AttrValue* attr(const std::string& key) const;
  std::string describe() const;  // "node 'name' (Op, opset N)"
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  int opset = 0;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;

  Value* add_value(const std::string& name, TensorType type);
  Value* add_constant(const std::string& name, Tensor tensor);
  // Appends a node; its outputs are new values with the given names (empty: not wanted).
  Node* add_node(OpKind op, const std::string& name, std::vector<Value*> inputs,
                 const std::vector<std::string>& output_names, int opset);
  // Inserts a node right before `before` (which must be in the graph).
  Node* insert_node_before(const Node* before, OpKind op, const std::string& name,
                           std::vector<Value*> inputs,
                           const std::vector<std::string>& output_names, int opset);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t num_nodes() const { return nodes_.size(); }
  std::vector<Value*> constants() const;  // values with a tensor, in creation order
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }

  // Every use of `from` (node inputs and graph outputs) now reads `to`. If `from` is a graph
  // output and `to` is a plain intermediate, `to` takes over the output's name.
  void replace_all_uses(Value* from, Value* to);
  // Nodes reading `v` (a node appears once per input slot reading it).
  std::vector<Node*> users(const Value* v) const;
  bool is_graph_output(const Value* v) const;
  bool is_graph_input(const Value* v) const;

  // Removes nodes whose outputs nobody uses, then values nothing refers to. Returns the
  // number of nodes removed.
  int remove_dead_code();
  // Removes one node (its outputs must be unused).
  void erase_node(Node* n);
  // Re-establishes topological order after a pass inserted nodes out of order; throws a
  // UserError naming a node on the cycle if there is one.
  void sort_topologically();

  std::string unique_name(const std::string& base);

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, int> name_counter_;
  std::map<std::string, bool> used_names_;
};

}  // namespace mono
