// The convolutional pieces of the random graphs (generator.cc): 1-D and 2-D convolutions, and
// the blocks of the common CNNs (DenseNet's dense block, MobileNetV2's inverted residuals,
// squeeze-and-excitation, inference BatchNormalization), built on a GraphWriter.
#pragma once

#include "tests/difftest/graph_writer.h"

namespace mono::difftest {

// An inference BatchNormalization of v: scale, bias and mean random, variances 1 to 3.
Val batch_norm(GraphWriter& w, Val v);
// A dense block (DenseNet) on v: channel counts multiples of 8, so it goes channels-last.
bool dense_block(GraphWriter& w, Val v);
// One or two inverted residual blocks (MobileNetV2) on v, channels-last with their depthwise Convs.
bool inverted_residual(GraphWriter& w, Val v);
// Squeeze-and-excitation gating v (batch 1; false otherwise).
bool squeeze_excite(GraphWriter& w, Val v);
// A Conv1d on one of the rank-3 values (false where none fits).
bool conv1d(GraphWriter& w);
// A 2-D Conv on v [N, C, H, W] (H, W >= 3), or one of the blocks above.
bool conv2d(GraphWriter& w, Val v);

}  // namespace mono::difftest
