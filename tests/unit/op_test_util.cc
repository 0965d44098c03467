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

}  // namespace mono::testing
