// Pad's geometry, shared by its shape rule, reference and lowering.
#pragma once

#include <vector>

#include "compiler/ops/op.h"

namespace mono {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadSpec {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin, end;  // per axis; negative values crop
  double value = 0;                 // constant mode's fill
  Shape out_shape;
};

// The pads (attribute before opset 11; input 1, with input 3 naming the axes from opset 18),
// the fill value (attribute, or the optional scalar input 2) and the mode, checked against
// the input shape. `pads`, `value` and `axes` are the inputs' compile-time values or null.
PadSpec pad_spec(const AttrReader& ctx, const Shape& in, const Tensor* pads, const Tensor* value, const Tensor* axes);

// The input index an output index d reads along one axis of extent n, or -1 (the fill).
int64_t pad_source(PadMode mode, int64_t o, int64_t begin, int64_t n);

}  // namespace mono
