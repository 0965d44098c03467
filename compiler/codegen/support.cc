#include "compiler/codegen/support.h"

namespace mono {

bool is_epilogue_op(OpKind op) {
  switch (op) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow:
    case OpKind::kMax: case OpKind::kMin: case OpKind::kRelu: case OpKind::kClip: case OpKind::kGelu:
    case OpKind::kSigmoid: case OpKind::kTanh: case OpKind::kErf: case OpKind::kExp: case OpKind::kLog:
    case OpKind::kSqrt: case OpKind::kNeg: case OpKind::kAbs: case OpKind::kReciprocal:
      return true;
    default:
      return false;
  }
}

bool codegen_supports(const Node& n) {
  switch (n.op) {
    // Folded away by simplification when their inputs are constants; not compiled.
    case OpKind::kConstant: case OpKind::kConstantOfShape: case OpKind::kRange: case OpKind::kShape:
      return false;
    case OpKind::kCumSum:
      return false;
    case OpKind::kMaxPool:
      return n.outputs.size() < 2 || !n.outputs[1];
    case OpKind::kBatchNormalization:
      return n.outputs.size() == 1;
    case OpKind::kLayerNormalization:
      return n.outputs.size() == 1 || (!n.outputs[1] && (n.outputs.size() < 3 || !n.outputs[2]));
    default:
      return true;
  }
}

int64_t row_length(const Node& n) {
  const Shape& x = n.inputs[0]->type.shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = -1;
  if (const AttrValue* a = n.attr("axis")) axis = std::get<int64_t>(*a);
  else if (n.op == OpKind::kSoftmax && n.opset < 13) axis = 1;
  if (axis < 0) axis += rank;
  int64_t len = 1;
  for (int64_t d = axis; d < rank; ++d) len *= x[d];
  return len;
}

std::string constant_packing(const Node& n, int i) {
  if (i != 1) return "";
  if (n.op == OpKind::kMatMul && n.inputs[1]->type.rank() == 2) return "nk";
  if (n.op == OpKind::kGemm) {
    const AttrValue* t = n.attr("transB");
    return (t && std::get<int64_t>(*t) != 0) ? "" : "nk";
  }
  return "";
}

int gemm_smem_bytes(bool f16, int bm, int bn, int bk, int stages) {
  if (f16) return stages * (bm + bn) * (bk + 8) * 2 + 64;  // + the bulk loaders' mbarriers (gemm.cuh)
  return 2 * (bm + bn) * (bk + 4) * 4;
}

}  // namespace mono
