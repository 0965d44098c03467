#include "compiler/codegen/emit/index_math.h"

#include <cstdint>

#include "compiler/support/error.h"

namespace mono::emit {

std::string decompose(const std::string& flat, const Shape& shape, const std::string& prefix) {
  const std::string rem = prefix + "_rest";
  // 32-bit division by a constant is a multiply-high and a shift; 64-bit is several times that,
  // per element of every epilogue and pointwise group. flat < numel(shape) always.
  const bool narrow = shape_numel(shape) <= INT32_MAX;
  const std::string t = narrow ? "int" : "long long", lit = narrow ? "" : "LL";
  std::string s = narrow ? str_cat("    int ", rem, " = (int)(", flat, ");\n") : str_cat("    long long ", rem, " = ", flat, ";\n");
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
    s += str_cat("    const ", t, " ", prefix, d, " = ", rem, " % ", shape[d], lit, "; ", rem, " /= ", shape[d], lit, ";\n");
  s += str_cat("    (void)", rem, ";\n");
  return s;
}

std::vector<std::string> index_vars(const std::string& prefix, int64_t rank) {
  std::vector<std::string> v;
  for (int64_t d = 0; d < rank; ++d) v.push_back(str_cat(prefix, d));
  return v;
}

std::string batch_matrix_offset(const Shape& s, const std::vector<std::string>& batch_idx, int64_t mat) {
  if (s.size() <= 2) return "0";
  const std::string off = broadcast_offset(Shape(s.begin(), s.end() - 2), batch_idx);
  return off == "0" ? off : str_cat("(", off, ") * ", mat, "LL");
}

std::string broadcast_offset(const Shape& in, const std::vector<std::string>& out_idx) {
  const int64_t r = static_cast<int64_t>(in.size()), out_rank = static_cast<int64_t>(out_idx.size());
  MONO_CHECK(r <= out_rank, "broadcast of rank ", r, " against ", out_rank, " index expressions");
  std::string expr;
  int64_t stride = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    if (in[d] != 1) {
      std::string term = out_idx[d + (out_rank - r)];
      if (stride != 1) term += str_cat(" * ", stride, "LL");
      expr = expr.empty() ? term : term + " + " + expr;
    }
    stride *= in[d];
  }
  return expr.empty() ? "0" : expr;
}

std::string linear(const std::vector<std::string>& idx, const Shape& shape) {
  std::string e;
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1) {
      std::string t = stride == 1 ? idx[d] : str_cat("(", idx[d], ") * ", stride, "LL");
      e = e.empty() ? t : t + " + " + e;
    }
    stride *= shape[d];
  }
  return e.empty() ? "0" : e;
}

}  // namespace mono::emit
