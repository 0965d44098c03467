// Simplification passes: each is a function from IR to IR in the file named after it, and
// returns whether it changed the graph. The pipeline (pipeline.cc) runs them in order.
#pragma once

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

// Drops Identity, inference-mode Dropout and Cast to the same type.
bool remove_identity(Graph& g);
// Replaces Shape of a static tensor with a constant (constant_folding then folds the chains
// built on it: Gather, Concat, Unsqueeze, Cast, Equal, Where...).
bool fold_shape_arithmetic(Graph& g);
// Evaluates nodes whose inputs are all constants (and Constant nodes) into constants.
bool constant_folding(Graph& g);
// Removes operations that constant masks make no-ops: Where on a uniform condition, adding
// zeros, multiplying by ones, Expand/Reshape to the same shape, identity Transpose.
bool constant_masks(Graph& g);
// One spelling per operation: Flatten -> Reshape, spatial ReduceMean -> GlobalAveragePool.
bool canonicalize(Graph& g);
// Rewrites ops without code generation of their own (LogSoftmax, GlobalMaxPool,
// InstanceNormalization, DepthToSpace, SpaceToDepth, Resize) into ops that have it.
bool decompose(Graph& g);
// Collapses Reshape chains, Transpose chains and unit-axis Reshape/Transpose/Reshape
// sandwiches into one Reshape or Transpose.
bool fold_reshape_transpose(Graph& g);
// Folds an inference BatchNormalization into the Conv that feeds it.
bool fold_batch_norm(Graph& g);
// Split(Gemm(a, W)) along the last axis, W constant -> one Gemm per part with W cut (GPT-2's
// fused Q/K/V projection becomes three, each storing straight into its own layout).
bool split_gemm(Graph& g);
// Conv with strides equal to its kernel, no padding, dilation 1, one group (a patch embedding)
// -> Reshape/Transpose of the input into patches and one Gemm (patch_conv.cc).
bool patch_conv(Graph& g);
// Regions of 2-D convolutions and the elementwise nodes between them -> NHWC activations:
// 1x1 convolutions as Gemm, the others as Conv with mono.channels_last (channels_last.cc).
bool channels_last(Graph& g);
// Mul(x, Sigmoid(x)) (SiLU) and Mul(x, Sigmoid(c*x)) -> Swish (recognize_swish.cc).
bool recognize_swish(Graph& g);
// x*0.5*(1+erf(x/sqrt2)) and 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))) -> Gelu.
bool recognize_gelu(Graph& g);
// (x-mean)/sqrt(var+eps)*gamma+beta built from ReduceMean/Sub/Pow/Sqrt/Div -> LayerNormalization.
bool recognize_layer_norm(Graph& g);
// Removes nodes and constants nothing uses.
bool dead_code(Graph& g);

// Stores every float tensor in `to` (constants converted, inputs and outputs retyped).
void convert_float_precision(Graph& g, DType to);

struct SimplifyOptions {
  bool verify_each = true;          // run the IR verifier after every pass that changed the graph
  std::ostream* dump = nullptr;     // if set, print the IR after every pass that changed it
  int max_rounds = 4;               // the pass list repeats until nothing changes
  std::set<std::string> skip;       // passes not to run (A/B of one pass; must name pipeline passes)
};

struct PassStat {
  std::string pass;
  int round = 0;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  double ms = 0;
  bool changed = false;
};

// One pass of the simplification pipeline: its name (as dumps, PassStat and
// run_pass_by_name spell it) and its function.
struct PipelinePass {
  const char* name;
  bool (*run)(Graph&);
};

// The simplification pipeline, in order: what simplify() runs each round, and the only
// names run_pass_by_name() accepts. (convert_float_precision is not in it: it takes the
// target type and runs only when fp16 is asked for.)
const std::vector<PipelinePass>& simplification_pipeline();

// Runs the simplification pipeline; returns one entry per pass run.
std::vector<PassStat> simplify(Graph& g, const SimplifyOptions& options = {});

// Runs one pass of the pipeline by name (for golden tests and tools); false if no pass has
// that name.
bool run_pass_by_name(const std::string& name, Graph& g, bool* changed);

}  // namespace mono
