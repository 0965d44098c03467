// Sliding-window geometry shared by Conv, MaxPool and AveragePool: the output-size rule with
// pads, strides, dilations, ceil_mode and auto_pad, and the pooling loops.
#pragma once

#include <vector>

#include "compiler/ops/op.h"

namespace mono {

// Per spatial axis (all vectors have one entry per spatial axis).
struct WindowGeometry {
  std::vector<int64_t> in;      // input extent
  std::vector<int64_t> kernel;  // kernel extent (undilated)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;  // output extent

  size_t rank() const { return in.size(); }
  int64_t out_numel() const;
  int64_t in_numel() const;
  int64_t kernel_numel() const;
};

// Resolves the geometry of an op with attributes auto_pad, pads, strides and dilations (each
// optional, ONNX defaults) over the spatial extents `in` with kernel `kernel`. `ceil_mode`
// rounds the output size up (explicit pads or VALID); a window must then still start inside
// the left-padded input. SAME_UPPER/SAME_LOWER give ceil(in / stride) outputs, the odd pad at
// the end (UPPER) or the start (LOWER). Fails (naming the op's node) on malformed attributes
// or an empty output.
WindowGeometry window_geometry(const AttrReader& ctx, const std::vector<int64_t>& in,
                               const std::vector<int64_t>& kernel, bool ceil_mode);

// The pooling ops' geometry: kernel_shape from the attribute, spatial extents from X's shape
// (N x C x spatial...), ceil_mode from its attribute.
WindowGeometry pool_geometry(const AttrReader& ctx, const Shape& x_shape);
// A MaxPool / AveragePool node's geometry, and a Conv node's (kernel from W, conv.cc).
WindowGeometry pool_geometry(const Node& node);
WindowGeometry conv_geometry(const Node& node);
// A Conv whose kernel is 1 along every spatial axis, with unit strides and no padding: each
// output pixel reads its own input pixel (a matrix product over the channels).
bool pointwise_conv(const Node& node);

// An attribute of Mono's own on Conv and MaxPool (the channels_last pass sets it; a model that
// sets it is refused at loading): 1 = X and Y are [N][H][W][C] (and a Conv's W [M][KH][KW][C/group]),
// 2-D, a Conv with one group or depthwise (group = C = M), a MaxPool without Indices.
inline constexpr const char* kChannelsLastAttr = "mono.channels_last";
inline const std::vector<int64_t> kNchwToNhwc = {0, 2, 3, 1};
inline const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2};
// True for a Conv or MaxPool node in the channels-last layout.
bool channels_last_layout(const Node& node);
// The CPU reference of a channels-last node: `standard` (the op's NCHW computation) run on its
// 4-D inputs permuted to NCHW (other inputs, a bias, as they are), the output permuted back.
void compute_channels_last(ComputeContext& ctx, void (*standard)(ComputeContext&));

// For the window of each output position (row-major over the output), the valid input
// positions (row-major flat spatial offsets into one input plane), in CSR form:
// offsets[start[o] .. start[o+1]) belong to output o, in row-major window order.
struct WindowTable {
  std::vector<int64_t> start;
  std::vector<int64_t> offsets;
  // Per output: the window size counting padding (but not positions past the end padding).
  std::vector<int64_t> padded_count;
};
WindowTable window_table(const WindowGeometry& g);

}  // namespace mono
