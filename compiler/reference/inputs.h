// Deterministic inputs for running a model without test data: normal floats, zero integers,
// false bools (one generator, seed 0, drawn input by input). The same values for a graph and
// for the artifact built from it, so the CPU reference, calibration, mono-run and the
// worker's verification all see the same inputs.
#pragma once

#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

// One tensor per type, in order.
std::vector<Tensor> synthetic_inputs(const std::vector<TensorType>& types);

// For the graph's inputs.
std::vector<Tensor> synthetic_inputs(const Graph& g);

}  // namespace mono
