#include "tests/unit/op_test_util.h"

#include <cmath>

#include "compiler/ops/infer.h"
#include "compiler/support/error.h"

namespace mono::testing {

static Node* build(Graph& g, OpKind op, const std::vector<std::optional<Tensor>>& inputs,
                   const std::map<std::string, AttrValue>& attrs, int num_outputs, int opset) {
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(inputs[i] ? g.add_constant(str_cat("in", i), *inputs[i]) : nullptr);
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i) outs.push_back(str_cat("out", i));
  Node* n = g.add_node(op, "test_node", ins, outs, opset);
  n->attrs = attrs;
  check_node_signature(*n);
  std::vector<const Tensor*> known;
  for (Value* v : ins) known.push_back(v ? v->constant.get() : nullptr);
  infer_node(*n, known);
  return n;
}

std::vector<TensorType> infer_op(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
                                 const std::map<std::string, AttrValue>& attrs, int num_outputs,
                                 int opset) {
  Graph g;
  Node* n = build(g, op, inputs, attrs, num_outputs, opset);
  std::vector<TensorType> types;
  for (Value* v : n->outputs) types.push_back(v->type);
  return types;
}

std::vector<Tensor> run_op(OpKind op, const std::vector<std::optional<Tensor>>& inputs,
                           const std::map<std::string, AttrValue>& attrs, int num_outputs,
                           int opset) {
  Graph g;
  Node* n = build(g, op, inputs, attrs, num_outputs, opset);
  std::vector<const Tensor*> in;
  for (Value* v : n->inputs) in.push_back(v ? v->constant.get() : nullptr);
  return evaluate_node(*n, in);
}

::testing::AssertionResult tensors_near(const Tensor& got, const Tensor& want, double tol) {
  if (got.type() != want.type())
    return ::testing::AssertionFailure() << "type " << got.type().str() << " != " << want.type().str();
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.as_double(i), b = want.as_double(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;  // equal infinities (their difference is NaN)
    if (!(std::fabs(a - b) <= tol * (1 + std::fabs(b))))
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " != " << b;
  }
  return ::testing::AssertionSuccess();
}

std::vector<float> rand_floats(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

Tensor rand_tensor(const Shape& shape, uint32_t seed, DType dt) {
  return Tensor::from_floats(shape, rand_floats(shape_numel(shape), seed), dt);
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

}  // namespace mono::testing
