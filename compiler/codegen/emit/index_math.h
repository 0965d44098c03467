// Index arithmetic over static shapes, as CUDA statements and expressions.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono::emit {

// Statements that decompose the flat index `flat` (< numel(shape)) into per-axis variables
// prefix0 .. prefix{rank-1}; 32-bit arithmetic where the shape allows it.
std::string decompose(const std::string& flat, const Shape& shape, const std::string& prefix);
// The index variables prefix0 .. prefix{rank-1}.
std::vector<std::string> index_vars(const std::string& prefix, int64_t rank);
// The linear offset into a tensor of shape `in` broadcast against an output whose axis d has
// the index expression out_idx[d] (numpy broadcasting: `in` aligns with the last axes).
std::string broadcast_offset(const Shape& in, const std::vector<std::string>& out_idx);
// The element offset of the matrix a batched MatMul operand of shape `s` ([.., rows, cols],
// `mat` = rows x cols elements) reads for the output batch index `batch_idx` (its batch axes
// broadcast against the output's): "0" for a 2-D operand.
std::string batch_matrix_offset(const Shape& s, const std::vector<std::string>& batch_idx, int64_t mat);
// The row-major offset of the index expressions `idx` (one per axis) into `shape`.
std::string linear(const std::vector<std::string>& idx, const Shape& shape);

}  // namespace mono::emit
