// DepthToSpace: the channels of x rearranged into blocks of blocksize x blocksize pixels
// (PixelShuffle), in DCR (default) or CRD order. Code generation sees a Reshape, a Transpose
// and a Reshape (passes/decompose.cc).
#include "compiler/ops/depth_space.h"

namespace mono {

static void infer_depth_to_space(InferContext& ctx) { infer_depth_space(ctx, true); }
static void compute_depth_to_space(ComputeContext& ctx) { compute_depth_space(ctx, true); }

const OpDef& op_def_DepthToSpace() {
  static const OpDef def{"DepthToSpace", 1, 1, 1, 1, {attr_required("blocksize", AttrType::kInt), attr("mode", "DCR")},
                         infer_depth_to_space, compute_depth_to_space};
  return def;
}

}  // namespace mono
