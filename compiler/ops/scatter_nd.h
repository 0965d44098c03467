// ScatterND's geometry, shared by its shape rule, reference and lowering.
#pragma once

#include "compiler/ops/op.h"

namespace mono {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

struct ScatterNdShape {
  int64_t q = 1;      // axes of data each index row names
  int64_t rows = 1;   // index rows (updates' leading elements)
  int64_t slice = 1;  // elements each row writes: prod(data.shape[q:])
  ScatterReduction reduction = ScatterReduction::kNone;
};

// Checks the shapes (updates = indices.shape[:-1] + data.shape[q:]) and the reduction.
ScatterNdShape scatter_nd_shape(const AttrReader& ctx, const Shape& data, const Shape& indices, const Shape& updates);

}  // namespace mono
