// The CPU reference: runs a graph node by node with every op's reference implementation.
// It is the oracle every other backend is checked against.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

struct RunStats {
  double seconds = 0;
  size_t peak_bytes = 0;  // largest total of live intermediate tensors
};

// Runs `graph` on `inputs` (one per graph input, in order; types must match) and returns one
// tensor per graph output. Intermediates are freed after their last use.
// `observe`, if set, sees every node output as it is computed (calibration, debugging).
using Observer = std::function<void(const Value*, const Tensor&)>;
std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs,
                                  RunStats* stats = nullptr, const Observer& observe = nullptr);

// Largest |x| of every float value (inputs, constants and node outputs) on these inputs; with
// `nonnegative`, also the float values that were never negative (nor NaN) on them.
std::map<const Value*, float> float_ranges(const Graph& graph, const std::vector<Tensor>& inputs,
                                          std::set<const Value*>* nonnegative = nullptr);

}  // namespace mono
