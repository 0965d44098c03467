// Stores every float tensor of a graph in another float type (fp16 for the float16 CPU
// reference, which computes each op in float and rounds its result once, as fp16 storage
// on the GPU does). Inputs and outputs change type too; callers convert data at the edges.
#include "compiler/ops/infer.h"
#include "compiler/ops/op.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/passes.h"

namespace mono {

void convert_float_precision(Graph& g, DType to) {
  MONO_CHECK(is_float(to), "convert_float_precision to ", dtype_name(to));
  for (const auto& v : g.values()) {
    if (v->is_constant() && is_float(v->type.dtype) && v->type.dtype != to) {
      v->constant = std::make_shared<const Tensor>(v->constant->cast(to));
      v->type.dtype = to;
    } else if (!v->producer && is_float(v->type.dtype)) {
      v->type.dtype = to;  // graph input
    }
  }
  const int onnx_to = dtype_to_onnx(to);
  for (const auto& n : g.nodes()) {
    // Casts to a float type now cast to the new one.
    if (n->op == OpKind::kCast) {
      DType target;
      if (auto* a = n->attr("to"); a && dtype_from_onnx(static_cast<int>(std::get<int64_t>(*a)), &target) && is_float(target))
        n->attrs["to"] = static_cast<int64_t>(onnx_to);
    }
    std::vector<const Tensor*> known;
    for (const Value* in : n->inputs) known.push_back(in && in->is_constant() ? in->constant.get() : nullptr);
    try {
      infer_node(*n, known);
    } catch (const NotKnownError&) {
      // Shape from values folded at load time: the shape stays; only the dtype changes.
      for (Value* out : n->outputs)
        if (out && is_float(out->type.dtype)) out->type.dtype = to;
    }
  }
}

}  // namespace mono
