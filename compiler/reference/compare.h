// Comparing computed outputs with expected ones (test data, or the CPU reference): the
// largest absolute and relative error, NaN mismatches, and the tolerance check.
#pragma once

#include <cstdint>

#include "compiler/ir/tensor.h"

namespace mono {

struct Comparison {
  bool same_type = false;
  bool exact = false;      // integer or bool: must match exactly
  double max_abs = 0;      // max |got - want|
  double max_ref = 0;      // max |want|
  double rel = 0;          // max_abs / max_ref (max_abs when max_ref is 0)
  int64_t nan_mismatch = 0;  // elements where exactly one side is NaN
  int64_t worst_index = -1;
  // Within tolerance: same type, no NaN mismatch, rel <= tol (exact for integer/bool types).
  bool ok(double tol) const;
};

Comparison compare_tensors(const Tensor& got, const Tensor& want);

}  // namespace mono
