// Transpose's knowledge that the code generator shares (transpose.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

// The node's permutation: output axis d is input axis perm[d]; `perm` defaults to reversing
// the axes.
std::vector<int64_t> transpose_perm(const Node& node);

// Shape s permuted: axis d of the result is axis perm[d] of s.
Shape permute_shape(const Shape& s, const std::vector<int64_t>& perm);

// x with its axes permuted: output axis d is input axis perm[d] (a copy, x's dtype).
Tensor permute(const Tensor& x, const std::vector<int64_t>& perm);

}  // namespace mono
