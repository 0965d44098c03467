// The anchors of pointwise groups that are not elementwise: statements computing `v`, the
// anchor's element at output index o0..o{rank-1} (pointwise_ops.cc, one function per op family).
#pragma once

#include <functional>
#include <string>

#include "compiler/codegen/emit/expressions.h"
#include "compiler/ops/pool.h"

namespace mono::emit {

// The compile-time value of input i of `n` (null when absent or not constant).
const Tensor* const_input(const KernelPlan& plan, const Node& n, int i);

// Statements computing `v`, the anchor's element at output index o0..o{rank-1}, for any anchor
// of a pointwise group (pointwise.cc): the op's function below, or the elementwise op table.
std::string anchor_code(Expressions& ex, const KernelPlan& plan, const Node& n);
// Data movement: Slice, Concat, Gather, GatherElements (`ct`: the compute type).
std::string slice_code(Expressions& ex, const Node& n, const std::string& ct);
std::string concat_code(Expressions& ex, const Node& n, const std::string& ct);
// A Concat's choice of input at output index o0..o{rank-1}: for each non-empty input i,
// "if (o{axis} < end) " followed by take(i, offset of the element in input i) (an else-if chain).
std::string concat_choice(const Node& n, const std::function<std::string(int, const std::string&)>& take);
std::string gather_code(Expressions& ex, const Node& n, const std::string& ct);
std::string gather_elements_code(Expressions& ex, const Node& n, const std::string& ct);
// Windows: MaxPool / AveragePool (either layout), grouped or depthwise Conv. (GlobalAveragePool
// has functions of its own, one or several warps per output: pointwise.cc.)
std::string pool_code(Expressions& ex, const Node& n);
// A channels-last 2-D window over x [N][H][W][C] at output (o0, o1, o2, o3): the two unrolled
// loop heads over its positions, each position's number `w` and whether it is inside, in[w]
// (the caller closes both loops); and the offset a position reads (element 0 outside).
std::string nhwc_window_loops(const WindowGeometry& geo, const Shape& xs, const std::string& w);
std::string nhwc_window_offset(const Shape& xs, const std::string& w);
std::string direct_conv_code(Expressions& ex, const Node& n);
// A channels-last depthwise Conv's weight at window position `w` (0..KH*KW-1) and channel
// `channel`, as a float expression (W packed [KH*KW][C]).
std::string depthwise_weight(Expressions& ex, const Node& n, const std::string& w, const std::string& channel);
// Reductions along axes: ReduceSum / Mean / Max, Softmax along a non-last axis.
std::string reduce_code(Expressions& ex, const Node& n, const std::string& ct);
std::string softmax_axis_code(Expressions& ex, const Node& n);
// CumSum: each element sums its prefix (or suffix, reverse) along the axis, exclusive or not.
std::string cum_sum_code(Expressions& ex, const Node& n, const std::string& ct);
// BatchNormalization (inference form).
std::string batch_norm_code(Expressions& ex, const Node& n);
// Index rewrites (pointwise_index_ops.cc): Trilu, Tile, Pad, ArgMax / ArgMin along an axis, ScatterND.
std::string trilu_code(Expressions& ex, const Node& n, const std::string& ct);
std::string tile_code(Expressions& ex, const Node& n, const std::string& ct);
std::string pad_code(Expressions& ex, const Node& n, const std::string& ct);
std::string arg_extremum_code(Expressions& ex, const Node& n);
// ScatterND: each element takes (or combines) the updates of the index rows naming its slice.
std::string scatter_nd_code(Expressions& ex, const Node& n, const std::string& ct);

}  // namespace mono::emit
