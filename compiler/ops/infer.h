// Shape inference, node evaluation and the IR verifier: the graph-level users of OpDef.
#pragma once

#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

struct InferOptions {
  // Outputs of nodes whose inputs are all known are computed at inference time when they
  // have at most this many elements: that is what resolves shape arithmetic
  // (Shape -> Gather -> Concat -> Reshape) without changing the graph.
  int64_t max_known_elements = 1 << 16;
};

// Sets the type of every node output, in order. Throws UserError naming the node at fault.
void infer_shapes(Graph& graph, const InferOptions& options = {});

// Infers one node's output types from its inputs (`known[i]`: input i's value if known).
void infer_node(Node& node, const std::vector<const Tensor*>& known);

// The value of a Shape node, from its input's static type (start/end attributes applied).
Tensor shape_node_value(const Node& shape_node);

// Runs the CPU reference of one node on `inputs` (null for an absent optional input).
// Output types must already be inferred; returns one tensor per output (empty if unwanted).
std::vector<Tensor> evaluate_node(const Node& node, const std::vector<const Tensor*>& inputs);

// Checks attributes against the op's spec (names, types, required ones) and the input and
// output counts. Throws UserError.
void check_node_signature(const Node& node);

// Checks the whole graph: signatures, topological order, every value defined once, constant
// data matching its type, and every node's output types equal to a fresh inference.
// Throws InternalError when `internal` (after a pass: a bug of ours), else UserError.
void verify_graph(const Graph& graph, bool internal);

}  // namespace mono
