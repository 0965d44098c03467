// SpaceToDepth: blocks of blocksize x blocksize pixels of x moved into its channels. Code
// generation sees a Reshape, a Transpose and a Reshape (passes/decompose.cc).
#include "compiler/ops/depth_space.h"

namespace mono {

static void infer_space_to_depth(InferContext& ctx) { infer_depth_space(ctx, false); }
static void compute_space_to_depth(ComputeContext& ctx) { compute_depth_space(ctx, false); }

const OpDef& op_def_SpaceToDepth() {
  static const OpDef def{"SpaceToDepth", 1, 1, 1, 1, {attr_required("blocksize", AttrType::kInt)},
                         infer_space_to_depth, compute_space_to_depth};
  return def;
}

}  // namespace mono
