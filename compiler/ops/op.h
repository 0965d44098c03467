// What every op provides: its attributes with ONNX defaults, a shape rule and a CPU
// reference implementation (the oracle of every test). One file per op, named after it,
// defines `const OpDef& op_def_<Name>()` (see compiler/ir/op_list.h).
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/support/error.h"

namespace mono {

struct AttrSpec {
  const char* name;
  AttrType type;
  AttrValue default_value;  // used when the node does not set it
  bool required = false;    // no default: the node must set it
  bool has_default = true;  // false: optional and absent unless set (e.g. Clip's min in opset 6)
};

inline AttrSpec attr(const char* name, int64_t def) { return {name, AttrType::kInt, def}; }
inline AttrSpec attr(const char* name, float def) { return {name, AttrType::kFloat, def}; }
inline AttrSpec attr(const char* name, const char* def) {
  return {name, AttrType::kString, std::string(def)};
}
inline AttrSpec attr_ints(const char* name) {
  return {name, AttrType::kInts, std::vector<int64_t>{}, false, false};
}
inline AttrSpec attr_floats(const char* name) {
  return {name, AttrType::kFloats, std::vector<float>{}, false, false};
}
inline AttrSpec attr_required(const char* name, AttrType type) {
  return {name, type, int64_t{0}, true, false};
}
inline AttrSpec attr_optional(const char* name, AttrType type) {
  return {name, type, int64_t{0}, false, false};
}

class InferContext;
class ComputeContext;

// A shape rule needed an input's value that is not known at compile time.
class NotKnownError : public UserError {
 public:
  using UserError::UserError;
};

struct OpDef {
  const char* name;
  int min_inputs;
  int max_inputs;  // -1: variadic
  int min_outputs;
  int max_outputs;
  std::vector<AttrSpec> attrs;
  // Sets every wanted output's type from the inputs' types, attributes and, where shapes
  // depend on them, the inputs' constant values. Rejects bad inputs with ctx.fail().
  void (*infer)(InferContext& ctx);
  // Computes the outputs; their types are already inferred and their tensors allocated.
  void (*compute)(ComputeContext& ctx);
};

// The definition of one op (from the registry built over MONO_OPS).
const OpDef& op_def(OpKind op);

// Attribute access with the op's defaults. Shared by InferContext and ComputeContext.
class AttrReader {
 public:
  AttrReader(const Node& node, const OpDef& def) : node_(node), def_(def) {}

  const Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  bool has_attr(const char* key) const { return node_.attr(key) != nullptr; }
  int64_t attr_int(const char* key) const;
  float attr_float(const char* key) const;
  std::string attr_string(const char* key) const;
  std::vector<int64_t> attr_ints(const char* key) const;  // empty when absent
  std::vector<float> attr_floats(const char* key) const;
  const Tensor& attr_tensor(const char* key) const;

  [[noreturn]] void fail(const std::string& msg) const;  // a UserError naming the node

 private:
  const AttrValue& lookup(const char* key, AttrType type) const;
  const Node& node_;
  const OpDef& def_;
};

// A node's attributes read through its op's definition (the ONNX defaults live there only).
inline AttrReader node_attrs(const Node& node) { return AttrReader(node, op_def(node.op)); }

class InferContext : public AttrReader {
 public:
  // `known[i]`: the value of input i when it is known at compile time (constant or folded).
  InferContext(const Node& node, const OpDef& def, std::vector<const Tensor*> known)
      : AttrReader(node, def), known_(std::move(known)) {}

  int num_inputs() const { return node().num_inputs(); }
  bool has_input(int i) const { return node().input(i) != nullptr; }
  const TensorType& input(int i) const;
  DType input_dtype(int i) const { return input(i).dtype; }
  const Shape& input_shape(int i) const { return input(i).shape; }
  // The compile-time value of input i, or null.
  const Tensor* known(int i) const { return i < static_cast<int>(known_.size()) ? known_[i] : nullptr; }
  // The compile-time value of input i; fails naming `what` if it is not known.
  const Tensor& require_known(int i, const char* what) const;

  int num_outputs() const { return static_cast<int>(node().outputs.size()); }
  void set_output(int i, TensorType type);
  void set_output(int i, DType dtype, Shape shape) { set_output(i, TensorType{dtype, std::move(shape)}); }

  // Checks: fail unless the input has one of the dtypes.
  void expect_dtype(int i, std::initializer_list<DType> allowed) const;
  void expect_float(int i) const { expect_dtype(i, {DType::kF32, DType::kF16}); }
  void expect_same_dtype(int i, int j) const;
  void expect_rank(int i, int64_t rank) const;
  // Normalises a possibly negative axis into [0, rank); fails if out of range.
  int64_t axis(int64_t axis, int64_t rank, const char* what = "axis") const;

 private:
  std::vector<const Tensor*> known_;
};

class ComputeContext : public AttrReader {
 public:
  ComputeContext(const Node& node, const OpDef& def, std::vector<const Tensor*> inputs,
                 std::vector<Tensor*> outputs)
      : AttrReader(node, def), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  const Tensor& input(int i) const;
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool has_output(int i) const { return i < num_outputs() && outputs_[i] != nullptr; }
  Tensor& output(int i) const;  // allocated with the inferred type

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
};

// Normalises a possibly negative axis; the shared rule for ops and passes.
bool normalize_axis(int64_t axis, int64_t rank, int64_t* out);

}  // namespace mono
