#include "compiler/codegen/support.h"

#include "compiler/ops/layer_normalization.h"
#include "compiler/ops/op.h"
#include "compiler/ops/softmax.h"

namespace mono {

bool is_epilogue_op(OpKind op) {
  switch (op) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow:
    case OpKind::kMax: case OpKind::kMin: case OpKind::kRelu: case OpKind::kClip: case OpKind::kGelu:
    case OpKind::kSigmoid: case OpKind::kTanh: case OpKind::kErf: case OpKind::kExp: case OpKind::kLog:
    case OpKind::kSqrt: case OpKind::kNeg: case OpKind::kAbs: case OpKind::kReciprocal:
    case OpKind::kSum: case OpKind::kMean: case OpKind::kMod: case OpKind::kPRelu: case OpKind::kSign:
    case OpKind::kSin: case OpKind::kCos: case OpKind::kTan: case OpKind::kAsin: case OpKind::kAcos:
    case OpKind::kAtan: case OpKind::kSinh: case OpKind::kCosh: case OpKind::kAsinh: case OpKind::kAcosh:
    case OpKind::kAtanh: case OpKind::kFloor: case OpKind::kCeil: case OpKind::kRound: case OpKind::kSoftplus:
    case OpKind::kSoftsign: case OpKind::kMish: case OpKind::kHardSwish: case OpKind::kHardSigmoid:
    case OpKind::kLeakyRelu: case OpKind::kElu: case OpKind::kSelu: case OpKind::kCelu:
    case OpKind::kThresholdedRelu: case OpKind::kShrink:
      return true;
    default:
      return false;
  }
}

bool codegen_supports(const Node& n) {
  switch (n.op) {
    // Folded away by simplification when their inputs are constants; not compiled.
    case OpKind::kConstant: case OpKind::kConstantOfShape: case OpKind::kRange: case OpKind::kShape: case OpKind::kSize:
      return false;
    case OpKind::kBatchNormalization:
      return n.outputs.size() == 1;
    default:
      return true;
  }
}

const Value* running_value(const Group& g, const Node* e) {
  const Value* prev = g.anchor->outputs[0];
  for (const Node* x : g.epilogue) {
    if (x == e) return prev;
    if (x->op != OpKind::kIsNaN) prev = x->outputs[0];
  }
  return prev;
}

int64_t row_length(const Node& n) {
  return n.op == OpKind::kSoftmax ? softmax_layout(n).n : layer_norm_row_length(n);
}

Packing constant_packing(const Node& n, int i) {
  Packing p;
  if (i != 1) return p;
  if (n.op == OpKind::kMatMul) p.transposed = n.inputs[1]->type.rank() == 2;
  if (n.op == OpKind::kGemm) p.transposed = node_attrs(n).attr_int("transB") == 0;
  return p;
}

int gemm_smem_bytes(bool f16, int bm, int bn, int bk, int stages) {
  if (f16) return stages * (bm + bn) * (bk + 8) * 2 + 64;  // + the bulk loaders' mbarriers (gemm_f16.cuh)
  return 2 * (bm + bn) * (bk + 4) * 4;
}

}  // namespace mono
