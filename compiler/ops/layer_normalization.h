// LayerNormalization's knowledge that the code generator shares (layer_normalization.cc).
#pragma once

#include <cstdint>

#include "compiler/ir/graph.h"

namespace mono {

// The first normalised axis of a node's X, in [0, rank): the statistics run over [axis, rank).
int64_t layer_norm_axis(const Node& node);
// Elements per normalised row: the product of X's dims from layer_norm_axis on.
int64_t layer_norm_row_length(const Node& node);

}  // namespace mono
