// Shared helpers of the shape and data-movement ops (Reshape, Slice, Split, Gather, ...):
// reading integer inputs that shapes depend on, axis lists, and raw byte access.
#pragma once

#include <cstring>
#include <vector>

#include "compiler/ops/op.h"

namespace mono {

// Normalises a possibly negative axis into [0, rank); fails naming `what` if out of range.
inline int64_t checked_axis(const AttrReader& ctx, int64_t axis, int64_t rank, const char* what) {
  int64_t out;
  if (!normalize_axis(axis, rank, &out))
    ctx.fail(str_cat(what, " ", axis, " is out of range for rank ", rank));
  return out;
}

// Normalises every axis of a list against `rank`; fails on out-of-range or repeated axes.
inline std::vector<int64_t> checked_axes(const AttrReader& ctx, const std::vector<int64_t>& axes,
                                         int64_t rank, const char* what = "axis") {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t n = checked_axis(ctx, a, rank, what);
    if (seen[n]) ctx.fail(str_cat(what, " ", a, " is repeated"));
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

// The values of an integer tensor; fails unless it is i64 or i32.
inline std::vector<int64_t> int_values(const AttrReader& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32)
    ctx.fail(str_cat(what, " must be an i64 or i32 tensor, got ", t.type().str()));
  return t.to_int_vector();
}

// The compile-time values of integer input i (throws NotKnownError if not known).
inline std::vector<int64_t> known_ints(const InferContext& ctx, int i, const char* what) {
  return int_values(ctx, ctx.require_known(i, what), what);
}

// The single value of a scalar (or one-element) integer tensor.
inline int64_t int_scalar(const AttrReader& ctx, const Tensor& t, const char* what) {
  if (t.rank() > 1 || t.numel() != 1)
    ctx.fail(str_cat(what, " must be a scalar, got ", t.type().str()));
  return int_values(ctx, t, what)[0];
}

// Product of dims [begin, end) of a shape (1 when empty). Shapes are already validated.
inline int64_t dims_product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) n *= s[i];
  return n;
}

// True if reshaping `from` to `to` only inserts or removes axes of size 1 (the other axes keep
// their lengths and order).
inline bool unit_reshape(const Shape& from, const Shape& to) {
  size_t j = 0;
  for (int64_t d : from) {
    if (d == 1) continue;
    while (j < to.size() && to[j] == 1) ++j;
    if (j == to.size() || to[j++] != d) return false;
  }
  while (j < to.size() && to[j] == 1) ++j;
  return j == to.size();
}

// Per-axis values of `from` (a stride, an axis id) carried through a reshape to `to` that only
// inserts or removes axes of size 1 (unit_reshape must hold): the axes longer than 1 keep theirs,
// in order; the axes of size 1 of `to` get `unit`.
template <class T>
std::vector<T> through_unit_reshape(const Shape& from, const std::vector<T>& values, const Shape& to, T unit) {
  std::vector<T> kept;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1) kept.push_back(values[d]);
  std::vector<T> out;
  size_t k = 0;
  for (int64_t len : to) out.push_back(len == 1 ? unit : kept[k++]);
  return out;
}

inline const uint8_t* bytes_of(const Tensor& t) { return static_cast<const uint8_t*>(t.raw()); }
inline uint8_t* mutable_bytes_of(Tensor& t) { return static_cast<uint8_t*>(t.mutable_raw()); }

// Output 0 takes input 0's bytes with the output's inferred shape (no copy: tensors are
// copy-on-write views).
inline void forward_input_bytes(ComputeContext& ctx) {
  Tensor& y = ctx.output(0);
  const Tensor& x = ctx.input(0);
  MONO_CHECK(x.numel() == y.numel() && x.dtype() == y.dtype(), "forwarding ", x.type().str(),
             " into ", y.type().str());
  y = x.reshaped(y.shape());
}

}  // namespace mono
