// DepthToSpace and SpaceToDepth as a Reshape, a Transpose and a Reshape: the one description
// their reference (depth_space.cc) and their decomposition (passes/decompose.cc) share.
#pragma once

#include <vector>

#include "compiler/ops/op.h"

namespace mono {

struct DepthSpaceSteps {
  Shape split;                // the 6-D view of the input
  std::vector<int64_t> perm;  // the transpose of that view
  Shape out;                  // the output shape
};

// For a DepthToSpace or SpaceToDepth node's attributes (blocksize; DepthToSpace's mode DCR,
// the default, or CRD) and its N x C x H x W input shape. Fails on shapes the block does not
// divide.
DepthSpaceSteps depth_space_steps(const AttrReader& ctx, bool to_space, const Shape& in);
void infer_depth_space(InferContext& ctx, bool to_space);
void compute_depth_space(ComputeContext& ctx, bool to_space);

}  // namespace mono
