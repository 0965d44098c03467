// Softmax's knowledge that the code generator shares (softmax.cc): the axis rule, which
// depends on the opset.
#pragma once

#include <cstdint>

#include "compiler/ir/graph.h"

namespace mono {

// The softmax of a node as `outer` blocks of n x inner elements normalised over n. From opset
// 13 it runs along `axis` (default -1); before, the input is coerced to 2-D [prod(dims <
// axis), prod(dims >= axis)] (axis default 1), so inner = 1. Throws UserError on a bad axis.
struct SoftmaxLayout {
  int64_t outer = 1, n = 1, inner = 1;
};
SoftmaxLayout softmax_layout(const Node& node);
// The normalised axis the softmax of an opset >= 13 node runs along.
int64_t softmax_axis(const Node& node);

}  // namespace mono
