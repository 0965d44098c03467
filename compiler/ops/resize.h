// Resize's geometry, shared by its shape rule, reference and decomposition: per axis, the
// input indices each output index reads and their weights. Resizing is separable (ONNX's
// reference interpolates one axis at a time), so a table per axis describes it whole.
#pragma once

#include <vector>

#include "compiler/ops/op.h"

namespace mono {

struct ResizeAxis {
  int64_t in = 0, out = 0;
  int taps = 1;                 // 1 (nearest), 2 (linear) or 4 (cubic) input indices per output index
  std::vector<int64_t> index;   // out x taps, each in [0, in)
  std::vector<double> weight;   // out x taps
  std::vector<bool> outside;    // out: tf_crop_and_resize's coordinate falls outside: the extrapolation value
  // Output index o reads input index o with weight 1 and nothing else.
  bool identity() const;
};

struct ResizeSpec {
  std::vector<ResizeAxis> axes;  // one per input axis
  double extrapolation = 0;
  Shape out_shape;
};

// Checks the attributes (mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
// exclude_outside, extrapolation_value; from opset 18 antialias, axes and
// keep_aspect_ratio_policy) and the compile-time roi / scales / sizes inputs (null when absent)
// against the input shape, and builds the per-axis tables.
ResizeSpec resize_spec(const AttrReader& ctx, const Shape& in, const Tensor* roi, const Tensor* scales,
                       const Tensor* sizes);

}  // namespace mono
