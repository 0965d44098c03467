// Sigmoid: y = 1 / (1 + e^-x) (float types).
#include "compiler/ops/elementwise.h"

namespace mono {

static void compute_sigmoid(ComputeContext& ctx) {
  // For x < 0 the form e^x / (1 + e^x) keeps the relative precision of tiny results.
  unary_float(ctx, [](float x) {
    float e = std::exp(-std::fabs(x));
    float r = 1.0f / (1.0f + e);
    return x >= 0 ? r : e * r;
  });
}

const OpDef& op_def_Sigmoid() {
  static const OpDef def{"Sigmoid", 1, 1, 1, 1, {}, infer_unary_float, compute_sigmoid};
  return def;
}

}  // namespace mono
