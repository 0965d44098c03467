#include "compiler/reference/compare.h"

#include <algorithm>
#include <cmath>

namespace mono {

Comparison compare_tensors(const Tensor& got, const Tensor& want) {
  Comparison c;
  c.same_type = got.type() == want.type();
  if (!c.same_type) return c;
  c.exact = !is_float(got.dtype());
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.as_double(i), b = want.as_double(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) {
        ++c.nan_mismatch;
        if (c.worst_index < 0) c.worst_index = i;
      }
      continue;
    }
    double d = (std::isinf(a) || std::isinf(b)) ? (a == b ? 0.0 : INFINITY) : std::fabs(a - b);
    if (d > c.max_abs) {
      c.max_abs = d;
      c.worst_index = i;
    }
    if (!std::isinf(b)) c.max_ref = std::max(c.max_ref, std::fabs(b));
  }
  c.rel = c.max_ref > 0 ? c.max_abs / c.max_ref : c.max_abs;
  return c;
}

bool Comparison::ok(double tol) const {
  if (!same_type || nan_mismatch > 0) return false;
  return exact ? max_abs == 0 : rel <= tol;
}

}  // namespace mono
