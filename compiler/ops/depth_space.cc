#include "compiler/ops/depth_space.h"

#include <cstring>

#include "compiler/ops/shape_util.h"

namespace mono {

DepthSpaceSteps depth_space_steps(const AttrReader& ctx, bool to_space, const Shape& in) {
  if (in.size() != 4) ctx.fail(str_cat("input must be N x C x H x W, got ", shape_str(in)));
  const int64_t b = ctx.attr_int("blocksize");
  if (b < 1) ctx.fail(str_cat("blocksize must be >= 1, got ", b));
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3];
  DepthSpaceSteps s;
  if (to_space) {
    if (C % (b * b)) ctx.fail(str_cat("channels ", C, " are not a multiple of blocksize^2 = ", b * b));
    const std::string mode = ctx.attr_string("mode");
    if (mode == "DCR") {
      s.split = {N, b, b, C / (b * b), H, W};
      s.perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      s.split = {N, C / (b * b), b, b, H, W};
      s.perm = {0, 1, 4, 2, 5, 3};
    } else {
      ctx.fail(str_cat("mode '", mode, "' is not DCR or CRD"));
    }
    s.out = {N, C / (b * b), H * b, W * b};
  } else {
    if (H % b || W % b) ctx.fail(str_cat("H x W = ", H, " x ", W, " is not divisible by blocksize ", b));
    s.split = {N, C, H / b, b, W / b, b};
    s.perm = {0, 3, 5, 1, 2, 4};
    s.out = {N, C * b * b, H / b, W / b};
  }
  return s;
}

void infer_depth_space(InferContext& ctx, bool to_space) {
  ctx.set_output(0, ctx.input_dtype(0), depth_space_steps(ctx, to_space, ctx.input_shape(0)).out);
}

void compute_depth_space(ComputeContext& ctx, bool to_space) {
  const Tensor& x = ctx.input(0);
  const DepthSpaceSteps s = depth_space_steps(ctx, to_space, x.shape());
  // Output element e, in the transposed 6-D order, reads the split view at the permuted index.
  Shape tshape(6);
  for (int d = 0; d < 6; ++d) tshape[d] = s.split[s.perm[d]];
  std::vector<int64_t> stride(6, 1);
  for (int d = 4; d >= 0; --d) stride[d] = stride[d + 1] * s.split[d + 1];
  const size_t es = dtype_size(x.dtype());
  const uint8_t* in = bytes_of(x);
  uint8_t* out = mutable_bytes_of(ctx.output(0));
  std::vector<int64_t> idx(6, 0);
  for (int64_t e = 0, n = x.numel(); e < n; ++e) {
    int64_t src = 0;
    for (int d = 0; d < 6; ++d) src += idx[d] * stride[s.perm[d]];
    std::memcpy(out + e * es, in + src * es, es);
    for (int d = 6; d-- > 0;) {
      if (++idx[d] < tshape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace mono
