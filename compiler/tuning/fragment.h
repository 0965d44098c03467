// Fragments: a tuning group (or a whole model) cut out of its model as a standalone graph
// without weights, the payload of a tuning job. The worker rebuilds from it a group with the
// same signature (signature.h) and compiles and times it with candidate schedules.
//
// The payload is a JSON object:
//   {"ir": "graph ... { ... }",          the sub-graph, float constants over 16 elements
//                                        elided (`<N elements>`; integer ones in full)
//    "precision": "fp16",                "fp32" or "fp16"
//    "ranges": {"x": 3.5, ...},          calibrated max |x| of the fragment's float values
//    "keep_fp32": ["y", ...],            fp16: values the model keeps in fp32 besides those
//                                        the ranges put there (optional, default none)
//    "arena_inputs": ["x", ...],         inputs that are activations in the model's arena: the
//                                        fragment's kernel copies them there first, so that its
//                                        group reads them as in the model (tensor maps, wgmma)
//                                        (optional, default none)
//    "sms": 132, "threads": 256, "blocks_per_sm": 1, "smem_limit": 0,
//    "inline_groups": 1}                 the model's kernel: group functions inlined (1) or
//                                        not (0) (optional)
//
// The sub-graph holds the nodes given, plus the view nodes (Reshape, Squeeze, Unsqueeze,
// Flatten, Identity, Dropout: what the planner aliases) they read through, down to the value
// that owns the bytes, so that operands keep their kind (a view of a weight stays a constant
// operand) and epilogues read through views stay fused. Values read from outside become
// graph inputs of the same type (or stay constants); values produced inside and used outside
// (or graph outputs) become graph outputs. Names of values and nodes are kept, so ranges
// travel by value name.
//
// The weights are made up on the worker (ParseOptions::fill_elided): a group's signature,
// and so its best schedule, does not depend on float constant values. No simplification pass
// may run on a loaded fragment: it would change the group.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"

namespace mono::tuning {

// The fragment of `nodes` (nodes of `graph`, which `plan` was built for with `options`).
nlohmann::json make_fragment(const Graph& graph, const KernelPlan& plan, const std::vector<const Node*>& nodes,
                             const PlanOptions& options);
// The fragment of one group of the plan: its anchor and epilogue nodes, and those of the
// squeeze it computes inside (Group::squeeze).
nlohmann::json make_fragment(const Graph& graph, const KernelPlan& plan, const Group& group,
                             const PlanOptions& options);
// The whole graph as a fragment (every node): for whole-kernel timing jobs.
nlohmann::json make_fragment(const Graph& graph, const KernelPlan& plan, const PlanOptions& options);

struct LoadedFragment {
  std::unique_ptr<Graph> graph;  // shapes inferred and verified; made-up weights
  // Precision, ranges, keep_fp32, context, inlining and prefetching from the payload,
  // signatures enabled (the options point into `graph`).
  PlanOptions options;
};

// Parses and checks a payload; elided weights are filled from `seed`. Throws UserError
// naming the field at fault on a malformed payload (missing key, wrong type, unknown value
// name, bad IR text).
LoadedFragment load_fragment(const nlohmann::json& j, uint64_t seed);

// The fragment's inputs for a run: synthetic_inputs (compiler/reference/inputs.h), made
// non-negative where its model's values were ("nonnegative": a mean square under a square
// root must not see negative values).
std::vector<Tensor> fragment_inputs(const LoadedFragment& f);

// The first group of the plan with this signature (Group::signature: the plan must be built
// with signatures enabled), or null.
const Group* find_group(const KernelPlan& plan, const std::string& signature);

}  // namespace mono::tuning
